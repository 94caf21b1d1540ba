//go:build !vitals_probe

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubereport"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/metrics"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/servers"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
)

// shutdownTimeout bounds how long the probe server waits for answers in
// flight when vitals stops: they are short, and the kubelet will not wait.
const shutdownTimeout = 5 * time.Second

func newRun(stderr io.Writer) *cobra.Command {
	var (
		file      string
		logFormat string
		logLevel  string
	)
	cmd := &cobra.Command{
		Use:   "run [-c vitals.yaml] [-- COMMAND ARGS...]",
		Short: "Run the checks of a configuration file and serve the probe endpoints",
		Long: `Run the checks of a configuration file and serve /livez, /readyz, /startupz,
/healthz and /metrics on its listen address, for workloads in any language,
and the management API (vitals checks, check, health, events, beat) on its
api address: a unix socket (mode 0600), or tcp://HOST:PORT with a token.

With a service (the file's service: block, or COMMAND after --, which wins
over the file's command), vitals runs it as its workload: in a process group
of its own, with vitals's output, forwarding SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT
and SIGWINCH to it, restarting it per the restart policy, and exiting with its
exit code (128 plus the signal's number when a signal killed it).

A bad file starts nothing: every error is reported with its file, line and
field, and vitals exits 2. On SIGTERM or SIGINT readiness fails at once; after
drain, the workload gets its stop signal (SIGKILL after stop-timeout); then the
servers stop, the socket is removed, and vitals exits 0, or with the
workload's code. A second SIGTERM or SIGINT ends the drain at once; a third
kills the workload's group and waits for nothing more.`,
		Example: `  vitals run -c /etc/vitals/vitals.yaml
  vitals run --log-format json --log-level debug
  vitals run -c vitals.yaml -- wg-entrypoint --peers 1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return fmt.Errorf("unexpected argument %q: give the workload's command after --", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			logger, err := newLogger(stderr, logFormat, logLevel)
			if err != nil {
				return err
			}
			c, err := loadConfig(file)
			if err != nil {
				return err
			}
			spec := workload(c, args)
			ctx, sig, stop := stopSignals()
			defer stop()
			code, err := serveWorkload(ctx, sig, c, spec, logger)
			if err == nil && code != 0 {
				return exitCode(code) // the workload's, passed on
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "config", "c", DefaultConfig, "the configuration file, - for stdin")
	f.StringVar(&logFormat, "log-format", "text", "text or json")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	cmd.MarkFlagFilename("config", "yaml", "yml")
	cmd.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

// workload is the service to supervise: the file's, with the command after
// -- instead of the file's; nil when there is none.
func workload(c *config.Config, args []string) *supervise.Spec {
	if c.Service == nil && len(args) == 0 {
		return nil
	}
	spec := supervise.Spec{}
	if s := c.Service; s != nil {
		spec = supervise.Spec{Command: s.Command, Env: s.Env, Dir: s.Dir, Restart: s.Restart, BackoffInitial: s.BackoffInitial,
			BackoffMax: s.BackoffMax, StopSignal: s.StopSignal, StopTimeout: s.StopTimeout}
	} else {
		spec.StopTimeout = supervise.DefaultStopTimeout
	}
	if len(args) > 0 {
		spec.Command = args
	}
	return &spec
}

// hookSpecs are the file's hooks as package hooks runs them.
func hookSpecs(hs []config.Hook) []hooks.Spec {
	out := make([]hooks.Spec, len(hs))
	for i, h := range hs {
		out[i] = hooks.Spec{Name: h.Name, On: h.On}
		if e := h.Exec; e != nil {
			out[i].Exec = &hooks.ExecSpec{Command: e.Command, Timeout: e.Timeout}
		}
		if w := h.Webhook; w != nil {
			out[i].Webhook = &hooks.WebhookSpec{URL: w.URL, Method: w.Method, Header: w.Header, Timeout: w.Timeout,
				Attempts: w.Attempts, BackoffInitial: w.BackoffInitial, BackoffMax: w.BackoffMax}
		}
	}
	return out
}

// serve runs c with no workload: see serveWorkload.
func serve(ctx context.Context, c *config.Config, logger *slog.Logger) error {
	_, err := serveWorkload(ctx, signalled{}, c, nil, logger)
	return err
}

// signalled is what the signals after the first ask of a stopping vitals:
// the second (again closed) ends the drain, as people at a terminal expect
// of a second Ctrl-C; the third (now ended) ends every wait left: the
// workload's group gets SIGKILL, and the hooks, Kubernetes and the servers
// get no more time. The zero value asks for neither.
type signalled struct {
	again <-chan struct{}
	now   context.Context
}

// last is the context that every grace of the stop derives from.
func (s signalled) last() context.Context {
	if s.now == nil {
		return context.Background()
	}
	return s.now
}

// stopSignals returns a context that ends at the first SIGTERM or SIGINT,
// and what the second and third ask (see signalled). stop stops catching
// them.
func stopSignals() (ctx context.Context, sig signalled, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	now, hurry := context.WithCancel(context.Background())
	again := make(chan struct{})
	signals, done := make(chan os.Signal, 3), make(chan struct{})
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for _, step := range []func(){cancel, func() { close(again) }, hurry} {
			select {
			case <-signals:
				step()
			case <-done:
				return
			}
		}
	}()
	return ctx, signalled{again: again, now: now}, func() {
		signal.Stop(signals)
		close(done)
		cancel()
		hurry()
	}
}

// hookGrace bounds how long, when vitals stops, the hooks have to deliver
// the events emitted before.
const hookGrace = 10 * time.Second

// kubeGrace bounds how long, when vitals stops, the last state of the pod
// condition and the last Events have to be written: the kubelet kills the
// container at the end of its grace period, whatever is left to write.
const kubeGrace = 2 * time.Second

// exitFailed is vitals's code when a check with on-failure: exit failed:
// the kubelet restarts the container.
const exitFailed = 1

// serveWorkload runs the Monitor of c, its probe endpoints and /metrics, the
// management API, and the workload of spec if not nil, until ctx ends, the
// workload exits for good, or a check with on-failure: exit fails; then it
// fails readiness, stops the workload after c.Drain (sooner at a second
// signal, see signalled), and stops. The code is the workload's exit code (0
// without one), or exitFailed. Its errors are redacted as the checks' outputs
// are: a command or a directory may hold an expanded ${DB_PASSWORD}.
//
// vitals never waits on its own log: every line goes through a LogQueue,
// which drops what a sink that does not read cannot take, and counts it
// (vitals_log_lines_dropped_total).
func serveWorkload(ctx context.Context, sig signalled, c *config.Config, spec *supervise.Spec, logger *slog.Logger) (code int, err error) {
	defer func() {
		if err != nil {
			err = redacted(err, c.Redact)
		}
	}()
	logs := health.NewLogQueue(logger.Handler(), health.DefaultLogQueue)
	logger = slog.New(logs)
	defer logs.FlushWithin(health.LogFlushGrace) // a log that nobody reads holds up no exit
	if spec != nil && len(spec.Command) == 0 {
		return 0, configError{fmt.Errorf("%s: service: no command: give service.command, or the command after --", c.File)}
	}
	var logChecks []*logwatch.Check
	env := kinds.Env{}
	if spec != nil {
		env.Output = func(lc *logwatch.Check) { logChecks = append(logChecks, lc) }
	}
	checkers := map[string]health.Checker{}
	actionOf := map[string]string{}
	for _, ch := range c.Checks {
		if ch.Heartbeat == 0 {
			checker, err := kinds.All.Build(ch, env)
			if err != nil {
				return 0, configError{err}
			}
			checkers[ch.Name] = checker
		}
		if ch.OnFailure == config.OnFailureIgnore {
			continue
		}
		if ch.OnFailure == config.OnFailureRestart && spec == nil {
			return 0, configError{fmt.Errorf("%s: checks.%s.on-failure: restart needs a workload to restart: give service: in the file, or the command after --", c.File, ch.Name)}
		}
		actionOf[ch.Name] = ch.OnFailure
	}
	token := ""
	if strings.HasPrefix(c.API, "tcp://") {
		var err error
		if token, err = api.ReadToken(c.APITokenFile); err != nil {
			return 0, configError{fmt.Errorf("%s: api-token-file: %w", c.File, err)}
		}
	}
	if spec != nil {
		// Checked here rather than by the loader: the workload's command may
		// exist only where it runs (a container image), not where the file is
		// validated.
		where := "the command after --"
		if c.Service != nil && slices.Equal(c.Service.Command, spec.Command) {
			where = "service.command"
		}
		if _, err := exec.LookPath(spec.Command[0]); err != nil {
			return 0, configError{fmt.Errorf("%s: %s: %w", c.File, where, err)}
		}
		if spec.Dir != "" {
			if fi, err := os.Stat(spec.Dir); err != nil || !fi.IsDir() {
				return 0, configError{fmt.Errorf("%s: service.dir: %q is not a directory here", c.File, spec.Dir)}
			}
		}
	}
	var kubeOpts *kubereport.Options
	if c.Kubernetes != nil {
		o, err := kubernetesOptions(c, logger)
		if err != nil {
			return 0, configError{err}
		}
		kubeOpts = &o
	}
	collector := metrics.New()
	exitFor := make(chan string, 1) // the reason of the first on-failure: exit
	actions := supervise.NewActions(actionOf, func(reason string) {
		select {
		case exitFor <- reason:
		default:
		}
	}, logger)
	m := health.New(health.WithLogger(logger), health.WithDetails(c.Details), health.WithRedaction(c.Redact),
		health.WithRecorder(func(r health.Recorded) {
			collector.Record(r)
			actions.Record(r)
		}))
	collector.Attach(m)
	heartbeats := map[string]*health.Heartbeat{}
	for _, ch := range c.Checks {
		var err error
		if ch.Heartbeat > 0 {
			heartbeats[ch.Name], err = m.Heartbeat(ch.Name, ch.Heartbeat, ch.Level)
		} else {
			err = m.Add(ch.Health(checkers[ch.Name]))
		}
		if err != nil { // the loader checked every check as this Monitor does
			return 0, fmt.Errorf("%s: check %s: %w", c.File, ch.Name, err)
		}
	}
	// Hooks follow the events from the first; they run off the engine's path.
	hookRunner := hooks.New(hookSpecs(c.Hooks), m, logger, c.Redact)
	registry := prometheus.NewRegistry()
	registry.MustRegister(collector, hookRunner, metrics.LogLinesDropped(logs.Dropped),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	errorLog := slog.NewLogLogger(logger.Handler(), slog.LevelWarn)

	// Each listener's connections are capped, so that clients never take
	// the descriptors the checks and the workload need.
	caps, err := servers.CapsInForce(len(c.Checks), c.GRPCListen != "")
	if err != nil {
		return 0, failed{fmt.Sprintf("vitals run: %v", err)}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return 0, failed{fmt.Sprintf("vitals run: serve the probe endpoints: %v", err)}
	}
	apiLn, err := api.Listen(c.API)
	if err != nil {
		ln.Close()
		return 0, failed{fmt.Sprintf("vitals run: serve the management API on %s (api: in %s): %v", c.API, c.File, err)}
	}
	var grpcLn net.Listener
	if c.GRPCListen != "" {
		if grpcLn, err = net.Listen("tcp", c.GRPCListen); err != nil {
			ln.Close()
			apiLn.Close()
			return 0, failed{fmt.Sprintf("vitals run: serve gRPC health on %s (grpc-listen: in %s): %v", c.GRPCListen, c.File, err)}
		}
	}
	probeLn, apiLimited := servers.Limit(ln, "probe", caps.Probe), servers.Limit(apiLn, "api", caps.API)
	limited := []*servers.Listener{probeLn, apiLimited}
	if grpcLn != nil {
		grpcLimited := servers.Limit(grpcLn, "grpc", caps.GRPC)
		grpcLn, limited = grpcLimited, append(limited, grpcLimited)
	}
	registry.MustRegister(servers.NewCollector(limited...))

	monitorCtx, stopMonitor := context.WithCancel(context.Background())
	var sv *running
	monitorStarted := false
	// Last of all, whichever way vitals stops: once the checks have stopped
	// (and, by the defers below, the workload and the hooks), no command of
	// vitals's own runs, so every child left is an orphan of the workload.
	defer func() {
		stopMonitor()
		if monitorStarted {
			<-m.Done()
		}
		if sv == nil {
			return
		}
		if left := sv.KillOrphans(); len(left) > 0 {
			logger.Warn("processes the workload left did not die of SIGKILL", "pids", left)
		}
	}()
	var exited <-chan struct{} // closed once the workload has exited for good
	apiOpts := []api.Option{api.WithHooks(func() any { return hookRunner.Status() })}
	hookRunner.Start()
	// Every event emitted before the end reaches the hooks, the stop's too,
	// within hookGrace.
	defer func() {
		ctx, cancel := context.WithTimeout(sig.last(), hookGrace)
		defer cancel()
		if err := hookRunner.Stop(ctx); err != nil && len(c.Hooks) > 0 {
			logger.Warn("hooks did not finish delivering", "err", err)
		}
	}()
	var supervisor *supervise.Supervisor
	if spec != nil {
		// The workload's output passes through, line by line, past the log
		// checks; a line that may change a log check's answer runs it at once.
		streams := logwatch.New(logChecks, runNowOnChange(monitorCtx, m, logChecks))
		spec.Output = supervise.Output{Copy: streams.Copy}
		// vitals writes the workload's output now: a closed standard output
		// must be an error to drain past, not a SIGPIPE that kills vitals.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		// The checks start over whenever the workload does.
		spec.Checks = startOver{m, streams}
		if sv, err = startWorkload(*spec, m, logger); err != nil {
			ln.Close()
			apiLn.Close()
			if grpcLn != nil {
				grpcLn.Close()
			}
			return 0, failed{fmt.Sprintf("vitals run: %v", err)}
		}
		defer sv.Close()
		exited = sv.Done()
		supervisor = sv.Supervisor
		apiOpts = append(apiOpts, api.WithService(supervisor))
	}
	// The checks start with the workload, as the kubelet's do with the
	// container.
	m.Start(monitorCtx)
	monitorStarted = true
	actionsCtx, stopActions := context.WithCancel(monitorCtx)
	defer stopActions()
	go actions.Run(actionsCtx, m, supervisor)
	// Kubernetes learns of the checks off the engine's path too: an API
	// server that is slow or refuses delays no check and no probe answer.
	var reporter *kubereport.Reporter
	if kubeOpts != nil {
		kubeOpts.Monitor, kubeOpts.Logger = m, logger
		reporter = kubereport.New(*kubeOpts)
		reporter.Start()
		defer stopReporter(sig.last(), reporter, logger)
	}

	mux := http.NewServeMux()
	mux.Handle("/", m.Handler())
	mux.Handle("/metrics", getOrHead(promhttp.HandlerFor(registry, promhttp.HandlerOpts{ErrorLog: errorLog})))
	srv := servers.Probe(mux, probeLn, errorLog)
	// Long waits for events and event streams end with apiCtx, so that they
	// do not hold up the API's shutdown.
	apiCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	apiSrv := servers.API(api.New(m, heartbeats, token, apiOpts...), apiLimited, errorLog)
	apiSrv.BaseContext = func(net.Listener) context.Context { return apiCtx }
	served := make(chan error, 1)
	go func() { served <- srv.Serve(probeLn) }()
	apiServed := make(chan error, 1)
	go func() { apiServed <- apiSrv.Serve(apiLimited) }()
	// gRPC health over the same Monitor: Drain turns every service
	// NOT_SERVING, as the probe endpoints fail readiness.
	grpcServed := make(chan error, 1)
	var grpcSrv *grpc.Server
	if grpcLn != nil {
		grpcSrv = grpc.NewServer(servers.GRPC()...)
		healthpb.RegisterHealthServer(grpcSrv, grpchealth.NewServer(m))
		go func() { grpcServed <- grpcSrv.Serve(grpcLn) }()
	}
	addrs := []any{"config", c.File, "listen", ln.Addr().String()}
	if grpcLn != nil {
		addrs = append(addrs, "grpc-listen", grpcLn.Addr().String())
	}
	if kubeOpts != nil {
		addrs = append(addrs, "pod", kubeOpts.Namespace+"/"+kubeOpts.Pod)
	}
	logger.Info("vitals running", append(addrs, "api", c.API, "checks", len(c.Checks))...)

	why := "" // what the stopping event says
	select {
	case <-exited:
		why = "the workload exited"
	case <-ctx.Done():
		why = "signal"
	case reason := <-exitFor:
		code, why = exitFailed, reason
	case err := <-served:
		apiSrv.Close()
		return 0, failed{fmt.Sprintf("vitals run: the probe server stopped: %v", err)}
	case err := <-apiServed:
		srv.Close()
		return 0, failed{fmt.Sprintf("vitals run: the management API stopped: %v", err)}
	case err := <-grpcServed:
		srv.Close()
		apiSrv.Close()
		return 0, failed{fmt.Sprintf("vitals run: the gRPC health server stopped: %v", err)}
	}
	// Stopping: readiness fails first, before anything else is done or
	// logged (the stopping event, which says why, then Drain, which would
	// emit one of its own without it; neither waits on anything); then no
	// more actions on failing checks, and no more restarts.
	m.Emit(health.Event{Type: health.EventStopping, Output: why})
	m.Drain()
	stopActions()
	if supervisor != nil {
		supervisor.Finishing()
	}
	logger.Info("stopping: readiness fails from now on", "why", why, "drain", c.Drain)
	// The probe server answers 503 through the drain, and until the
	// workload has stopped. A second SIGTERM or SIGINT ends the drain.
	drain := time.NewTimer(c.Drain)
	select {
	case <-drain.C:
	case <-exited:
	case <-sig.again:
		logger.Info("a second signal: the drain ends now")
	}
	drain.Stop()
	// A third signal waits for nothing more.
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-sig.last().Done():
			logger.Warn("a third signal: the workload's group is killed, and vitals stops without waiting")
			if sv != nil {
				sv.Kill()
			}
		case <-stopped:
		}
	}()
	if sv != nil {
		if code == exitFailed {
			sv.StopFor(why)
		} else {
			sv.Stop()
		}
		<-sv.Done()
		if code == 0 {
			code = sv.ExitCode()
		}
	}
	// The condition says Draining since the stop began; what is left to
	// write (the workload's exit among the Events) gets kubeGrace.
	if reporter != nil {
		stopReporter(sig.last(), reporter, logger)
	}
	shutdown, cancel := context.WithTimeout(sig.last(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("probe server did not stop cleanly", "err", err)
	}
	if grpcSrv != nil {
		// Drain told every Watch NOT_SERVING already: a short grace for the
		// calls in flight.
		grace, cancel := context.WithTimeout(sig.last(), grpcGrace)
		stopGRPC(grpcSrv, grace)
		cancel()
	}
	stopMonitor()
	<-m.Done()
	// Dependency checks keep a connection between runs: say goodbye to the
	// servers rather than let them log a dropped client.
	for _, ch := range c.Checks {
		if closer, ok := checkers[ch.Name].(io.Closer); ok {
			closer.Close()
		}
	}
	// The API stays up until the checks have stopped and the hooks have
	// delivered, so that those who follow the events see every one; then it
	// removes its socket.
	hooksCtx, hooksDone := context.WithTimeout(sig.last(), hookGrace)
	if err := hookRunner.Stop(hooksCtx); err != nil && len(c.Hooks) > 0 {
		logger.Warn("hooks did not finish delivering", "err", err)
	}
	hooksDone()
	endStreams()
	if err := apiSrv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("management API did not stop cleanly", "err", err)
	}
	logger.Info("stopped", "code", code)
	return code, nil
}

// redacted is err with the secrets in its text hidden by redact, of the
// same kind for Main (configError exits 2, failed 1); err itself when its
// text has none.
func redacted(err error, redact func(string) string) error {
	msg := redact(err.Error())
	if msg == err.Error() {
		return err
	}
	var bad configError
	var f failed
	switch {
	case errors.As(err, &bad):
		return configError{errors.New(msg)}
	case errors.As(err, &f):
		return failed{msg}
	}
	return errors.New(msg)
}

// getOrHead answers 405 to a method other than GET and HEAD, as the probe
// endpoints do: a scrape reads, and nothing else is served there.
func getOrHead(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, fmt.Sprintf("method %s not allowed: use GET or HEAD", r.Method), http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// kubernetesOptions names the pod and connects to the API server for the
// file's kubernetes: block, or says which of the two cannot be done: in a
// pod, with its service account; elsewhere with KUBECONFIG or
// ~/.kube/config. Nothing is asked of the API server yet.
func kubernetesOptions(c *config.Config, logger *slog.Logger) (kubereport.Options, error) {
	pod, namespace, err := kube.Pod()
	if err != nil {
		return kubereport.Options{}, fmt.Errorf("%s: %w", c.File, err)
	}
	cfg, _, err := kube.Connect(kube.Options{})
	if err != nil {
		return kubereport.Options{}, fmt.Errorf("%s: %w", c.File, err)
	}
	// The API server's warnings would go to klog once per request.
	cfg.WarningHandler = rest.NoWarnings{}
	// What client-go still says through klog (client-side throttling, say)
	// goes to the agent's log, in its format, not to stderr in klog's.
	klog.SetSlogLogger(logger)
	client, err := kube.Dynamic(cfg)
	if err != nil {
		return kubereport.Options{}, fmt.Errorf("%s: %w", c.File, err)
	}
	return kubereport.Options{Client: client, Pod: pod, Namespace: namespace,
		Events: c.Kubernetes.Events, Condition: c.Kubernetes.Condition, WithholdOutput: !c.Details}, nil
}

// stopReporter stops r within kubeGrace (sooner if parent ends), saying
// what was left unwritten. A second call does nothing more.
func stopReporter(parent context.Context, r *kubereport.Reporter, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(parent, kubeGrace)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		logger.Warn("kubernetes: not everything was written", "err", err)
	}
}

// grpcGrace bounds the graceful stop of the gRPC health server.
const grpcGrace = time.Second

// stopGRPC stops s gracefully until ctx ends, then at once: Watch streams
// end only when their clients go, which a graceful stop would wait for.
func stopGRPC(s *grpc.Server, ctx context.Context) {
	stopped := make(chan struct{})
	go func() {
		s.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		s.Stop()
		<-stopped
	}
}

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

// runNowOnChange returns what the log checks' Streams call when a line may
// change a check's answer: it runs that check at once, off the copying
// goroutine, one run at a time per check (a wake while one runs is kept).
func runNowOnChange(ctx context.Context, m *health.Monitor, checks []*logwatch.Check) func(*logwatch.Check) {
	wake := make(map[*logwatch.Check]chan struct{}, len(checks))
	for _, c := range checks {
		ch := make(chan struct{}, 1)
		wake[c] = ch
		go func() {
			for {
				select {
				case <-ch:
					m.RunNow(ctx, c.Name())
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return func(c *logwatch.Check) {
		select {
		case wake[c] <- struct{}{}:
		default:
		}
	}
}

// running is a supervised workload with its reaper and forwarded signals.
type running struct {
	*supervise.Supervisor
	close func()
	// KillOrphans kills and reaps what the workload left outside its
	// process group and handed to vitals (see supervise.Reaper.KillOrphans).
	KillOrphans func() (left []int)
}

// Close stops the workload if it still runs (when a server failed), then
// the forwarding of signals and the reaper.
func (r running) Close() {
	r.Stop()
	<-r.Done()
	r.close()
}

// startWorkload makes vitals a subreaper (unless it is PID 1), starts the
// workload with its events going to m, and forwards signals to it.
func startWorkload(spec supervise.Spec, m *health.Monitor, logger *slog.Logger) (*running, error) {
	if err := supervise.BecomeSubreaper(); err != nil {
		logger.Warn("cannot become a subreaper: orphans of the workload go to PID 1", "err", err)
	}
	reaper := supervise.NewReaper(true)
	sv, err := supervise.Start(spec, func(e health.Event) { m.Emit(e) }, logger, reaper)
	if err != nil {
		reaper.Close()
		return nil, err
	}
	stopForwarding := sv.Forward()
	return &running{sv, func() { stopForwarding(); reaper.Close() }, reaper.KillOrphans}, nil
}
