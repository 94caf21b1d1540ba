package supervise

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/vitals-dev/vitals/health"
)

// What a check's on-failure may ask for, besides ignore.
const (
	ActionRestart = "restart" // restart the workload; its checks start over
	ActionExit    = "exit"    // stop the workload, and vitals with it
)

// Actions carries out the checks' on-failure: once per pass→fail transition
// (a check that stays failed is not acted on again), and only on a failure
// of the run of the workload that runs now. A startup check that reaches its
// failure threshold becomes fail too, and so counts (the kubelet's rule).
//
// It learns of transitions through Record, which the Monitor calls for every
// result (health.WithRecorder), so none is missed, however many events come;
// it acts on its own goroutine (Run), so a check's worker never waits on a
// restart.
type Actions struct {
	m      *health.Monitor
	sv     *Supervisor // nil: no workload
	on     map[string]string
	exit   func(reason string)
	logger *slog.Logger

	mu     sync.Mutex
	failed []string // checks that became fail since Run last looked, in order
	wake   chan struct{}
	acted  map[string]int // per check, 1 + the run last restarted for it
}

// NewActions returns the actions of on (check name → ActionRestart or
// ActionExit) over m's checks. sv is the workload, nil when there is none;
// then a restart cannot be asked for. exit is called, from Run, for a check
// whose action is ActionExit: the agent stops, and exits non-zero.
func NewActions(m *health.Monitor, sv *Supervisor, on map[string]string, exit func(reason string), logger *slog.Logger) *Actions {
	return &Actions{m: m, sv: sv, on: on, exit: exit, logger: logger, wake: make(chan struct{}, 1), acted: map[string]int{}}
}

// Record takes one recorded result; it never blocks.
func (a *Actions) Record(r health.Recorded) {
	if r.To != health.Fail || r.From == health.Fail || a.on[r.Check] == "" {
		return
	}
	a.mu.Lock()
	if !slices.Contains(a.failed, r.Check) {
		a.failed = append(a.failed, r.Check)
	}
	a.mu.Unlock()
	notify(a.wake)
}

// Run acts on the failures that Record takes until ctx ends.
func (a *Actions) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		a.mu.Lock()
		failed := a.failed
		a.failed = nil
		a.mu.Unlock()
		for _, name := range failed {
			a.act(name)
		}
	}
}

func (a *Actions) act(name string) {
	// The check may have started over since (the workload restarted for
	// another reason): act only on a failure that stands.
	if st, ok := a.m.CheckState(name); !ok || st.Status != health.Fail {
		return
	}
	reason := fmt.Sprintf("check %s failed", name)
	switch a.on[name] {
	case ActionExit:
		a.logger.Warn("on-failure: exit: stopping", "check", name)
		a.exit(reason)
	case ActionRestart:
		if a.sv == nil {
			return
		}
		run, running := a.sv.Current()
		if !running || a.acted[name] == run+1 {
			return
		}
		if a.sv.Restart(reason, run, false) {
			a.acted[name] = run + 1
			a.logger.Warn("on-failure: restart: restarting the workload", "check", name, "service", a.sv.Name(), "run", run)
		}
	}
}
