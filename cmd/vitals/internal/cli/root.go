// Package cli is the vitals command line. Commands are thin: they parse flags,
// build what the library parts need, and map outcomes to exit codes.
package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
	"github.com/vitals-dev/vitals/version"
)

// Exit codes, the same for every command: DESIGN's contract.
const (
	exitPass  = 0 // passed, ready
	exitFail  = 1 // failed, not ready, timed out
	exitUsage = 2 // bad flags, targets or configuration
)

// exitCode is an exit code passed on as it is: the supervised workload's.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit code %d", int(c)) }

// failed is an outcome that has been reported already and exits 1.
type failed struct{ msg string }

func (f failed) Error() string { return f.msg }

// configError is bad input the command has reported in full — a
// configuration that did not load (its lines, each with FILE:LINE:COL and
// the path), a file to import that could not be read, an agent command asked
// of the probe build: the message is all of it (exit 2), without the usage
// hint other errors get.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }

// Main runs the command line and returns the exit code. Whatever error it
// prints, it prints with control and bidi characters escaped (escape.Text):
// an error may quote a file's key, a flag's value or a server's answer. A
// process that vitals run started as a run of its workload executes the
// workload instead (agent.ExecWorkload).
func Main(args []string, stdout, stderr io.Writer) int {
	execWorkload()
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	var f failed
	var bad configError
	var code exitCode
	switch {
	case err == nil:
		return exitPass
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &bad):
		say(stderr, escape.Text(bad.Error())+"\n")
		return exitUsage
	case errors.As(err, &f):
		if f.msg != "" {
			say(stderr, escape.Text(f.msg)+"\n")
		}
		return exitFail
	default:
		say(stderr, fmt.Sprintf("vitals: %s\nRun '%s --help' for usage.\n", escape.Text(err.Error()), cmd.CommandPath()))
		return exitUsage
	}
}

// say writes vitals's last words, giving up after health.LogFlushGrace:
// standard error may be a pipe that nobody reads (a log driver that blocks),
// and the exit, with its code, must not wait on it.
func say(w io.Writer, msg string) {
	written := make(chan struct{})
	go func() {
		io.WriteString(w, msg)
		close(written)
	}()
	select {
	case <-written:
	case <-time.After(health.LogFlushGrace):
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "vitals",
		Short: "Health checks that mean what they say",
		Long: `vitals runs startup, liveness and readiness checks.

  vitals run             run the checks of vitals.yaml and serve the probe endpoints
  vitals validate        check vitals.yaml: every error at once, with file, line and field
  vitals probe TARGET    run one check now: an exec probe, a Docker HEALTHCHECK
  vitals wait TARGET...  wait until every target passes: an init container, a script
  vitals import          turn a Pebble layer or a Kubernetes manifest's probes into vitals.yaml
  vitals checks          list a running agent's checks (vitals check NAME [--run]: one)
  vitals health          exit 0 if the agent's level passes, 1 if not
  vitals events [-f]     print, or follow, the agent's events
  vitals beat NAME       beat a heartbeat check (--status warn|fail: say what is wrong)
  vitals notify KEY      record a notice in the agent's events, for its hooks and readers
  vitals stop CHECK...   stop checks (vitals start CHECK...: start them again)
  vitals hooks           list the agent's hooks and how their deliveries go
  vitals work run NAME -- COMMAND   run COMMAND as a unit of work of a watchdog check
  vitals restart [NAME]  restart a service
  vitals fleet [-n NS]   the pods that vitals runs in, their condition and Events: a live page, or --once

Exit codes: 0 pass, 1 fail or not ready, 2 bad usage or configuration.` + buildHelp,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	versionFlag(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return err })
	root.AddCommand(newProbe(stdout, stderr), newWait(stdout, stderr), newVersion(stdout))
	root.AddCommand(newAPICommands(stdout, stderr)...)
	root.AddCommand(agentCommands(stdout, stderr)...)
	return root
}

// versionFlag gives root the flag that cobra gives a command with a Version,
// -v, --version, saying versionLine. Not through cobra's Version and
// SetVersionTemplate: a template (text/template) can call any exported method
// by name, so the linker keeps every exported method of every type in the
// binary wherever one is executed (in a build without grpc's tracing,
// -tags grpcnotrace, the only other). cobra calls root's help function when
// root, which does nothing itself, is given no command: that says the version
// when --version is given, and --help is not, as cobra's own flag does.
func versionFlag(root *cobra.Command) {
	show := root.Flags().BoolP("version", "v", false, "version for vitals")
	root.Flags().SetAnnotation("version", cobra.FlagSetByCobraAnnotation, []string{"true"}) // as cobra's: no completion after it
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if asked, _ := c.Flags().GetBool("help"); c == root && *show && !asked {
			fmt.Fprintln(c.OutOrStdout(), versionLine())
			return
		}
		help(c, args)
	})
}

// versionLine is the version as vitals version and --version say it: the
// version, then the build (the probe build's name, the commit it was built
// from and when, "+changes" for a work tree that had some), the Go it was
// built with, and the platform.
func versionLine() string {
	b := version.Info()
	var details []string
	if build != "" {
		details = append(details, build)
	}
	if b.Revision != "" {
		rev := b.Revision
		if b.Modified {
			rev += "+changes"
		}
		details = append(details, "revision "+rev)
	}
	if b.Time != "" {
		details = append(details, b.Time)
	}
	details = append(details, b.GoVersion, runtime.GOOS+"/"+runtime.GOARCH)
	return fmt.Sprintf("vitals %s (%s)", b.Version, strings.Join(details, ", "))
}

// versionJSON is vitals version -o json and -o yaml: the build's
// version.Build, and the build's name and platform.
type versionJSON struct {
	version.Build
	Flavour  string `json:"build"` // full, or probe
	Platform string `json:"platform"`
}

func newVersion(stdout io.Writer) *cobra.Command {
	var output *outputFlag
	cmd := &cobra.Command{
		Use:   "version [-o text|json|yaml]",
		Short: "Print the version, the commit and the Go it was built with",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if !output.document() {
				fmt.Fprintln(stdout, versionLine())
				return nil
			}
			name := "full"
			if build != "" {
				name = "probe"
			}
			return output.write(stdout, versionJSON{version.Info(), name, runtime.GOOS + "/" + runtime.GOARCH})
		},
	}
	output = addOutput(cmd, false)
	return cmd
}
