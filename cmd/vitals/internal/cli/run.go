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
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/metrics"
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
		Use:   "run [-c vitals.yaml]",
		Short: "Run the checks of a configuration file and serve the probe endpoints",
		Long: `Run the checks of a configuration file and serve /livez, /readyz, /startupz,
/healthz and /metrics on its listen address, for workloads in any language,
and the management API (vitals checks, check, health, events, beat) on its
api address: a unix socket (mode 0600), or tcp://HOST:PORT with a token.

A bad file starts nothing: every error is reported with its file, line and
field, and vitals exits 2. On SIGTERM or SIGINT readiness fails at once, the
servers stop, the socket is removed, and vitals exits 0.`,
		Example: `  vitals run -c /etc/vitals/vitals.yaml
  vitals run --log-format json --log-level debug`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(stderr, logFormat, logLevel)
			if err != nil {
				return err
			}
			c, err := loadConfig(file)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, c, logger)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "config", "c", DefaultConfig, "the configuration file")
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

// serve runs the Monitor of c, its probe endpoints and /metrics, and the
// management API until ctx ends, then fails readiness and stops.
func serve(ctx context.Context, c *config.Config, logger *slog.Logger) error {
	token := ""
	if strings.HasPrefix(c.API, "tcp://") {
		var err error
		if token, err = api.ReadToken(c.APITokenFile); err != nil {
			return configError{fmt.Errorf("%s: api-token-file: %w", c.File, err)}
		}
	}
	collector := metrics.New()
	m := health.New(health.WithLogger(logger), health.WithDetails(c.Details), health.WithRedaction(c.Redact),
		health.WithRecorder(collector.Record))
	collector.Attach(m)
	heartbeats := map[string]*health.Heartbeat{}
	for _, ch := range c.Checks {
		var err error
		if ch.Heartbeat > 0 {
			heartbeats[ch.Name], err = m.Heartbeat(ch.Name, ch.Heartbeat, ch.Level)
		} else {
			err = m.Add(ch.Check)
		}
		if err != nil { // the loader checked every check as this Monitor does
			return fmt.Errorf("%s: check %s: %w", c.File, ch.Name, err)
		}
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collector, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	errorLog := slog.NewLogLogger(logger.Handler(), slog.LevelWarn)

	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return failed{fmt.Sprintf("vitals run: serve the probe endpoints: %v", err)}
	}
	apiLn, err := api.Listen(c.API)
	if err != nil {
		ln.Close()
		return failed{fmt.Sprintf("vitals run: serve the management API on %s (api: in %s): %v", c.API, c.File, err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler())
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{ErrorLog: errorLog}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: errorLog}
	// Long waits for events and event streams end with apiCtx, so that they
	// do not hold up the API's shutdown.
	apiCtx, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	apiSrv := &http.Server{Handler: api.New(m, heartbeats, token), ReadHeaderTimeout: 5 * time.Second, ErrorLog: errorLog,
		BaseContext: func(net.Listener) context.Context { return apiCtx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	apiServed := make(chan error, 1)
	go func() { apiServed <- apiSrv.Serve(apiLn) }()

	monitorCtx, stopMonitor := context.WithCancel(context.Background())
	defer stopMonitor()
	m.Start(monitorCtx)
	logger.Info("vitals running", "config", c.File, "listen", ln.Addr().String(), "api", c.API, "checks", len(c.Checks))

	select {
	case <-ctx.Done():
	case err := <-served:
		apiSrv.Close()
		return failed{fmt.Sprintf("vitals run: the probe server stopped: %v", err)}
	case err := <-apiServed:
		srv.Close()
		return failed{fmt.Sprintf("vitals run: the management API stopped: %v", err)}
	}
	logger.Info("stopping: readiness fails from now on")
	m.Emit(health.Event{Type: health.EventStopping})
	m.Drain()
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("probe server did not stop cleanly", "err", err)
	}
	stopMonitor()
	<-m.Done()
	// Dependency checks keep a connection between runs: say goodbye to the
	// servers rather than let them log a dropped client.
	for _, ch := range c.Checks {
		if closer, ok := ch.Checker.(io.Closer); ok {
			closer.Close()
		}
	}
	// The API stays up until the checks have stopped, so that those who
	// follow the events see every one; then it removes its socket.
	endStreams()
	if err := apiSrv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("management API did not stop cleanly", "err", err)
	}
	logger.Info("stopped")
	return nil
}
