package supervise

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
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
	checks := &startOvers{}
	spec := Spec{Service: config.Service{StopTimeout: 10 * time.Second, BackoffInitial: 50 * time.Millisecond}, Checks: checks}
	sv, ev, ready := workload(t, spec, "sleep")
	first := workloadtest.WaitPID(t, ready)
	os.Remove(ready)
	if run, running := sv.Current(); run != 0 || !running {
		t.Fatalf("Current() = %d, %v; want run 0, running", run, running)
	}
	if sv.Restart("check ui failed", 1, Check, 0) {
		t.Fatal("a restart of run 1 while run 0 runs was taken")
	}
	if !sv.Restart("check ui failed", 0, Check, 0) {
		t.Fatal("a restart of the running run was refused")
	}
	second := workloadtest.WaitPID(t, ready)
	if second == first {
		t.Fatal("the same pid runs after the restart")
	}
	if run, running := sv.Current(); run != 1 || !running {
		t.Fatalf("Current() = %d, %v; want run 1, running", run, running)
	}
	if sv.Restart("check ui failed", 0, Check, 0) {
		t.Fatal("a second restart for run 0 was taken after run 1 started: once per failure")
	}
	got := ev.list()
	if len(got) != 3 || got[1].Type != health.EventServiceExited || got[1].Reason != "check ui failed" ||
		got[1].Signal != "SIGTERM" || got[2].Type != health.EventServiceStarted || got[2].Restarts != 1 || got[2].PID != second {
		t.Fatalf("events %+v; want started, exited (check ui failed, SIGTERM), started (restart 1)", got)
	}
	got2 := checks.list()
	if len(got2) != 2 || !strings.HasPrefix(got2[0], "pause: ") || !strings.Contains(got2[0], "exited (check ui failed): restarting in") ||
		got2[1] != fmt.Sprintf("reset: %s started again (restart 1, pid %d)", sv.Name(), second) {
		t.Fatalf("the checks were told %q; want paused when it exited, reset once it runs again", got2)
	}
}

// startOvers keeps what the supervisor told the checks.
type startOvers struct {
	mu  sync.Mutex
	all []string
}

func (c *startOvers) Pause(reason string) { c.add("pause: " + reason) }
func (c *startOvers) Reset(reason string) { c.add("reset: " + reason) }

func (c *startOvers) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, s)
}

func (c *startOvers) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.all...)
}

func TestARestartByHandSkipsTheBackoff(t *testing.T) {
	sv, ev, ready := workload(t, Spec{Service: config.Service{StopTimeout: 10 * time.Second, BackoffInitial: time.Hour, BackoffMax: time.Hour}}, "sleep")
	workloadtest.WaitPID(t, ready)
	os.Remove(ready)
	if !sv.Restart("restart requested", 0, Hand, 0) {
		t.Fatal("refused")
	}
	workloadtest.WaitPID(t, ready) // not an hour later
	if got := ev.list(); got[1].Reason != "restart requested" {
		t.Fatalf("events %+v", got)
	}
}

func TestStopForSaysWhyAndAStopDuringTheBackoffEndsIt(t *testing.T) {
	sv, ev, ready := workload(t, Spec{Service: config.Service{StopTimeout: 10 * time.Second}}, "sleep")
	workloadtest.WaitPID(t, ready)
	sv.StopFor("check ui failed", 0)
	done(t, sv)
	if got := ev.list(); got[len(got)-1].Reason != "check ui failed" {
		t.Fatalf("events %+v", got)
	}
	sv, ev, _ = workload(t, Spec{Service: config.Service{Restart: config.RestartAlways, BackoffInitial: time.Hour, BackoffMax: time.Hour}}, "exit", "0")
	waitFor(t, "the first exit", func() bool { return len(ev.list()) == 2 })
	if _, running := sv.Current(); running {
		t.Fatal("Current says running during the backoff")
	}
	if sv.Restart("check ui failed", 0, Check, 0) {
		t.Fatal("a restart during the backoff was taken")
	}
	sv.Stop()
	done(t, sv) // not an hour later
	if n := len(ev.list()); n != 2 {
		t.Fatalf("%d events; want no start after a stop during the backoff", n)
	}
}

func TestTheOutputOfEveryRunGoesThroughCopyAndIsPassedOnBeforeItsExitIsTold(t *testing.T) {
	var out, errs vitalstest.Buffer
	var mu sync.Mutex
	streams := map[string]int{}
	spec := Spec{Service: config.Service{Restart: config.RestartOnFailure, BackoffInitial: time.Millisecond}, Output: Output{Stdout: &out, Stderr: &errs,
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

func TestOnceFinishingTheWorkloadIsNotRestarted(t *testing.T) {
	sv, ev, ready := workload(t, Spec{Service: config.Service{Restart: config.RestartAlways, BackoffInitial: time.Millisecond}}, "sleep")
	pid := workloadtest.WaitPID(t, ready)
	sv.Finishing()
	if run, running := sv.Current(); running {
		t.Fatalf("Current() = %d, running, once finishing", run)
	}
	if sv.Restart("restart requested", 0, Hand, 0) {
		t.Fatal("a restart was taken once finishing")
	}
	syscall.Kill(pid, syscall.SIGKILL) // a crash during the drain
	done(t, sv)
	if got := ev.list(); len(got) != 2 || sv.ExitCode() != 137 {
		t.Fatalf("events %+v, code %d; want it left dead, 137", got, sv.ExitCode())
	}
}

func TestARunsOutputIsPassedOnBeforeItsExitIsTold(t *testing.T) {
	t.Setenv(workloadtest.Env, "1")
	var out vitalstest.Buffer
	var atExit []string
	emit := func(e health.Event) {
		if e.Type == health.EventServiceExited {
			atExit = append(atExit, out.String())
		}
	}
	reaper := NewReaper(false)
	t.Cleanup(reaper.Close)
	spec := Spec{Service: config.Service{Command: []string{os.Args[0], "print", filepath.Join(t.TempDir(), "ready"), "3"}}, Output: Output{Stdout: &out, Stderr: io.Discard}}
	sv, err := Start(spec, emit, slog.New(slog.DiscardHandler), reaper)
	if err != nil {
		t.Fatal(err)
	}
	done(t, sv)
	if len(atExit) != 1 || atExit[0] != "to stdout\n" {
		t.Fatalf("at the exit event the output was %q, want the run's line", atExit)
	}
}
