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

// A notice's Event has a reason made of its key's words after the domain,
// in UpperCamelCase, never one of vitals's own, and a message with its key
// and data.
func TestANoticesEventSaysItsKeyAndData(t *testing.T) {
	for key, want := range map[string]string{
		"example.com/config-reloaded":        "ConfigReloaded",
		"canonical.com/charm/leader-elected": "CharmLeaderElected",
		"db/leader-elected":                  "DbLeaderElected",
		"config-reloaded":                    "ConfigReloaded",
		"v2-ready":                           "V2Ready",
		"check-failed":                       "NoticeCheckFailed",
		"example.com/restarted":              "NoticeRestarted",
		strings.Repeat("abc-", 60) + "d":     strings.Repeat("Abc", 42) + "Ab",
	} {
		if got := NoticeReason(key); got != want {
			t.Errorf("NoticeReason(%q) = %q, want %q", key, got, want)
		}
	}
	ev := health.Event{Type: health.EventNotice, Key: "example.com/config-reloaded", Data: map[string]string{"path": "/etc/app conf", "generation": "4"}}
	if got, want := noticeMessage(ev, false), `Notice "example.com/config-reloaded": generation=4 path="/etc/app conf"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := noticeMessage(ev, true), `Notice "example.com/config-reloaded"`; got != want {
		t.Errorf("withheld: got %q, want %q", got, want)
	}
	ev.Data = nil
	if got, want := noticeMessage(ev, false), `Notice "example.com/config-reloaded"`; got != want {
		t.Errorf("no data: got %q, want %q", got, want)
	}
}
