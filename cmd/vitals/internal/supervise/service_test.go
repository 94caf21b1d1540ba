package supervise

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
)

func init() { workloadtest.Main() }

type events struct {
	mu  sync.Mutex
	all []health.Event
}

func (e *events) emit(ev health.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev.Time = time.Now()
	e.all = append(e.all, ev)
}

func (e *events) list() []health.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]health.Event(nil), e.all...)
}

// workload starts this test binary as the workload doing what.
func workload(t *testing.T, spec Spec, what ...string) (*Supervisor, *events, string) {
	t.Helper()
	t.Setenv(workloadtest.Env, "1")
	ready := filepath.Join(t.TempDir(), "ready")
	spec.Command = append([]string{os.Args[0], what[0], ready}, what[1:]...)
	ev := &events{}
	reaper := NewReaper(false)
	t.Cleanup(reaper.Close)
	sv, err := Start(spec, ev.emit, slog.New(slog.NewTextHandler(io.Discard, nil)), reaper)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sv.Stop(); <-sv.Done() })
	return sv, ev, ready
}

// done waits for the supervisor to end; the wait is a guard only.
func done(t *testing.T, sv *Supervisor) {
	t.Helper()
	select {
	case <-sv.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the supervisor did not end within 20s")
	}
}

func TestTheExitCodeIsTheWorkloadsOr128PlusItsSignal(t *testing.T) {
	sv, ev, _ := workload(t, Spec{}, "exit", "3")
	done(t, sv)
	got := ev.list()
	if sv.ExitCode() != 3 || len(got) != 2 || got[0].Type != health.EventServiceStarted || got[1].Type != health.EventServiceExited ||
		got[1].ExitCode == nil || *got[1].ExitCode != 3 || got[1].Reason != "crash" || got[0].PID == 0 || got[1].PID != got[0].PID {
		t.Fatalf("code %d, events %+v", sv.ExitCode(), got)
	}
	if got[0].Service != filepath.Base(os.Args[0]) {
		t.Errorf("service %q, want the command's base name", got[0].Service)
	}
	sv, ev, _ = workload(t, Spec{}, "kill-self")
	done(t, sv)
	got = ev.list()
	if sv.ExitCode() != 137 || len(got) != 2 || got[1].Signal != "SIGKILL" || got[1].ExitCode != nil {
		t.Fatalf("code %d, events %+v; want 137 and SIGKILL", sv.ExitCode(), got)
	}
}

func TestStopSendsTheStopSignalThenSIGKILL(t *testing.T) {
	sv, ev, ready := workload(t, Spec{Service: config.Service{StopTimeout: 10 * time.Second}}, "sleep")
	workloadtest.WaitPID(t, ready)
	sv.Stop()
	done(t, sv)
	got := ev.list()
	if sv.ExitCode() != 128+int(syscall.SIGTERM) || got[len(got)-1].Reason != "stopping" || got[len(got)-1].Signal != "SIGTERM" {
		t.Fatalf("code %d, events %+v; want 143 by SIGTERM, stopping", sv.ExitCode(), got)
	}

	const stopTimeout = 300 * time.Millisecond
	sv, ev, ready = workload(t, Spec{Service: config.Service{StopTimeout: stopTimeout}}, "ignore-term")
	workloadtest.WaitPID(t, ready)
	began := time.Now()
	sv.Stop()
	done(t, sv)
	got = ev.list()
	if took := time.Since(began); sv.ExitCode() != 137 || took < stopTimeout || got[len(got)-1].Signal != "SIGKILL" {
		t.Fatalf("code %d after %v, events %+v; want 137 by SIGKILL after %v", sv.ExitCode(), took, got, stopTimeout)
	}
}

func TestOnFailureRestartsWithGrowingBackoff(t *testing.T) {
	const initial = 100 * time.Millisecond
	// A stop timeout long enough that SIGTERM, not SIGKILL, ends a run that
	// is running when the test stops it.
	sv, ev, _ := workload(t, Spec{Service: config.Service{Restart: config.RestartOnFailure, BackoffInitial: initial, BackoffMax: 400 * time.Millisecond, StopTimeout: 10 * time.Second}}, "exit", "1")
	var starts []health.Event
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		starts = starts[:0]
		for _, e := range ev.list() {
			if e.Type == health.EventServiceStarted {
				starts = append(starts, e)
			}
		}
		if len(starts) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events %+v: not 5 starts within 20s", ev.list())
		}
	}
	sv.Stop()
	done(t, sv)
	// Delays of 100ms, 200ms, 400ms, 400ms, each give or take 10%.
	for i, want := range []time.Duration{initial, 2 * initial, 4 * initial, 4 * initial} {
		if starts[i+1].Restarts != i+1 {
			t.Errorf("start %d: restarts %d", i+1, starts[i+1].Restarts)
		}
		if gap := starts[i+1].Time.Sub(starts[i].Time); gap < want*9/10 {
			t.Errorf("restart %d came %v after the start before, want at least %v", i+1, gap, want*9/10)
		}
	}
	for _, e := range ev.list() {
		if e.Type == health.EventServiceExited && e.Reason == "crash" && (e.ExitCode == nil || *e.ExitCode != 1) {
			t.Errorf("exit event %+v", e)
		}
	}
	if code := sv.ExitCode(); code != 1 && code != 128+int(syscall.SIGTERM) {
		t.Errorf("code %d, want the last exit's: 1, or 143 when stopped while running", code)
	}
}

// Finishing while a crashed workload waits out its backoff ends the loop at
// once: no new run during the drain, and the supervisor is done with the
// crash's code.
func TestFinishingDuringTheBackoffEndsTheLoopWithoutAnotherRun(t *testing.T) {
	const backoff = time.Hour // a wait only Finishing can cut short
	sv, ev, _ := workload(t, Spec{Service: config.Service{Restart: config.RestartOnFailure, BackoffInitial: backoff, BackoffMax: backoff}}, "exit", "1")
	for deadline := time.Now().Add(20 * time.Second); !slices.ContainsFunc(ev.list(), func(e health.Event) bool { return e.Type == health.EventServiceExited }); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events %+v: the workload did not exit within 20s", ev.list())
		}
	}
	sv.Finishing()
	done(t, sv)
	starts := 0
	for _, e := range ev.list() {
		if e.Type == health.EventServiceStarted {
			starts++
		}
	}
	if starts != 1 || sv.ExitCode() != 1 {
		t.Fatalf("%d starts and code %d, want 1 start and the crash's code 1; events %+v", starts, sv.ExitCode(), ev.list())
	}
}

func TestNeverAndAlwaysAndOnFailureAfterSuccess(t *testing.T) {
	sv, ev, _ := workload(t, Spec{Service: config.Service{Restart: config.RestartOnFailure}}, "exit", "0")
	done(t, sv)
	if got := ev.list(); len(got) != 2 || sv.ExitCode() != 0 || got[1].Reason != "exited" {
		t.Fatalf("on-failure after exit 0: events %+v, code %d; want no restart, reason exited", got, sv.ExitCode())
	}
	sv, ev, _ = workload(t, Spec{Service: config.Service{Restart: config.RestartAlways, BackoffInitial: time.Millisecond, BackoffMax: time.Millisecond}}, "exit", "0")
	for deadline := time.Now().Add(20 * time.Second); len(ev.list()) < 6; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("always: events %+v, want restarts", ev.list())
		}
	}
}

func TestSignalReachesTheWorkload(t *testing.T) {
	sv, _, ready := workload(t, Spec{}, "hup")
	workloadtest.WaitPID(t, ready)
	sv.Signal(syscall.SIGHUP)
	done(t, sv)
	if sv.ExitCode() != 42 {
		t.Fatalf("code %d, want 42 from the workload's SIGHUP handler", sv.ExitCode())
	}
}

func TestTheWorkloadsGroupGoesWithIt(t *testing.T) {
	sv, _, ready := workload(t, Spec{}, "fork-in-group")
	done(t, sv)
	grandchild := workloadtest.WaitPID(t, ready)
	if sv.ExitCode() != 0 {
		t.Fatalf("code %d", sv.ExitCode())
	}
	// Not this process's child, so gone once killed (reaped by init or by
	// the test's parent), or a zombie for a moment.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", grandchild))
		if err != nil || zombieStat(b) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild %d still runs: %s", grandchild, b)
		}
	}
}

func zombieStat(b []byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return len(b) > i+2 && b[i+2] == 'Z'
		}
	}
	return false
}
