package agent

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubereport"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/servers"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/health"
)

// run is an agent at work: what Run prepared where vitals runs, and the
// parts as they start.
type run struct {
	*Agent
	token string                // the TCP API's bearer token; "" for the socket
	front atomic.Pointer[front] // what the probe listener serves, as the file says now
	page  *ui.Page              // the status page, made with the first front
	// reporter is nil without kubernetes:. A reload replaces it (under
	// reloading), and the one it replaced finishes in retired.
	reporter        *kubereport.Reporter
	pod             string // NAMESPACE/NAME, with kubernetes:
	reporterStarted bool
	// reportAfter is the reporter's Options.After; handedOver is closed
	// once the last handover has started the reporter it made.
	reportAfter uint64
	handedOver  chan struct{}
	retired     sync.WaitGroup
	// ending says that the stop has begun: a reload is refused from
	// then on (it looks under applying, before it changes anything), so
	// that the stop finds the parts as they are.
	ending atomic.Bool

	probeLn, apiLn, grpcLn *servers.Listener  // grpcLn nil without grpc-listen:, apiLn with the API off
	apiOff                 error              // why the API is off: its default place could not be made, and nothing needs it
	probeSrv, apiSrv       *http.Server       // nil until served
	grpcSrv                *grpc.Server       // nil until served
	endStreams             context.CancelFunc // ends the API's long waits and event streams
	endPageStreams         context.CancelFunc // ends the status page's event streams
	failed                 chan error         // a server that stopped serving

	sv           *running        // nil without services, or until they started
	exited       <-chan struct{} // closed once a service has ended vitals; nil without services
	exit         exitFor         // the on-failure: exit that stops vitals, if one does
	monitorCtx   context.Context
	stopMonitor  context.CancelFunc
	started      bool // the Monitor started
	stopActions  context.CancelFunc
	stopReloads  func()      // stops reloading on SIGHUP
	stopWatching func()      // stops watching the file
	unwatch      func() bool // stops waiting for a third signal
	stopSaving   func()      // stops saving the histories to history.file; nil without it
}

// part is one piece of the running agent, with the lifecycle every piece
// has: start, and stop. A part's stop does nothing more than what its start
// did, so that every stop may run after a start failed or a server stopped.
type part struct {
	start func() error // nil: nothing of its own to start (the checks and the reaper start with the workload)
	stop  func(*stopping)
}

// stopping is what the stop knows as it goes.
type stopping struct {
	why    string // what the stopping event says
	code   int    // the exit code: ExitFailed, or the services'
	failed bool   // a part did not start, or a server stopped: no drain
	// exit is the on-failure: exit that stops vitals; zero for any other
	// stop.
	exit exitFor
}

// parts are the agent's parts in the order in which they stop, each once
// the one before it has stopped. They start in the same order, which puts
// the workload and its checks first and the servers after them, so that
// the endpoints answer from checks that run; the API comes last, with the
// workload it restarts.
func (r *run) parts() []part {
	return []part{
		// Readiness fails first, before anything else is done or logged
		// (the stopping event, which says why, then Drain, which would emit
		// one of its own without it; neither waits on anything); then no
		// more actions on failing checks, and no more restarts.
		{stop: r.failReadiness},
		// SIGHUP reloads the file from the start on (the services get it
		// too, as before), until the stop begins; so does a change of the
		// file on disk, with --watch.
		{start: r.listenForReload, stop: func(*stopping) { r.stopReloads() }},
		{start: r.watchFile, stop: func(*stopping) { r.stopWatching() }},
		// The probe server answers 503 through the drain, and until the
		// workload has stopped. A second signal ends the drain; from its
		// end on, a third waits for nothing more.
		{stop: r.drain},
		// The checks' histories go on from history.file before they run;
		// it is saved from then on, and a last time once they stopped.
		{start: r.restoreHistory, stop: func(*stopping) {}},
		// The workload, and with it the checks, as the kubelet's start with
		// the container, and the on-failure actions over both.
		{start: r.startWorkload, stop: r.stopWorkload},
		// Kubernetes learns of the checks off the engine's path: an API
		// server that is slow or refuses delays no check and no probe
		// answer. The condition says Draining since the stop began; what
		// is left to write (the workload's exit among the Events) gets
		// kubeGrace.
		{start: r.startReporter, stop: r.stopReporter},
		// The probe endpoints and /metrics: their answers in flight get
		// shutdownTimeout.
		{start: r.serveProbes, stop: r.stopProbes},
		// gRPC health over the same Monitor: Drain told every Watch
		// NOT_SERVING already, so a short grace for the calls in flight.
		{start: r.serveGRPC, stop: r.stopGRPC},
		// The checks (started with the workload) stop once nothing answers
		// from them.
		{stop: r.stopChecks},
		{stop: r.stopHistory},
		// The notification socket goes once the workload and the checks
		// that hear it have stopped, its directory with it.
		{stop: r.closeNotify},
		// Dependency checks keep a connection between runs: say goodbye to
		// the servers rather than let them log a dropped client.
		{stop: r.closeCheckers},
		// Every event emitted before the end reaches the hooks, the stop's
		// too, within hookGrace.
		{start: r.startHooks, stop: r.stopHooks},
		// The API stays up until the checks have stopped and the hooks have
		// delivered, so that those who follow the events see every one;
		// then it removes its socket.
		{start: r.serveAPI, stop: r.stopAPI},
		// Last of all: once the checks, the workload and the hooks have
		// stopped, no command of vitals's own runs, so every child left is
		// an orphan of the workload.
		{stop: r.killOrphans},
	}
}

// Run runs the agent until ctx ends (the first stop signal), a service
// ends for good (its policy or a rule says exit), or a check with on-failure: exit fails; then it fails
// readiness, drains, and stops every part in the order of parts. The code
// is ExitFailed for an on-failure: exit; else that of the service that
// ended vitals, or, on a signal, the first code that is not 0 of the
// services stopped (supervise.Group.Code); 0 without services. The error is a
// *ConfigError when the file names what is not there where vitals runs,
// and a *RunError when a part could not start or a server stopped; its
// text is redacted as the checks' outputs are. Run it once.
//
// vitals never waits on its own log: every line goes through a LogQueue,
// which drops what a sink that does not read cannot take, and counts it
// (vitals_log_lines_dropped_total); Run gives its last lines
// health.LogFlushGrace.
func (a *Agent) Run(ctx context.Context) (code int, err error) {
	defer a.logs.FlushWithin(health.LogFlushGrace) // a log that nobody reads holds up no exit
	r, err := a.prepare()
	if err != nil {
		return 0, redacted(err, a.redact)
	}
	parts := r.parts()
	s := &stopping{}
	for _, p := range parts {
		if p.start == nil {
			continue
		}
		if err = p.start(); err != nil {
			break
		}
	}
	if err == nil {
		r.logRunning()
		err = r.serve(ctx, s)
	}
	s.failed = err != nil
	r.ending.Store(true)
	for _, p := range parts {
		p.stop(s)
	}
	r.unwatch()
	if err != nil {
		return 0, redacted(err, a.redact)
	}
	r.logger.Info("stopped", "code", s.code)
	return s.code, nil
}

// serve waits for the reason to stop.
func (r *run) serve(ctx context.Context, s *stopping) error {
	select {
	case <-r.exited:
		s.why = "the workload exited"
		if by := r.sv.EndedBy(); len(r.services) > 1 {
			s.why = fmt.Sprintf("service %s exited (%s)", by.Name(), by.Outcome().Why)
		}
	case <-ctx.Done():
		s.why = "signal"
	case exit := <-r.exitFor:
		s.code, s.why, s.exit = ExitFailed, exit.reason, exit
	case err := <-r.failed:
		return err
	}
	return nil
}

func (r *run) logRunning() {
	var attrs []any
	c := r.now.Load()
	if c.File != "" {
		attrs = append(attrs, "config", c.File)
	}
	attrs = append(attrs, "listen", r.probeLn.Addr().String())
	if r.grpcLn != nil {
		attrs = append(attrs, "grpc-listen", r.grpcLn.Addr().String())
	}
	r.applying.Lock() // a reload may replace the reporter already
	if r.reporter != nil {
		attrs = append(attrs, "pod", r.pod)
	}
	r.applying.Unlock()
	api := c.API
	if r.apiOff != nil {
		api = "off"
		r.logger.Warn("management API off: no check needs it and its default socket cannot be made; "+
			"vitals checks, check, health, events and restart cannot reach this vitals (an exec probe of vitals health fails): "+
			"give api: a path this user can write, such as an emptyDir's, to serve it",
			"err", r.apiOff)
	}
	r.logger.Info("vitals running", append(attrs, "api", api, "checks", len(r.monitor.Snapshot().Checks))...)
}

func (r *run) failReadiness(s *stopping) {
	if s.failed {
		return
	}
	r.monitor.Emit(health.Event{Type: health.EventStopping, Output: s.why})
	r.monitor.Drain()
	r.stopActions()
	if r.sv != nil {
		r.sv.Finishing()
	}
	r.logger.Info("stopping: readiness fails from now on", "why", s.why, "drain", r.now.Load().Drain)
}

func (r *run) drain(s *stopping) {
	if s.failed {
		return
	}
	fired, stop := r.after(r.now.Load().Drain)
	var down <-chan struct{} // every service has ended: nothing to drain for
	if r.sv != nil {
		down = r.sv.Done()
	}
	select {
	case <-fired:
	case <-r.exited:
	case <-down:
	case <-r.opts.Again:
		r.logger.Info("a second signal: the drain ends now")
	}
	stop()
	r.unwatch = context.AfterFunc(r.opts.Now, func() {
		r.logger.Warn("a third signal: the workload's group is killed, and vitals stops without waiting")
		if r.sv != nil {
			r.sv.Kill()
		}
	})
}

// after is a timer of d on the agent's clock: its channel, and its Stop.
func (a *Agent) after(d time.Duration) (<-chan time.Time, func() bool) {
	if a.opts.Clock == nil {
		t := time.NewTimer(d)
		return t.C, t.Stop
	}
	t := a.opts.Clock.NewTimer(d)
	return t.C(), t.Stop
}

func (r *run) startWorkload() error {
	if len(r.services) > 0 {
		if err := r.superviseServices(); err != nil {
			return err
		}
	}
	r.monitor.Start(r.monitorCtx)
	r.started = true
	actionsCtx, stopActions := context.WithCancel(r.monitorCtx)
	r.stopActions = stopActions
	if r.sv == nil {
		go r.actions.Run(actionsCtx, r.monitor, nil)
	} else {
		go r.actions.Run(actionsCtx, r.monitor, r.sv.Group)
	}
	return nil
}

// stopWorkload stops the services in the reverse of their order: within
// the grace of the check whose on-failure: exit stops vitals, for its
// service (or every service, for a check of none).
func (r *run) stopWorkload(s *stopping) {
	r.stopActions()
	if r.sv == nil {
		return
	}
	if s.code == ExitFailed {
		r.sv.Stop(s.why, s.exit.action.Service, s.exit.action.Grace)
	} else {
		r.sv.Stop("stopping", "", 0)
	}
	if s.code == 0 {
		s.code = r.sv.Code()
	}
}

func (r *run) startReporter() error {
	r.applying.Lock()
	defer r.applying.Unlock()
	r.reporterStarted = true
	if r.reporter != nil {
		r.reporter.Start()
	}
	return nil
}

// stopReporter stops the reporter, and waits for those that reloads
// replaced to finish. The stop has begun: no reload replaces it any more.
func (r *run) stopReporter(*stopping) {
	r.retired.Wait() // the handovers under way have started the reporter
	if r.reporter == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.opts.Now, kubeGrace)
	defer cancel()
	if err := r.reporter.Stop(ctx); err != nil {
		r.logger.Warn("kubernetes: not everything was written", "err", err)
	}
}

func (r *run) stopChecks(*stopping) {
	r.stopMonitor()
	if r.started {
		<-r.monitor.Done()
	}
}

func (r *run) closeNotify(*stopping) {
	for _, n := range r.receivers() {
		n.Close()
	}
}

func (r *run) closeCheckers(*stopping) {
	r.applying.Lock()
	defer r.applying.Unlock()
	for _, c := range r.closers {
		c.Close()
	}
}

func (r *run) startHooks() error {
	r.hooks.Start()
	return nil
}

func (r *run) stopHooks(*stopping) {
	ctx, cancel := context.WithTimeout(r.opts.Now, hookGrace)
	defer cancel()
	if err := r.hooks.Stop(ctx); err != nil && len(r.now.Load().Hooks) > 0 {
		r.logger.Warn("hooks did not finish delivering", "err", err)
	}
}

func (r *run) killOrphans(*stopping) {
	if r.sv == nil {
		return
	}
	r.sv.release()
	if left := r.sv.KillOrphans(); len(left) > 0 {
		r.logger.Warn("processes the workload left did not die of SIGKILL", "pids", left)
	}
}

// hookGrace bounds how long, when vitals stops, the hooks have to deliver
// the events emitted before.
const hookGrace = 10 * time.Second

// kubeGrace bounds how long, when vitals stops, the last state of the pod
// condition and the last Events have to be written: the kubelet kills the
// container at the end of its grace period, whatever is left to write.
const kubeGrace = 2 * time.Second
