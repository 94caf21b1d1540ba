package agent

import (
	"context"
	"log/slog"
	"sync"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
	"github.com/vitals-dev/vitals/health"
)

// workload is the service to supervise: the file's, with the command after
// -- instead of the file's; nil when there is none.
func workload(c *config.Config, args []string) *supervise.Spec {
	if c.Service == nil && len(args) == 0 {
		return nil
	}
	spec := supervise.Spec{}
	if s := c.Service; s != nil {
		spec = supervise.Spec{Command: s.Command, Env: s.Env, Dir: s.Dir, Restart: s.Restart, BackoffInitial: s.BackoffInitial,
			BackoffMax: s.BackoffMax, StopSignal: s.StopSignal, StopTimeout: s.StopTimeout, NotificationFD: s.NotificationFD}
	} else {
		spec.StopTimeout = supervise.DefaultStopTimeout
	}
	if len(args) > 0 {
		spec.Command = args
	}
	return &spec
}

// running is a supervised workload with its reaper and forwarded signals.
type running struct {
	*supervise.Supervisor
	// release stops the forwarding of signals and closes the reaper.
	release func()
	// KillOrphans kills and reaps what the workload left outside its
	// process group and handed to vitals (see supervise.Reaper.KillOrphans).
	KillOrphans func() (left []int)
	runs        *latestRuns
}

// startWorkload makes vitals a subreaper (unless it is PID 1), starts the
// workload with its events going to m, and forwards signals to it.
func startWorkload(spec supervise.Spec, m *health.Monitor, logger *slog.Logger) (*running, error) {
	if err := supervise.BecomeSubreaper(); err != nil {
		logger.Warn("cannot become a subreaper: orphans of the workload go to PID 1", "err", err)
	}
	reaper := supervise.NewReaper(true)
	runs := &latestRuns{}
	sv, err := supervise.Start(spec, func(e health.Event) { runs.record(m.Emit(e)) }, logger, reaper)
	if err != nil {
		reaper.Close()
		return nil, err
	}
	stopForwarding := sv.Forward()
	return &running{sv, func() { stopForwarding(); reaper.Close() }, reaper.KillOrphans, runs}, nil
}

// status is the workload as the status page shows it.
func (r *running) status() *client.Workload {
	started, exited := r.runs.latest()
	w := &client.Workload{Name: r.Name(), PID: r.PID(), Started: started.Time, Restarts: started.Restarts}
	if exited.Type != "" {
		w.LastExit = &exited
	}
	return w
}

// latestRuns keeps the workload's latest service-started and service-exited
// events as the Monitor logged them, which its bounded log may drop.
type latestRuns struct {
	mu              sync.Mutex
	started, exited health.Event
}

func (l *latestRuns) record(e health.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e.Type {
	case health.EventServiceStarted:
		l.started = e
	case health.EventServiceExited:
		l.exited = e
	}
}

func (l *latestRuns) latest() (started, exited health.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started, l.exited
}

// ExecWorkload executes the workload in vitals's place when vitals run
// started this process as a run of it, to give it WATCHDOG_PID
// (supervise.ExecWorkload); it returns at once in any other. The command
// line calls it first.
func ExecWorkload() { supervise.ExecWorkload() }

// startOver is what starts over with the workload: the checks, and what
// the log checks saw.
type startOver struct {
	m       *health.Monitor
	streams *logwatch.Streams
}

func (s startOver) Pause(reason string) {
	s.streams.Reset()
	s.m.Pause(reason)
}

func (s startOver) Reset(reason string) {
	s.streams.Reset()
	s.m.Reset(reason)
}

// wakeUps run a check at once when what it reads says that its answer may
// have changed (a log check's line, a notify check's message or watchdog):
// off the goroutine that saw it, one run at a time per check (a wake while
// one runs is kept).
type wakeUps map[string]chan struct{}

func newWakeUps(names []string) wakeUps {
	w := make(wakeUps, len(names))
	for _, name := range names {
		w[name] = make(chan struct{}, 1)
	}
	return w
}

// wake is what the Streams and the notify Receiver call; it never blocks.
func (w wakeUps) wake(name string) {
	select {
	case w[name] <- struct{}{}:
	default:
	}
}

// start runs each check's wake-ups on m, on a goroutine of its own, until
// ctx ends.
func (w wakeUps) start(ctx context.Context, m *health.Monitor) {
	for name, ch := range w {
		go func() {
			for {
				select {
				case <-ch:
					m.RunNow(ctx, name)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
}
