package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubereport"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/servers"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise"
)

// prepare does, before anything starts, what depends on the command line
// and on where vitals runs rather than on the file alone: whether there is
// a workload for the checks that need one, the workload's command and
// directory, the token file, the pod and its API server, the listeners.
// vitals validate does none of it: the command may exist only in the image
// the workload runs in.
func (a *Agent) prepare() (*run, error) {
	a.reloading.Lock()
	defer a.reloading.Unlock()
	a.cfg = a.now.Load() // as reloads before Run left it
	if err := a.checkCommandLine(); err != nil {
		return nil, err
	}
	r := &run{Agent: a, failed: make(chan error, 3), endStreams: func() {}, endPageStreams: func() {}, stopActions: func() {}, stopReloads: func() {}, stopWatching: func() {},
		unwatch: func() bool { return false }}
	r.monitorCtx, r.stopMonitor = context.WithCancel(context.Background())
	if err := r.checkWhereItRuns(); err != nil {
		return nil, err
	}
	if a.cfg.Kubernetes != nil {
		o, err := kubernetesOptions(a.cfg, a.logger)
		if err != nil {
			return nil, &ConfigError{err}
		}
		o.Monitor, o.Logger = a.monitor, a.logger
		r.reporter, r.pod = kubereport.New(o), o.Namespace+"/"+o.Pod
	}
	// The notification sockets are the services': made before the
	// listeners, they go if they cannot be bound.
	for i, n := range r.receivers() {
		if err := n.Listen(); err != nil {
			for _, made := range r.receivers()[:i] {
				made.Close()
			}
			return nil, &RunError{fmt.Errorf("vitals run: %w", err)}
		}
	}
	if err := r.listen(); err != nil {
		for _, n := range r.receivers() {
			n.Close()
		}
		return nil, err
	}
	f := r.front.Load()
	f.handler = r.probeHandler(f, a.cfg)
	a.live = r
	return r, nil
}

// checkCommandLine checks what the file needs of the command line: the
// workload's command when the file has a service: without one, no command
// after -- for a file of several services, and a workload for the checks
// that read its output, look at its processes or restart it.
func (a *Agent) checkCommandLine() error {
	c := a.cfg
	if len(a.opts.Command) > 0 && len(c.Services) > 1 {
		return &ConfigError{fmt.Errorf("%s: the command after -- is the one service's, and the file has %d services (%s): give each its command in the file",
			c.File, len(c.Services), a.serviceNames())}
	}
	if len(a.services) == 1 && len(a.services[0].spec.Command) == 0 {
		return &ConfigError{fmt.Errorf("%s: service: no command: give service.command, or the command after --", c.File)}
	}
	if len(a.services) > 0 {
		return nil
	}
	for _, ch := range c.Checks {
		if err := a.needs[ch.Name]; err != nil {
			return &ConfigError{ch.Errorf("%v", err)}
		}
		if ch.OnFailure == config.OnFailureRestart {
			return &ConfigError{fmt.Errorf("%s: checks.%s.on-failure: restart needs a workload to restart: give service: in the file, or the command after --", c.File, ch.Name)}
		}
	}
	return nil
}

// checkWhereItRuns reads the TCP API's token, the probe listener's
// token and certificates, and looks for the workload's command and
// directory.
func (r *run) checkWhereItRuns() error {
	c := r.cfg
	if strings.HasPrefix(c.API, "tcp://") {
		var err error
		if r.token, err = api.ReadToken(c.APITokenFile); err != nil {
			return &ConfigError{fmt.Errorf("%s: api-token-file: %w", c.File, err)}
		}
	}
	f, err := r.newFront(c)
	if err != nil {
		return err
	}
	r.front.Store(f)
	for _, s := range r.services {
		if err := r.checkRunnable(c, s.spec.Service); err != nil {
			return err
		}
	}
	return nil
}

// checkRunnable looks for the command and the directory of svc, one of
// c's services, here: a *ConfigError naming its key when either is not.
func (r *run) checkRunnable(c *config.Config, svc config.Service) error {
	key := "service" // the field's path in the file
	if !c.Shorthand && len(c.Services) > 0 {
		key = "services." + svc.Name
	}
	where := "the command after --"
	if len(r.opts.Command) == 0 {
		where = key + ".command"
	}
	if _, err := exec.LookPath(svc.Command[0]); err != nil {
		return &ConfigError{fmt.Errorf("%s: %s: %w", cmp.Or(c.Where(key+".command"), "vitals run"), where, err)}
	}
	if svc.Dir != "" {
		if fi, err := os.Stat(svc.Dir); err != nil || !fi.IsDir() {
			return &ConfigError{fmt.Errorf("%s: %s.dir: %q is not a directory here", c.Where(key+".dir"), key, svc.Dir)}
		}
	}
	return nil
}

// source is what errors name as the source of the configuration: the
// file, or vitals run itself when it runs with no file.
func (a *Agent) source() string {
	if a.cfg.File == "" {
		return "vitals run"
	}
	return a.cfg.File
}

// listen binds the probe endpoints', the API's and gRPC health's
// listeners. Each listener's connections are capped, so that clients never
// take the descriptors the checks and the workload need.
func (r *run) listen() error {
	c := r.cfg
	caps, err := servers.CapsInForce(len(c.Checks), c.GRPCListen != "")
	if err != nil {
		return &RunError{fmt.Errorf("vitals run: %w", err)}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return &RunError{fmt.Errorf("vitals run: serve the probe endpoints: %w", err)}
	}
	apiLn, err := api.Listen(c.API)
	var dirErr *apisocket.DirError
	switch {
	case errors.As(err, &dirErr) && c.APIDefault && len(r.fed.Load().Heartbeats) == 0 && len(r.fed.Load().Watchdogs) == 0:
		// No file asked for the API and nothing needs it: a user who can
		// write nowhere (a read-only root with no writable temp directory)
		// still gets the checks and the endpoints, with the API off.
		r.apiOff = err
	case errors.As(err, &dirErr) && !c.APIDefault:
		// A place for the socket that cannot be made is the file's fault,
		// where it gives api:: another api: mends it.
		ln.Close()
		return &ConfigError{c.APIErrorf("%s: %v", c.API, err)}
	case errors.As(err, &dirErr):
		// Or, the file giving none, the default's.
		ln.Close()
		return &ConfigError{fmt.Errorf("%s: %s %s: %w%s", r.source(), r.apiKey(), c.API, err, r.apiNeededBy())}
	case err != nil:
		ln.Close()
		where := r.in("api")
		if c.APIDefault {
			where = r.apiKey()
		}
		return &RunError{fmt.Errorf("vitals run: serve the management API on %s (%s): %w", c.API, where, err)}
	}
	r.probeLn = servers.Limit(ln, "probe", caps.Probe)
	limited := []*servers.Listener{r.probeLn}
	if apiLn != nil {
		r.apiLn = servers.Limit(apiLn, "api", caps.API)
		limited = append(limited, r.apiLn)
	}
	if c.GRPCListen != "" {
		grpcLn, err := net.Listen("tcp", c.GRPCListen)
		if err != nil {
			ln.Close()
			if apiLn != nil {
				apiLn.Close()
			}
			return &RunError{fmt.Errorf("vitals run: serve gRPC health on %s (%s): %w", c.GRPCListen, r.in("grpc-listen"), err)}
		}
		r.grpcLn = servers.Limit(grpcLn, "grpc", caps.GRPC)
		limited = append(limited, r.grpcLn)
	}
	r.registry.MustRegister(servers.NewCollector(limited...))
	return nil
}

// apiKey names api: in errors: "the default api:" when the file gave none.
func (a *Agent) apiKey() string {
	if a.cfg.APIDefault {
		return "the default api:"
	}
	return "api:"
}

// apiNeededBy says, for an API that cannot be served, which checks need it:
// heartbeats, which the workload beats through it, and watchdogs, whose
// units of work it begins and ends through it. It is empty when none does.
func (a *Agent) apiNeededBy() string {
	fed := a.fed.Load()
	need := fedThrough("heartbeat", "beaten", fed.Heartbeats) + fedThrough("watchdog", "fed", fed.Watchdogs)
	if !a.cfg.APIDefault || need == "" {
		return ""
	}
	return need + ": give api: a path this user can write, or tcp://HOST:PORT with api-token-file"
}

// fedThrough says that the checks of a kind are fed (verb) through the
// management API: "; heartbeat check hb is beaten through the management
// API". It is empty when there are none.
func fedThrough[T any](kind, verb string, checks map[string]T) string {
	if len(checks) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(checks))
	which := kind + " check " + names[0] + " is"
	if len(names) > 1 {
		which = kind + " checks " + strings.Join(names, ", ") + " are"
	}
	return "; " + which + " " + verb + " through the management API"
}

// in says where key comes from, for errors: "api: in vitals.yaml", or "the
// default api:" with no file.
func (a *Agent) in(key string) string {
	if a.cfg.File == "" {
		return "the default " + key + ":"
	}
	return key + ": in " + a.cfg.File
}

// superviseServices starts the services in their order, each one's
// output going through its log streams, which the wake-ups watch.
func (r *run) superviseServices() error {
	r.applying.Lock() // a reload finds them started, or changes what starts
	defer r.applying.Unlock()
	r.wake.start(r.monitorCtx, r.monitor)
	// vitals writes the services' output now: a closed standard output
	// must be an error to drain past, not a SIGPIPE that kills vitals.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	specs := make([]supervise.Spec, len(r.services))
	for i, s := range r.services {
		spec := s.spec
		spec.Output = supervise.Output{Copy: s.streams.Copy}
		// Its checks start over whenever it does.
		spec.Checks = startOver{r.monitor, s}
		spec.Clock = r.opts.Clock // the backoff waits on the Monitor's clock
		if s.notify != nil {
			// Each run hears where to say it is ready, and how often it
			// must say it is alive; the receiver hears of each run.
			s.notify.Start(r.monitorCtx, r.wake.wake)
			spec.Notify = s.notify
			spec.Service = s.withNotify(spec.Service)
			spec.WatchdogPID = s.notify.Watchdog() > 0
		}
		specs[i] = spec
	}
	sv, err := startServices(r.services, specs, r.monitor, r.logger)
	if err != nil {
		return &RunError{fmt.Errorf("vitals run: %w", err)}
	}
	r.sv, r.exited = sv, sv.Ended()
	return nil
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
		Events: c.Kubernetes.Events, Condition: c.Kubernetes.Condition, WithholdOutput: c.Details == config.DetailsNone}, nil
}
