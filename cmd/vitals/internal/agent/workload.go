package agent

import (
	"context"
	"log/slog"
	"maps"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/notify"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
	"github.com/vitals-dev/vitals/health"
)

// service is one workload of the agent, with what belongs to it: the
// checks that start over with it, the log checks that read its output, and
// what hears it say it is ready.
type service struct {
	spec supervise.Spec
	// checks start over with it: those of the file that name it, or every
	// check when it is the only service. A reload sets them anew
	// (setChecks) while the supervisor reads them.
	checks    atomic.Pointer[[]string]
	logChecks []*logwatch.Check
	streams   *logwatch.Streams
	// notify hears what it says of itself (notify checks, s6's
	// notification-fd); nil when nothing listens.
	notify *notify.Receiver
	sv     atomic.Pointer[supervise.Supervisor] // nil until it started
	runs   latestRuns
}

// services are the workloads to supervise, in the order they start: the
// file's, with the command after -- instead of the one service's command;
// none when there are none.
func services(c *config.Config, args []string) []*service {
	if len(c.Services) == 0 && len(args) == 0 {
		return nil
	}
	out := make([]*service, len(c.Services))
	if len(c.Services) == 0 {
		out = []*service{{spec: supervise.Spec{Service: config.NewService(args)}}}
	}
	for i, s := range c.Services {
		spec := supervise.Spec{Service: s}
		if len(args) > 0 && len(c.Services) == 1 {
			spec.Command = args
			if c.Shorthand { // named by its command
				spec.Name = filepath.Base(args[0])
			}
		}
		if spec.Name == "" && len(spec.Command) > 0 {
			spec.Name = filepath.Base(spec.Command[0])
		}
		out[i] = &service{spec: spec}
	}
	setChecks(out, c.Checks)
	return out
}

// setChecks tells each service its checks, those that start over with it,
// of checks.
func setChecks(services []*service, checks []config.Check) {
	names := map[*service][]string{}
	for _, ch := range checks {
		if s := serviceNamed(services, ch.Service); s != nil {
			names[s] = append(names[s], ch.Name)
		}
	}
	for _, s := range services {
		mine := names[s]
		s.checks.Store(&mine)
	}
}

// serviceNamed is the service of services named name; the one service,
// whatever name says, when there is one (the file's checks name it as the
// file does, and the command after -- may rename it). Nil when there is
// none.
func serviceNamed(services []*service, name string) *service {
	if len(services) == 1 {
		return services[0]
	}
	for _, s := range services {
		if s.spec.Name == name {
			return s
		}
	}
	return nil
}

// withNotify is svc with what s's receiver, if any, tells each run of
// itself in its environment: where to say it is ready, and how often.
func (s *service) withNotify(svc config.Service) config.Service {
	if s.notify == nil {
		return svc
	}
	svc.Env = maps.Clone(svc.Env)
	if svc.Env == nil {
		svc.Env = map[string]string{}
	}
	maps.Copy(svc.Env, s.notify.Env())
	return svc
}

// pid is the pid of the service's run that runs now, 0 when none does.
func (s *service) pid() int {
	if sv := s.sv.Load(); sv != nil {
		return sv.PID()
	}
	return 0
}

// status is the service as the status page shows it.
func (s *service) status() client.Workload {
	started, exited := s.runs.latest()
	w := client.Workload{Name: s.spec.Name, PID: s.pid(), Started: started.Time, Restarts: started.Restarts}
	if exited.Type != "" {
		w.LastExit = &exited
	}
	return w
}

// running is the supervised services with their reaper and forwarded
// signals.
type running struct {
	*supervise.Group
	// release stops the forwarding of signals and closes the reaper.
	release func()
	// KillOrphans kills and reaps what the services left outside their
	// process groups and handed to vitals (see supervise.Reaper.KillOrphans).
	KillOrphans func() (left []int)
}

// startServices makes vitals a subreaper (unless it is PID 1), starts the
// services of specs in order with their events going to m, each kept by
// its service, and forwards signals to them.
func startServices(svcs []*service, specs []supervise.Spec, m *health.Monitor, logger *slog.Logger) (*running, error) {
	if err := supervise.BecomeSubreaper(); err != nil {
		logger.Warn("cannot become a subreaper: orphans of the services go to PID 1", "err", err)
	}
	reaper := supervise.NewReaper(true)
	emit := func(e health.Event) {
		e = m.Emit(e)
		if s := serviceNamed(svcs, e.Service); s != nil {
			s.runs.record(e)
		}
	}
	g, err := supervise.StartGroup(specs, emit, logger, reaper)
	if err != nil {
		reaper.Close()
		return nil, err
	}
	for i, sv := range g.Services() {
		svcs[i].sv.Store(sv)
	}
	stopForwarding := g.Forward()
	return &running{g, func() { stopForwarding(); reaper.Close() }, reaper.KillOrphans}, nil
}

// latestRuns keeps a service's latest service-started and service-exited
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

// startOver is what starts over with a service: its checks, and what its
// log checks saw.
type startOver struct {
	m *health.Monitor
	s *service
}

func (o startOver) Pause(reason string) {
	o.s.streams.Reset()
	o.m.PauseChecks(o.s.spec.Name, reason, *o.s.checks.Load())
}

func (o startOver) Reset(reason string) {
	o.s.streams.Reset()
	o.m.ResetChecks(o.s.spec.Name, reason, *o.s.checks.Load())
}

// wakeUps run a check at once when what it reads says that its answer may
// have changed (a log check's line, a notify check's message or watchdog):
// off the goroutine that saw it, one run at a time per check (a wake while
// one runs is kept). A reload adds and removes the log checks'.
type wakeUps struct {
	mu     sync.Mutex
	checks map[string]*wakeUp
	ctx    context.Context // start's; nil before
	m      *health.Monitor
}

// wakeUp is one check's: a wake to take, and the end of its goroutine.
type wakeUp struct {
	ch, gone chan struct{}
}

func newWakeUps(names []string) *wakeUps {
	w := &wakeUps{checks: map[string]*wakeUp{}}
	for _, name := range names {
		w.add(name)
	}
	return w
}

// wake is what the Streams and the notify Receiver call; it never blocks.
func (w *wakeUps) wake(name string) {
	w.mu.Lock()
	c := w.checks[name]
	w.mu.Unlock()
	if c == nil {
		return
	}
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

// start runs each check's wake-ups on m, on a goroutine of its own, until
// ctx ends; and those added later, from when they are.
func (w *wakeUps) start(ctx context.Context, m *health.Monitor) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.m = ctx, m
	for name, c := range w.checks {
		w.run(name, c)
	}
}

// add makes the wake-ups of the check of that name, in place of any it had.
func (w *wakeUps) add(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old := w.checks[name]; old != nil {
		close(old.gone)
	}
	c := &wakeUp{ch: make(chan struct{}, 1), gone: make(chan struct{})}
	w.checks[name] = c
	if w.ctx != nil {
		w.run(name, c)
	}
}

// remove ends the wake-ups of the check of that name.
func (w *wakeUps) remove(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.checks[name]; c != nil {
		close(c.gone)
		delete(w.checks, name)
	}
}

func (w *wakeUps) run(name string, c *wakeUp) {
	ctx, m := w.ctx, w.m
	go func() {
		for {
			select {
			case <-c.ch:
				m.RunNow(ctx, name)
			case <-c.gone:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
}
