package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// silentWatch is a watched target that says one thing and then nothing
// more, as a rollout that is stuck: no news for the rest of the wait.
func silentWatch(says string) target.Target {
	measure := func(context.Context) (health.Observation, error) { return health.Observation{}, errors.New(says) }
	return target.Target{
		Prober: probe.New("k8s", "k8s deployment/api -n shop", measure, nil),
		Watch: func(ctx context.Context, report func(health.Result, any)) error {
			report(health.Result{Time: time.Now(), Output: says}, nil)
			<-ctx.Done()
			return ctx.Err()
		},
	}
}

const stuck = `Waiting for deployment "api" rollout to finish: 0 of 1 updated replicas are available...`

// waitOn runs a wait of timeout on a silent target, its progress on a
// terminal or not, and returns what it printed.
func waitOn(t *testing.T, terminal bool, timeout time.Duration) string {
	t.Helper()
	var out bytes.Buffer
	// A terminal that the test reads: its size unknown (fd -1), 80 columns.
	p := &progress{w: &out, terminal: terminal, fd: -1, last: map[*probe.Prober]string{}}
	w := &waiter{probes: []target.Target{silentWatch(stuck)}, timeout: timeout, interval: time.Second, probeTimeout: time.Second, progress: p}
	if _, err := w.run(context.Background()); err == nil || !strings.Contains(err.Error(), "timed out after "+timeout.String()) {
		t.Fatalf("wait returned %v, want a timeout", err)
	}
	return out.String()
}

// On a terminal the live line's time goes on while a watched target says
// nothing new, rather than staying at "waiting 0s" for minutes.
func TestTheLiveLineIsRedrawnEverySecondWhileNothingChanges(t *testing.T) {
	t.Parallel()
	out := waitOn(t, true, 2900*time.Millisecond)
	for _, s := range []string{"0s", "1s", "2s"} {
		// Cut to the 79 columns of an 80-column terminal.
		line := "\r\x1b[Kwaiting " + s + ": 0 of 1 ready; k8s deployment/api -n shop: Waiting for deployment \"…"
		if !strings.Contains(out, line) {
			t.Errorf("no live line %q in:\n%q", line, out)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the live line is not cleared at the end:\n%q", out)
	}
}

// Off a terminal (a log), a line per change, and no more while nothing
// changes.
func TestOffATerminalAWaitThatHearsNothingNewPrintsNothingMore(t *testing.T) {
	t.Parallel()
	if out, want := waitOn(t, false, 1500*time.Millisecond), "waiting: k8s deployment/api -n shop: "+stuck+"\n"; out != want {
		t.Fatalf("progress\n%q\nwant\n%q", out, want)
	}
}

func TestTheLiveLineBeforeAnyNewsSaysOnlyTheCount(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, terminal: true, fd: -1, last: map[*probe.Prober]string{}}
	p.status(time.Second, 0, 2, "")
	if want := "\r\x1b[Kwaiting 1s: 0 of 2 ready"; out.String() != want {
		t.Fatalf("live line %q, want %q", out.String(), want)
	}
}
