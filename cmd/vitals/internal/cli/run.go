//go:build !vitals_probe

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

func newRun(stderr io.Writer) *cobra.Command {
	var (
		files     []string
		logFormat string
		logLevel  string
		watch     bool
	)
	cmd := &cobra.Command{
		Use:   "run [-c vitals.yaml]... [-- COMMAND ARGS...]",
		Short: "Run the checks of a configuration file and serve the probe endpoints",
		Long: `Run the checks of a configuration file and serve /livez, /readyz, /startupz,
/healthz and /metrics on its listen address, for workloads in any language,
and the management API (vitals checks, check, health, events, beat) on its
api address: a unix socket (mode 0600), or tcp://HOST:PORT with a token.

With a service (the file's service: block, or COMMAND after --, which wins
over the file's command), vitals runs it as its workload: in a process group
of its own, with vitals's output, forwarding SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT
and SIGWINCH to it, restarting it per its restart-rules and restart policy,
and exiting with its exit code (128 plus the signal's number when a signal
killed it). With the file's services: (several, by name), vitals starts them
in the order of their after, before and requires, stops them in reverse, and
exits with the code of the one that ends it. Without -c,
and with no vitals.yaml here, vitals run -- COMMAND runs COMMAND with no
checks: it supervises it, serves the endpoints on their defaults, and drains.

SIGHUP makes vitals read its file again, as vitals reload does, and apply
what changed (see vitals reload); the services get SIGHUP too,
as before, so a workload that reloads on SIGHUP (nginx) still does. Without a
file, SIGHUP is the services' alone. With --watch, a change of the file on
disk reloads it too: a write, an editor's save (a rename over it), or a
Kubernetes ConfigMap's update (a swap of its ..data symlink), within a
fraction of a second.

-c given again, or naming a directory (its *.yaml and *.yml files, in name
order, as Pebble reads 001-base.yaml before 002-app.yaml), reads the files
as layers: each later one over those before it, its checks and services
merged or replaced by name as their override: says (see vitals validate
--print for the result). A reload reads every layer again, and --watch
watches each file, and each directory for a file added or removed.

A bad file starts nothing: every error is reported with its file, line and
field, and vitals exits 2. On SIGTERM or SIGINT readiness fails at once; after
drain, the workload gets its stop signal (SIGKILL after stop-timeout); then the
servers stop, the socket is removed, and vitals exits 0, or with the
workload's code. A second SIGTERM or SIGINT ends the drain at once; a third
kills the workload's group and waits for nothing more.`,
		Example: `  vitals run -c /etc/vitals/vitals.yaml
  vitals run -c base.yaml -c prod.yaml --watch
  vitals run -c /etc/vitals/ -- app --serve
  vitals run --log-format json --log-level debug
  vitals run -c vitals.yaml -- wg-entrypoint --peers 1
  vitals run -- wg-entrypoint --peers 1`,
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
			c, err := runConfig(files, cmd.Flags().Changed("config"), args)
			if err != nil {
				return err
			}
			ctx, again, now, stop := stopSignals()
			defer stop()
			o := agent.Options{Command: args, Logger: logger, Again: again, Now: now}
			if c.File != "" && !slices.Contains(files, "-") {
				// A reload reads the same files, as they were read first: a
				// directory's files as it holds them then.
				o.Reload = func() (*config.Config, error) { return config.LoadLayers(files, kinds.All, config.Options{}) }
				o.Watch = watch
			} else if watch {
				return fmt.Errorf("--watch needs a file to watch: give -c FILE (not -)")
			}
			a, err := agent.New(c, o)
			if err != nil {
				return agentError(err)
			}
			code, err := a.Run(ctx)
			if err == nil && code != 0 {
				return exitCode(code) // the workload's, or agent.ExitFailed
			}
			return agentError(err)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&files, "config", "c", []string{DefaultConfig}, configUsage)
	f.StringVar(&logFormat, "log-format", "text", "text or json")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&watch, "watch", false, "reload the file when it changes on disk (a ConfigMap's update, an editor's save)")
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
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: use text or json", format)
	}
	// The workload's lines share vitals's stderr, and a workload that logs
	// through slog writes lines of the same shape: this key, on each of
	// vitals's lines (the dropped lines' note too, which the agent's LogQueue
	// writes to this handler), tells vitals's apart. Not "logger": klog's
	// lines, which reach this handler through logr, give that key.
	return slog.New(h.WithAttrs([]slog.Attr{slog.String("component", "vitals")})), nil
}

// stopSignals returns a context that ends at the first SIGTERM or SIGINT,
// and what the second and third ask (agent.Options.Again and Now): the
// second ends the drain, the third every wait left. stop stops catching
// them.
func stopSignals() (ctx context.Context, again <-chan struct{}, now context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	now, hurry := context.WithCancel(context.Background())
	second := make(chan struct{})
	signals, done := make(chan os.Signal, 3), make(chan struct{})
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for _, step := range []func(){cancel, func() { close(second) }, hurry} {
			select {
			case <-signals:
				step()
			case <-done:
				return
			}
		}
	}()
	return ctx, second, now, func() {
		signal.Stop(signals)
		close(done)
		cancel()
		hurry()
	}
}

// runConfig is the files vitals run reads; with none given (no -c) and
// none here, and a command after --, the defaults: vitals runs the command
// with no checks, serves the endpoints, and drains.
func runConfig(files []string, given bool, args []string) (*config.Config, error) {
	if !given && len(args) > 0 {
		if _, err := os.Stat(DefaultConfig); errors.Is(err, fs.ErrNotExist) {
			return config.Default(), nil
		}
	}
	return loadConfig(files, config.Options{})
}

// agentError is err of package agent as Main exits with it: a
// configuration error 2, a failure 1.
func agentError(err error) error {
	var bad *agent.ConfigError
	var f *agent.RunError
	switch {
	case errors.As(err, &bad):
		return configError{err}
	case errors.As(err, &f):
		return failed{err.Error()}
	}
	return err
}
