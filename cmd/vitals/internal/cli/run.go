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
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
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
		Long: `Run the checks of a configuration file and serve /livez, /readyz, /startupz
and /healthz on its listen address, for workloads in any language.

A bad file starts nothing: every error is reported with its file, line and
field, and vitals exits 2. On SIGTERM or SIGINT readiness fails at once, the
server stops, and vitals exits 0.`,
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

// serve runs the Monitor of c and its probe endpoints until ctx ends, then
// fails readiness and stops.
func serve(ctx context.Context, c *config.Config, logger *slog.Logger) error {
	m := health.New(health.WithLogger(logger), health.WithDetails(c.Details))
	for _, ch := range c.Checks {
		var err error
		if ch.Heartbeat > 0 {
			_, err = m.Heartbeat(ch.Name, ch.Heartbeat, ch.Level)
		} else {
			err = m.Add(ch.Check)
		}
		if err != nil { // the loader checked every check as this Monitor does
			return fmt.Errorf("%s: check %s: %w", c.File, ch.Name, err)
		}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return failed{fmt.Sprintf("vitals run: serve the probe endpoints: %v", err)}
	}
	mux := http.NewServeMux()
	mux.Handle("/", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	monitorCtx, stopMonitor := context.WithCancel(context.Background())
	defer stopMonitor()
	m.Start(monitorCtx)
	logger.Info("vitals running", "config", c.File, "listen", ln.Addr().String(), "checks", len(c.Checks))

	select {
	case <-ctx.Done():
	case err := <-served:
		return failed{fmt.Sprintf("vitals run: the probe server stopped: %v", err)}
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
	logger.Info("stopped")
	return nil
}
