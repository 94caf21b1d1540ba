// Package agent is vitals run: it builds the Monitor of a configuration,
// its checks and every part around them (metrics, on-failure actions, hooks,
// the workload's log streams, the probe server with the status page, the API
// and gRPC health servers, the Kubernetes reporter), connects them, and runs
// them until vitals stops.
//
// New does everything that depends on the file alone and starts nothing: no
// listener, no goroutine, no process. vitals validate calls it and stops
// there, so a file that validates is a file that starts. Run first does what
// depends on the command line and on where vitals runs (the workload's
// command on PATH, its directory, the pod and its API server, the token
// file, the listeners), before anything starts; then it starts the parts,
// serves, and stops them in the one order written in parts.
//
// It sits above the parts it connects (api, hooks, kubereport, logwatch,
// metrics, notify, servers, supervise, ui) and below the command line, which
// only loads the file, calls New and Run, and turns the outcome into an exit
// code.
package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/metrics"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/notify"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/version"
)

// Options are what an agent takes besides its file. The zero Options run the
// file as it is, on the system clock, logging to slog.Default(), with no
// second or third signal.
type Options struct {
	// Command is the workload's command given on the command line (after
	// --); it wins over the file's service.command. Empty: the file's.
	Command []string
	// Logger receives vitals's own lines, through a LogQueue (see Run).
	// Default slog.Default().
	Logger *slog.Logger
	// Clock is the Monitor's clock, the drain's and the services' backoff's. Default the system
	// clock; tests pass healthtest.NewClock. The graces of the stop (hooks,
	// Kubernetes, the servers) bound waits on the world outside, and are
	// measured on the system clock whatever Clock is.
	Clock health.Clock
	// Again is closed at a second stop signal: the drain ends at once, as
	// people at a terminal expect of a second Ctrl-C. Nil: never.
	Again <-chan struct{}
	// Now ends at a third stop signal: the workload's group gets SIGKILL,
	// and the hooks, Kubernetes and the servers get no more time. Every
	// grace of the stop derives from it. Nil: never.
	Now context.Context
	// Reload reads the file again, as it was read first: a reload (vitals
	// reload, SIGHUP) applies what changed. Its error is a
	// config.Errors for a file that is readable but wrong. Nil: there is
	// no file to read again (vitals run -- COMMAND with none, or the file
	// was stdin), and a reload is refused, saying so.
	Reload func() (*config.Config, error)
	// Watch reloads the file when it changes on disk (vitals run --watch),
	// as a ConfigMap's update, an editor's save or a write change it. It
	// needs Reload. Default false: only vitals reload and SIGHUP do.
	Watch bool
}

// ConfigError is what is wrong with the file, or with what it names where
// vitals runs (a command that is not on PATH, a directory that is not
// there, a pod that cannot be named): nothing was started, and vitals run
// exits 2.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// RunError is what kept vitals from serving: a listener that could not be
// bound, a workload that could not be started, a server that stopped.
// vitals run exits 1.
type RunError struct{ Err error }

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// ExitFailed is Run's code when a check with on-failure: exit failed: the
// kubelet restarts the container.
const ExitFailed = 1

// Agent is one configuration's parts, built and connected, not running. Make
// one with New; Run it once.
type Agent struct {
	cfg    *config.Config
	opts   Options
	logs   *health.LogQueue // in front of opts.Logger: vitals never waits on its own log
	logger *slog.Logger
	// services are the workloads, in the order they start; none when
	// there are none. nowhere takes the log, process and notify checks of
	// a file with none, which Run refuses (checkCommandLine).
	services []*service
	nowhere  *service

	monitor *health.Monitor
	// fed is the checks the workload feeds through the management API,
	// heartbeats and watchdogs, by name.
	fed       fed
	actions   *supervise.Actions
	exitFor   chan exitFor // the first on-failure: exit
	hooks     *hooks.Runner
	collector *metrics.Collector // /metrics of the Monitor, and of the notices the API records
	registry  *prometheus.Registry
	// wake wakes the log checks, which read a service's output through its
	// streams, at once when a line may change their answer, and the notify
	// checks likewise when what a service says of itself may.
	wake *wakeUps
	// closers are the checks that keep a connection between runs, by
	// name. A reload changes them, under applying.
	closers map[string]io.Closer
	// reloading is held by a reload, from reading the file to applying
	// it: one reload at a time. applying is held while a reload changes
	// the running parts, and by what of the start and the stop reads or
	// writes them; never while a reload reads a file, which may hang (a
	// FIFO, a mount gone away), so that the stop never waits on one.
	reloading sync.Mutex
	applying  sync.Mutex
	// now is the file as it runs: New's, then each reload's. What is
	// read of it once vitals runs is read here, never of cfg, which is
	// the file Run started from.
	now atomic.Pointer[config.Config]
	// live is the agent at work, once Run has prepared it, whose parts a
	// reload changes; nil before. Set by prepare, under reloading.
	live *run
	// reloads counts the reloads by result: applied or rejected.
	reloads *prometheus.CounterVec
	// secrets is what redact hides: the file's, and every reloaded
	// file's since.
	secrets atomic.Pointer[redact.Redactor]
	// sums is the digest of the file as a reload last read it (as the
	// watch began, before one): --watch reloads when the file differs.
	sums atomic.Pointer[[sha256.Size]byte]
	// needs says, of each check that reads a workload's output, looks at
	// its processes or hears it, what it needs: the error of a file run
	// with no workload.
	needs map[string]error
}

// redact hides the secrets of the file, and of every file reloaded since,
// in s: what passes it reaches outputs, events, hooks and logs.
func (a *Agent) redact(s string) string { return a.secrets.Load().Redact(s) }

// fed is the checks the workload feeds, as the file says now: a reload
// swaps the maps whole, never changes them in place.
type fed struct{ atomic.Pointer[api.FedChecks] }

func (f *fed) Heartbeat(name string) *health.Heartbeat { return f.Load().Heartbeat(name) }
func (f *fed) Watchdog(name string) *health.Watchdog   { return f.Load().Watchdog(name) }

// exitFor is an on-failure: exit: why, and the check's action.
type exitFor struct {
	reason string
	action supervise.Action
}

// New builds the agent of cfg: the Monitor with its checks, the metrics,
// the on-failure actions, the hooks and the log streams (the servers are
// Run's, once the listeners are bound). It starts nothing, and depends on
// nothing but cfg and opts, so that vitals validate can call it alone. The
// error is a *ConfigError.
func New(cfg *config.Config, opts Options) (*Agent, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = context.Background()
	}
	logs := health.NewLogQueue(opts.Logger.Handler(), health.DefaultLogQueue)
	a := &Agent{cfg: cfg, opts: opts, logs: logs, logger: slog.New(logs), services: services(cfg, opts.Command),
		nowhere: &service{}, exitFor: make(chan exitFor, 1), needs: map[string]error{}, closers: map[string]io.Closer{}}
	a.secrets.Store(cfg.Redactor())
	a.now.Store(cfg)
	a.actions = supervise.NewActions(a.actionsOf(cfg.Checks), func(reason string, do supervise.Action) {
		select {
		case a.exitFor <- exitFor{reason, do}:
		default:
		}
	}, a.logger)
	collector := metrics.New()
	a.collector = collector
	a.monitor = health.New(health.WithLogger(a.logger), health.WithDetails(cfg.Details != config.DetailsNone), health.WithRedaction(a.redact),
		health.WithServiceInfo(cfg.ServiceInfo), health.WithClock(opts.Clock), health.WithRecorder(func(r health.Recorded) {
			collector.Record(r)
			a.actions.Record(r)
		}))
	collector.Attach(a.monitor)
	if err := a.buildChecks(); err != nil {
		for _, c := range a.closers { // what was built keeps nothing of a dropped Agent
			c.Close()
		}
		return nil, redacted(&ConfigError{err}, a.redact)
	}
	// Each service's output passes through, line by line, past its log
	// checks; a line that may change a log check's answer runs it at once,
	// as a message or a watchdog that may change a notify check's does.
	var woken []string
	for _, s := range append(a.services, a.nowhere) {
		if s.spec.NotificationFD != 0 {
			a.receiver(s) // the service gets its pipe, whether or not a check reads it
		}
		for _, c := range s.logChecks {
			woken = append(woken, c.Name())
		}
		if s.notify != nil {
			woken = append(woken, s.notify.Names()...)
		}
	}
	a.wake = newWakeUps(woken)
	for _, s := range a.services {
		s.streams = logwatch.New(s.logChecks, func(c *logwatch.Check) { a.wake.wake(c.Name()) })
	}
	// Hooks follow the events from the first; they run off the engine's path.
	a.hooks = hooks.New(cfg.Hooks, a.monitor, a.logger, a.redact)
	a.registry = prometheus.NewRegistry()
	a.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vitals_config_reloads_total",
		Help: "Reloads of the file (vitals reload, SIGHUP), by result: applied, or rejected with nothing changed."}, []string{"result"})
	a.reloads.WithLabelValues(reloadApplied)
	a.reloads.WithLabelValues(reloadRejected)
	a.registry.MustRegister(a.reloads, collector, a.hooks, metrics.LogLinesDropped(logs.Dropped), metrics.BuildInfo(version.Info()),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if len(a.services) > 0 {
		a.registry.MustRegister(metrics.Services(a.serviceMetrics))
	}
	return a, nil
}

// buildChecks builds the file's checks through the table of kinds and adds
// them to the Monitor, a heartbeat by its ttl and a watchdog by its limit,
// whose units of work belong to the workload's run and end when its checks
// start over. A log check registers with the workload's output as it is
// built, and a check of the workload's processes for its pid (whether there
// is a workload is Run's to say, as the command line may give it); a
// checker that keeps a connection between runs is closed once the Monitor
// has stopped.
func (a *Agent) buildChecks() error {
	a.fed.Store(&api.FedChecks{Heartbeats: map[string]*health.Heartbeat{}, Watchdogs: map[string]*health.Watchdog{}})
	checkOf := map[string]config.Check{}
	for _, ch := range a.cfg.Checks {
		checkOf[ch.Name] = ch
	}
	// serviceOf is the service whose output, processes or messages a
	// check reads: the one it names, or the only one.
	var bad error
	serviceOf := func(check string, need error) *service {
		a.needs[check] = need
		s, err := a.serviceFor(checkOf[check], need)
		switch {
		case s != nil:
			return s
		case len(a.services) > 0 && bad == nil:
			bad = checkOf[check].Errorf("%v", err)
		}
		return a.nowhere // without services, Run says what it needs (checkCommandLine)
	}
	env := kinds.Env{
		Output: func(c *logwatch.Check) {
			s := serviceOf(c.Name(), kinds.ErrNoWorkload)
			s.logChecks = append(s.logChecks, c)
		},
		Workload: func(check string) func() int { return serviceOf(check, kinds.ErrNoProcesses).pid },
		Notify: func(name string, watchdog time.Duration) health.Checker {
			return a.receiver(serviceOf(name, kinds.ErrNoWorkloadToHear)).Check(name, watchdog)
		},
	}
	fed := a.fed.Load()
	for _, ch := range a.cfg.Checks {
		if ch.Fed.Feed != 0 {
			if err := a.addFed(ch, fed); err != nil { // the loader checked every check as this Monitor does
				return fmt.Errorf("%s: check %s: %w", a.cfg.File, ch.Name, err)
			}
			continue
		}
		if err := a.addChecker(ch, env); err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
	}
	return nil
}

// addFed adds ch, a check the workload feeds, to the Monitor and to fed: a
// heartbeat by its ttl, a watchdog by its limit, whose units of work
// belong to the workload's run and end when its checks start over.
func (a *Agent) addFed(ch config.Check, fed *api.FedChecks) error {
	opts := []health.TimedOption{health.StableFor(ch.StableFor)}
	if ch.Disabled {
		opts = append(opts, health.Disabled())
	}
	switch ch.Fed.Feed {
	case config.Beats:
		hb, err := a.monitor.Heartbeat(ch.Name, ch.Fed.Deadline, ch.Level, opts...)
		if err != nil {
			return err
		}
		fed.Heartbeats[ch.Name] = hb
	case config.Units:
		wd, err := a.monitor.Watchdog(ch.Name, ch.Fed.Deadline, ch.Level, append(opts, health.EndUnitsOnReset())...)
		if err != nil {
			return err
		}
		fed.Watchdogs[ch.Name] = wd
	}
	return nil
}

// actionsOf is the on-failure actions of checks, by name.
func (a *Agent) actionsOf(checks []config.Check) map[string]supervise.Action {
	out := map[string]supervise.Action{}
	for _, ch := range checks {
		if ch.OnFailure != config.OnFailureIgnore {
			out[ch.Name] = supervise.Action{Do: ch.OnFailure, Service: a.serviceName(ch.Service), Grace: ch.StopTimeout}
		}
	}
	return out
}

// addChecker builds a check that vitals runs, and adds it to the Monitor.
func (a *Agent) addChecker(ch config.Check, env kinds.Env) error {
	checker, err := kinds.All.Build(ch, env)
	if err != nil {
		return err
	}
	hc := ch.Health(checker)
	hc.Disabled = ch.Disabled
	if err := a.monitor.Add(hc); err != nil { // as above
		return fmt.Errorf("%s: check %s: %w", a.cfg.File, ch.Name, err)
	}
	if closer, ok := checker.(io.Closer); ok {
		a.closers[ch.Name] = closer
	}
	return nil
}

// serviceName is the name of the service a check names: the one service's
// when it names none.
func (a *Agent) serviceName(name string) string {
	if s := serviceNamed(a.services, name); s != nil {
		return s.spec.Name
	}
	return name
}

// serviceNames lists the services' names, for errors.
func (a *Agent) serviceNames() string {
	names := make([]string, len(a.services))
	for i, s := range a.services {
		names[i] = s.spec.Name
	}
	return strings.Join(names, ", ")
}

// serviceMetrics are the services as their metrics show them.
func (a *Agent) serviceMetrics() []metrics.Service {
	out := make([]metrics.Service, len(a.services))
	for i, s := range a.services {
		started, _ := s.runs.latest()
		out[i] = metrics.Service{Name: s.spec.Name, Running: s.pid() > 0, Restarts: started.Restarts}
	}
	return out
}

// receiver is s's notify Receiver, made the first time it is asked for.
func (a *Agent) receiver(s *service) *notify.Receiver {
	if s.notify == nil {
		logger := a.logger
		if len(a.services) > 1 {
			logger = logger.With("service", s.spec.Name)
		}
		s.notify = notify.New(notify.Options{Clock: a.opts.Clock, Logger: logger, FD: s.spec.NotificationFD})
	}
	return s.notify
}

// receivers are the services' notify Receivers: those that something
// listens to.
func (a *Agent) receivers() []*notify.Receiver {
	var out []*notify.Receiver
	for _, s := range append(a.services, a.nowhere) {
		if s.notify != nil {
			out = append(out, s.notify)
		}
	}
	return out
}

// errorLog is where the servers say what goes wrong with a connection.
func (a *Agent) errorLog() *log.Logger { return slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn) }

// redacted is err with the secrets in its text hidden by redact, of the
// same kind (a *ConfigError or a *RunError); err itself when its text has
// none. A command or a directory may hold an expanded ${DB_PASSWORD}.
func redacted(err error, redact func(string) string) error {
	msg := redact(err.Error())
	if msg == err.Error() {
		return err
	}
	var bad *ConfigError
	var failed *RunError
	switch {
	case errors.As(err, &bad):
		return &ConfigError{errors.New(msg)}
	case errors.As(err, &failed):
		return &RunError{errors.New(msg)}
	}
	return errors.New(msg)
}
