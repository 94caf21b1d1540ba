package supervise

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// waitFor polls cond; the wait is a guard only.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
	}
}

func TestRestartStopsTheRunAndStartsItAgainStartingTheChecksOver(t *testing.T) {
	var mu sync.Mutex
	var resets []string
	spec := Spec{StopTimeout: 10 * time.Second, BackoffInitial: 50 * time.Millisecond, Reset: func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		resets = append(resets, reason)
	}}
	sv, ev, ready := workload(t, spec, "sleep")
	first := waitReady(t, ready)
	os.Remove(ready)
	if run, running := sv.Current(); run != 0 || !running {
		t.Fatalf("Current() = %d, %v; want run 0, running", run, running)
	}
	if sv.Restart("check ui failed", 1, false) {
		t.Fatal("a restart of run 1 while run 0 runs was taken")
	}
	if !sv.Restart("check ui failed", 0, false) {
		t.Fatal("a restart of the running run was refused")
	}
	second := waitReady(t, ready)
	if second == first {
		t.Fatal("the same pid runs after the restart")
	}
	if run, running := sv.Current(); run != 1 || !running {
		t.Fatalf("Current() = %d, %v; want run 1, running", run, running)
	}
	if sv.Restart("check ui failed", 0, false) {
		t.Fatal("a second restart for run 0 was taken after run 1 started: once per failure")
	}
	got := ev.list()
	if len(got) != 3 || got[1].Type != health.EventServiceExited || got[1].Reason != "check ui failed" ||
		got[1].Signal != "SIGTERM" || got[2].Type != health.EventServiceStarted || got[2].Restarts != 1 || got[2].PID != second {
		t.Fatalf("events %+v; want started, exited (check ui failed, SIGTERM), started (restart 1)", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(resets) != 2 || !strings.Contains(resets[0], "exited (check ui failed): restarting in") ||
		!strings.Contains(resets[1], "starts again (restart 1)") {
		t.Fatalf("resets %q; want one when it exited, one when it starts again", resets)
	}
}

func TestARestartByHandSkipsTheBackoff(t *testing.T) {
	sv, ev, ready := workload(t, Spec{StopTimeout: 10 * time.Second, BackoffInitial: time.Hour, BackoffMax: time.Hour}, "sleep")
	waitReady(t, ready)
	os.Remove(ready)
	if !sv.Restart("restart requested", 0, true) {
		t.Fatal("refused")
	}
	waitReady(t, ready) // not an hour later
	if got := ev.list(); got[1].Reason != "restart requested" {
		t.Fatalf("events %+v", got)
	}
}

func TestStopForSaysWhyAndAStopDuringTheBackoffEndsIt(t *testing.T) {
	sv, ev, ready := workload(t, Spec{StopTimeout: 10 * time.Second}, "sleep")
	waitReady(t, ready)
	sv.StopFor("check ui failed")
	done(t, sv)
	if got := ev.list(); got[len(got)-1].Reason != "check ui failed" {
		t.Fatalf("events %+v", got)
	}
	sv, ev, _ = workload(t, Spec{Restart: Always, BackoffInitial: time.Hour, BackoffMax: time.Hour}, "exit", "0")
	waitFor(t, "the first exit", func() bool { return len(ev.list()) == 2 })
	if _, running := sv.Current(); running {
		t.Fatal("Current says running during the backoff")
	}
	if sv.Restart("check ui failed", 0, false) {
		t.Fatal("a restart during the backoff was taken")
	}
	sv.Stop()
	done(t, sv) // not an hour later
	if n := len(ev.list()); n != 2 {
		t.Fatalf("%d events; want no start after a stop during the backoff", n)
	}
}

// lockedBuffer is a bytes.Buffer for two copying goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestTheOutputOfEveryRunGoesThroughCopyAndIsPassedOnBeforeItsExitIsTold(t *testing.T) {
	var out, errs lockedBuffer
	var mu sync.Mutex
	streams := map[string]int{}
	spec := Spec{Restart: OnFailure, BackoffInitial: time.Millisecond, Output: Output{Stdout: &out, Stderr: &errs,
		Copy: func(dst io.Writer, src io.Reader, stream string) error {
			mu.Lock()
			streams[stream]++
			mu.Unlock()
			_, err := io.Copy(dst, src)
			return err
		}}}
	sv, ev, _ := workload(t, spec, "print", "3")
	waitFor(t, "three runs", func() bool { return len(ev.list()) >= 6 })
	sv.Stop()
	done(t, sv)
	runs := 0 // that printed: the last may have been stopped before it did
	for _, e := range ev.list() {
		if e.Type == health.EventServiceExited && e.ExitCode != nil && *e.ExitCode == 3 {
			runs++
		}
	}
	if got := strings.Count(out.String(), "to stdout\n"); got != runs {
		t.Errorf("stdout has %d lines from %d runs:\n%s", got, runs, out.String())
	}
	if got := strings.Count(errs.String(), "to stderr\n"); got != runs {
		t.Errorf("stderr has %d lines from %d runs:\n%s", got, runs, errs.String())
	}
	mu.Lock()
	defer mu.Unlock()
	starts := 0
	for _, e := range ev.list() {
		if e.Type == health.EventServiceStarted {
			starts++
		}
	}
	if streams["stdout"] != starts || streams["stderr"] != starts {
		t.Errorf("Copy calls %v; want one per stream for each of the %d runs: new pipes for each", streams, starts)
	}
}
