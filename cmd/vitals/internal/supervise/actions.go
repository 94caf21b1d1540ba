package supervise

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
)

// Action is what a check's on-failure does.
type Action struct {
	// Do is the check's on-failure: config.OnFailureRestart (restart the
	// service; its checks start over) or config.OnFailureExit (stop every
	// service, and vitals with them).
	Do string
	// Service is the service it restarts; with exit, the one it stops
	// within Grace ("" for every service). "" with restart: the one
	// service.
	Service string
	// Grace, when not 0, is the stop timeout of the service it restarts
	// or stops, instead of the service's own.
	Grace time.Duration
}

// Actions carries out the checks' on-failure: once per pass→fail transition
// (a check that stays failed is not acted on again), and only on a failure
// of the run of the service that runs now. A startup check that reaches its
// failure threshold becomes fail too, and so counts (the kubelet's rule).
//
// It learns of transitions through Record, which the Monitor calls for every
// result (health.WithRecorder), so none is missed, however many events come;
// it acts on its own goroutine (Run), so a check's worker never waits on a
// restart. A failure is acted on only while it stands when Run looks, and
// while its service runs and is not being stopped or restarted: the checks
// start over with each run, and are paused between runs.
type Actions struct {
	on     atomic.Pointer[map[string]Action] // Set swaps it whole
	exit   func(reason string, a Action)
	logger *slog.Logger

	mu     sync.Mutex
	failed []string // checks that became fail since Run last looked, in order
	wake   chan struct{}
	acted  map[string]int // per check, 1 + the run last restarted for it
}

// NewActions returns the actions of on (check name → its Action). exit is
// called, from Run, for a check whose action is config.OnFailureExit: the agent
// stops, and exits non-zero. Record may be called from then on; Run acts.
func NewActions(on map[string]Action, exit func(reason string, a Action), logger *slog.Logger) *Actions {
	a := &Actions{exit: exit, logger: logger, wake: make(chan struct{}, 1), acted: map[string]int{}}
	a.on.Store(&on)
	return a
}

// Set makes on the checks' actions from now on (a reload of the file): a
// failure Record took already is acted on as the check's action is when
// Run looks, and not at all when it has none any more.
func (a *Actions) Set(on map[string]Action) { a.on.Store(&on) }

// of is the check's action; Do is "" when it has none.
func (a *Actions) of(check string) Action { return (*a.on.Load())[check] }

// Record takes one recorded result; it never blocks.
func (a *Actions) Record(r health.Recorded) {
	if r.To != health.Fail || r.From == health.Fail || a.of(r.Check).Do == "" {
		return
	}
	a.mu.Lock()
	if !slices.Contains(a.failed, r.Check) {
		a.failed = append(a.failed, r.Check)
	}
	a.mu.Unlock()
	notify(a.wake)
}

// Run acts on the failures that Record takes, over m's checks and the
// services of g (nil when there are none), until ctx ends.
func (a *Actions) Run(ctx context.Context, m *health.Monitor, g *Group) {
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
			a.act(m, g, name)
		}
	}
}

func (a *Actions) act(m *health.Monitor, g *Group, name string) {
	// The check may have started over since (its service restarted for
	// another reason): act only on a failure that stands.
	if st, ok := m.CheckState(name); !ok || st.Status != health.Fail {
		return
	}
	do := a.of(name)
	if do.Do == "" {
		return // its action went with a reload
	}
	var sv *Supervisor
	if g != nil {
		sv = g.Service(do.Service)
	}
	run, running := 0, true
	if sv != nil {
		run, running = sv.Current()
	}
	if !running || a.acted[name] == run+1 {
		return // being stopped or restarted, or acted on already in this run
	}
	reason := fmt.Sprintf("check %s failed", name)
	switch do.Do {
	case config.OnFailureExit:
		a.acted[name] = run + 1
		a.logger.Warn("on-failure: exit: stopping", "check", name)
		a.exit(reason, do)
	case config.OnFailureRestart:
		if sv != nil && sv.Restart(reason, run, Check, do.Grace) {
			a.acted[name] = run + 1
			a.logger.Warn("on-failure: restart: restarting the service", "check", name, "service", sv.Name(), "run", run)
		}
	}
}
