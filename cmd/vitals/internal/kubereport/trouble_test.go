package kubereport

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vitals-dev/vitals/health"
)

func TestTroubleIsSaidOncePerCauseAndOnceWhenItWorksAgain(t *testing.T) {
	var logs bytes.Buffer
	r := &Reporter{logger: slog.New(slog.NewTextHandler(&logs, nil))}
	tr := r.newTrouble("write the pod condition x/y", "trying again", "the pod condition x/y is written")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods/status"}, "app", errors.New("no rights"))
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	for _, step := range []func(){
		func() { tr.failed(forbidden) },
		func() { tr.failed(forbidden) }, // the same cause: nothing more
		func() { tr.failed(refused) },   // a new cause: said
		func() { tr.failed(refused) },
		func() { tr.ok() },
		func() { tr.ok() },
		func() { tr.failed(forbidden) }, // failing again after it worked: said
	} {
		step()
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	want := []string{"forbidden", "connection refused", "is written again", "forbidden"}
	if len(lines) != len(want) {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), len(want), logs.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %s\nwant it to say %q", i, lines[i], w)
		}
	}
}

func TestAnEventSaysWhyUnlessDetailsAreWithheld(t *testing.T) {
	ev := health.Event{Type: health.EventCheckFailed, Check: "db", Level: health.Ready, Output: "HTTP probe failed with statuscode: 503"}
	if got, want := checkMessage(ev, "failed", false), `Readiness check "db" failed: HTTP probe failed with statuscode: 503`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := checkMessage(ev, "failed", true), `Readiness check "db" failed`; got != want {
		t.Errorf("withheld: got %q, want %q", got, want)
	}
}
