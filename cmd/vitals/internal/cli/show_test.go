package cli

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// A probe shown is one of its own kind and name, its name and every run's
// message and error with the secrets hidden; the error still unwraps to the
// original's (a deadline stays a deadline), and closing it closes the
// original.
func TestAShownProbeHidesWhatItsProbeSaysAndClosesIt(t *testing.T) {
	rd := redact.New("hunter22")
	runs, closed := 0, 0
	measure := func(context.Context) (health.Observation, error) {
		runs++
		if runs == 1 {
			return health.Observation{Message: "logged in with hunter22"}, nil
		}
		return health.Observation{Message: "seen hunter22"}, fmt.Errorf("login with hunter22: %w", context.DeadlineExceeded)
	}
	done := errors.New("closed")
	original := probe.New("tcp", "tcp app:hunter22@db:5432", measure, func() error { closed++; return done })
	s := show(target.Target{Prober: original}, rd)
	if s.Kind() != "tcp" || s.String() != "tcp app:xxxxx@db:5432" || s.Watch != nil {
		t.Fatalf("shown as %s %q, watched %v", s.Kind(), s, s.Watch != nil)
	}
	if obs, err := s.Measure(context.Background()); err != nil || obs.Message != "logged in with xxxxx" {
		t.Errorf("first run: %q, %v", obs.Message, err)
	}
	obs, err := s.Measure(context.Background())
	if obs.Message != "seen xxxxx" || err == nil || err.Error() != "login with xxxxx: context deadline exceeded" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second run: %q, %v", obs.Message, err)
	}
	if err := s.Check(context.Background()); err == nil || err.Error() != "login with xxxxx: context deadline exceeded" {
		t.Errorf("Check: %v", err)
	}
	if err := s.Close(); err != done || closed != 1 {
		t.Errorf("Close: %v, the original closed %d times", err, closed)
	}
}

// A watched target shown is watched still, what each report says and why
// it can never pass hidden alike.
func TestAShownWatchedTargetHidesWhatItsWatchReports(t *testing.T) {
	rd := redact.New("hunter22")
	never := errors.New("job failed: token hunter22 refused")
	watched := target.Target{
		Prober: probe.New("k8s", "k8s job/hunter22", func(context.Context) (health.Observation, error) { return health.Observation{}, nil }, nil),
		Watch: func(_ context.Context, report func(health.Result, any)) error {
			report(health.Result{Time: time.Now(), Output: "pod hunter22 pending"},
				struct {
					Names []string `json:"names"`
					Ready bool     `json:"ready"`
				}{[]string{"web", "hunter22-0"}, false})
			return never
		},
	}
	s := show(watched, rd)
	if s.Watch == nil || s.String() != "k8s job/xxxxx" {
		t.Fatalf("shown as %q, watched %v", s, s.Watch != nil)
	}
	var said []string
	var found []any
	err := s.Watch(context.Background(), func(r health.Result, f any) { said, found = append(said, r.Output), append(found, f) })
	if len(said) != 1 || said[0] != "pod xxxxx pending" {
		t.Errorf("reports %q", said)
	}
	want := map[string]any{"names": []any{"web", "xxxxx-0"}, "ready": false}
	if len(found) != 1 || !reflect.DeepEqual(found[0], want) {
		t.Errorf("found %#v, want %#v", found, want)
	}
	if err == nil || err.Error() != "job failed: token xxxxx refused" || !errors.Is(err, never) {
		t.Errorf("Watch: %v", err)
	}
}
