package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
)

// This file is vitals work: the units of work of a watchdog check, begun
// and ended through a running agent's API. A unit that is not running (it
// ended, or the workload restarted since) is an outcome, exit 1; a check
// that is none, or no watchdog, is bad usage, exit 2.

// The exit codes of vitals work run when its command does not run, as a
// shell's.
const (
	exitCannotRun = 126 // found, but could not be run
	exitNotFound  = 127 // not on PATH
)

// passedOn are the signals vitals work run passes on to its command: those
// that stop or tell a process something. A terminal's Ctrl-C and Ctrl-\
// reach the command too, as it runs in vitals's process group, so it may get
// those twice.
var passedOn = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

func newWork(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "work begin|end|run",
		Short: "Begin and end units of work on a watchdog check of a running agent",
		Long: `Begin and end units of work on a watchdog check of a running agent (vitals
run): the check fails while a unit has run longer than its limit, saying how
many and how long the oldest has run, and passes again once it ends. Units
belong to the workload's run: they end when it restarts, as its checks start
over. A unit never expires otherwise: one that is never ended keeps the check
failing until then.

  vitals work begin NAME               print the id of a new unit
  vitals work end NAME ID              end it
  vitals work run NAME -- COMMAND...   a unit for as long as COMMAND runs`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("say what to do: vitals work begin NAME, vitals work end NAME ID, or vitals work run NAME -- COMMAND")
		},
	}
	cmd.AddCommand(newWorkBegin(stdout), newWorkEnd(), newWorkRun(stdout, stderr))
	return cmd
}

func newWorkBegin(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "begin NAME [-o text|json|yaml]",
		Short: "Begin a unit of work on a watchdog check, and print its id",
		Long: `Begin a unit of work on a watchdog check of a running agent, and print its id,
for vitals work end; -o json and -o yaml write the API's {"id": ID}. A check
that is not a watchdog, or no check, exits 2; a watchdog that has 1000 units
running (begun this way, and not ended) refuses more, and exits 2 too.`,
		Example: `  id=$(vitals work begin nightly-import)
  import-everything && vitals work end nightly-import "$id"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			id, err := conn.BeginWork(ctx, args[0])
			if err != nil {
				return fromAgent(cmd, err)
			}
			if output.document() {
				return output.write(stdout, client.Unit{ID: id})
			}
			fmt.Fprintln(stdout, id)
			return nil
		},
	}
	agent.define(cmd)
	output = addOutput(cmd, false)
	return cmd
}

func newWorkEnd() *cobra.Command {
	var agent agentFlags
	cmd := &cobra.Command{
		Use:   "end NAME ID",
		Short: "End a unit of work on a watchdog check",
		Long: `End the unit of work ID, as vitals work begin printed it, on a watchdog check of
a running agent. Quiet; exit 0 once it has ended. A unit that is not running
(it has ended, or the workload has restarted since it began, which ends its
units) exits 1; a check that is not a watchdog, or no check, exits 2.`,
		Example: `  vitals work end nightly-import 17`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			id, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil || id == 0 {
				return fmt.Errorf("ID %q: want the id that vitals work begin printed, a number from 1", args[1])
			}
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			switch notRunning, err := endWork(ctx, conn, name, id); {
			case notRunning:
				return failed{fmt.Sprintf("%s: %v", cmd.CommandPath(), err)}
			case err != nil:
				return fromAgent(cmd, err)
			}
			return nil
		},
	}
	agent.define(cmd)
	return cmd
}

// beginTimeout bounds the request that begins vitals work run's unit, which
// a signal does not cut short: an agent that does not answer in that long
// is taken for gone.
const beginTimeout = 30 * time.Second

// endWork ends a unit of work. notRunning says that the agent answered that
// the unit is not running (410 Gone), rather than that there is no such
// check (404).
func endWork(ctx context.Context, conn *client.Client, name string, id uint64) (notRunning bool, err error) {
	err = conn.EndWork(ctx, name, id)
	var e *client.Error
	return errors.As(err, &e) && e.Status == http.StatusGone, err
}

func newWorkRun(stdout, stderr io.Writer) *cobra.Command {
	var agent agentFlags
	cmd := &cobra.Command{
		Use:   "run NAME -- COMMAND [ARGS...]",
		Short: "Run a command as a unit of work on a watchdog check",
		Long: `Run COMMAND as a unit of work on a watchdog check of a running agent: begin a
unit, run COMMAND with vitals's standard input, output and error, passing on
SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 and SIGWINCH, then end the
unit however COMMAND ended, a signal that killed it included, and exit with
COMMAND's code (128 plus the signal's number when a signal killed it). The
check fails while COMMAND has run longer than its limit.

Nothing runs when the unit cannot begin: an agent that cannot be reached
exits 1; a check that is not a watchdog, or no check, exits 2. A COMMAND that
is not on PATH exits 127, one that cannot be run 126, as a shell's. A unit
that cannot be ended once COMMAND has (the workload restarted meanwhile, and
its units ended with it) is said on stderr, and the exit code is still
COMMAND's. Only a vitals killed by SIGKILL cannot end its unit: it runs on,
and fails the check at its limit, until the workload restarts.`,
		Example: `  vitals work run nightly-import -- import-everything --since yesterday
  # cron, in the workload's container:
  0 3 * * * vitals work run backup -- pg_dump -f /backups/db.sql app`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 || len(args) < 2 {
				return errors.New("want NAME, then the command after --: vitals work run NAME -- COMMAND [ARGS...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name, argv := args[0], args[1:]
			path, err := exec.LookPath(argv[0])
			if err != nil {
				fmt.Fprintf(stderr, "vitals work run: %v\n", err)
				return exitCode(exitNotFound)
			}
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			// From here the signals are passed on to the command, once it
			// runs. A SIGINT or SIGTERM before the unit has begun ends ctx
			// too: then nothing runs. The request that begins the unit is
			// not cut short by it, since the agent may have begun the unit
			// already: it is ended again.
			signals := make(chan os.Signal, 8)
			signal.Notify(signals, passedOn...)
			defer signal.Stop(signals)
			beginning, cancel := context.WithTimeout(context.WithoutCancel(ctx), beginTimeout)
			id, err := conn.BeginWork(beginning, name)
			cancel()
			if err != nil {
				return fromAgent(cmd, err)
			}
			if ctx.Err() != nil {
				if _, err := endWork(context.WithoutCancel(ctx), conn, name, id); err != nil {
					fmt.Fprintf(stderr, "vitals work run: end unit %d of check %s: %v\n", id, name, err)
				}
				return fromAgent(cmd, fmt.Errorf("interrupted before %s ran: %w", argv[0], ctx.Err()))
			}
			code := runPassingSignals(path, argv, signals, stdout, stderr)
			// The unit ends whatever ended the command, a signal to vitals
			// included, which ended ctx; one that comes now waits for it.
			if _, err := endWork(context.WithoutCancel(ctx), conn, name, id); err != nil {
				fmt.Fprintf(stderr, "vitals work run: end unit %d of check %s: %v\n", id, name, err)
			}
			return exitCode(code)
		},
	}
	agent.define(cmd)
	return cmd
}

// runPassingSignals runs the command argv, found at path, with vitals's
// standard input and stdout and stderr, passing on to it the signals that
// come on signals, and returns its exit code: 128 plus the signal's number
// when one killed it, exitCannotRun when it could not start (said on
// stderr).
func runPassingSignals(path string, argv []string, signals <-chan os.Signal, stdout, stderr io.Writer) int {
	c := &exec.Cmd{Path: path, Args: argv, Stdin: os.Stdin, Stdout: stdout, Stderr: stderr}
	if err := c.Start(); err != nil {
		fmt.Fprintf(stderr, "vitals work run: %v\n", err)
		return exitCannotRun
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-signals:
				c.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	c.Wait()
	close(done)
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return c.ProcessState.ExitCode()
}
