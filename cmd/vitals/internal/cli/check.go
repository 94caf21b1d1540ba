package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

func newCheck(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		run    bool
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "check NAME [--run] [-o text|json|yaml]",
		Short: "Show one check of a running agent with its kept results; --run runs it now",
		Long: `Show one check of a running agent (vitals run): its configuration, status and
kept results, oldest first. Exit 0 when the check passes (pass or warn), 1 when
it is pending or fails; with --run, the check runs now and the exit code is
that run's: 0 passed, 1 failed. The run counts toward the check's thresholds
like any other, unless the check is stopped or not running (waiting for
startup, or a startup check that has passed).

An unknown check exits 2, as a bad argument does. -o json and -o yaml write
the API's object; with --run, {"result": RUN, "check": CHECK}.`,
		Example: `  vitals check db
  vitals check peer-config --run
  vitals check db -o json | jq '.history[] | select(.ok | not)'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			name := args[0]
			var ran *client.Result
			if run {
				r, err := conn.Run(ctx, name)
				if err != nil {
					return fromAgent(cmd, err)
				}
				ran = &r
			}
			c, err := conn.Check(ctx, name)
			if err != nil {
				return fromAgent(cmd, err)
			}
			var v any = c
			if ran != nil {
				v = struct {
					Result client.Result `json:"result"`
					Check  client.Check  `json:"check"`
				}{*ran, c}
			}
			if output.document() {
				if err := output.write(stdout, v); err != nil {
					return err
				}
			} else {
				writeCheck(stdout, c, ran, time.Now())
			}
			switch {
			case ran != nil && !ran.OK:
				return failed{fmt.Sprintf("%s: %s", name, oneLine(ran.Output))}
			case ran == nil && (c.Status == health.Pending || c.Status == health.Fail):
				return failed{fmt.Sprintf("%s: %s", name, whyNotPassing(c, time.Now()))}
			}
			return nil
		},
	}
	agent.define(cmd)
	cmd.Flags().BoolVar(&run, "run", false, "run the check now; exit 0 if the run passes, 1 if it fails")
	output = addOutput(cmd, false)
	return cmd
}

// whyNotPassing says why a pending or failing check is so.
func whyNotPassing(c client.Check, now time.Time) string {
	if !c.StableAt.IsZero() {
		return fmt.Sprintf("%s: pass, stable in %s", c.Status, stableIn(c, now))
	}
	for i := len(c.History) - 1; i >= 0; i-- {
		if r := c.History[i]; !r.OK {
			return fmt.Sprintf("%s: %s", c.Status, oneLine(r.Output))
		}
	}
	if c.Runs == 0 {
		return fmt.Sprintf("%s: no result yet", c.Status)
	}
	return fmt.Sprintf("%s: %d of %d passes needed", c.Status, c.Successes, c.SuccessThreshold)
}

// resultTime shows when a run began, to the millisecond: runs a period
// apart may share a second.
const resultTime = "2006-01-02T15:04:05.000Z07:00"

func writeCheck(w io.Writer, c client.Check, ran *client.Result, now time.Time) {
	field := func(key, format string, args ...any) {
		fmt.Fprintf(w, "%-14s %s\n", key+":", fmt.Sprintf(format, args...))
	}
	if ran != nil {
		line := fmt.Sprintf("%s in %v", verdict(*ran), ran.Duration)
		if d := detail(*ran); d != "" {
			line += ": " + d
		}
		field("run", "%s", line)
	}
	field("name", "%s", c.Name)
	field("level", "%s", c.Level)
	field("kind", "%s", c.Kind)
	status := c.Status.String()
	if !c.Since.IsZero() {
		status += fmt.Sprintf(" for %s (since %s)", age(c.Since, now), c.Since.Format(time.RFC3339))
	}
	field("status", "%s", status)
	if c.StableFor > 0 {
		stable := c.StableFor.String()
		if !c.StableAt.IsZero() {
			stable += fmt.Sprintf(" (its runs pass: stable in %s, at %s)", stableIn(c, now), c.StableAt.Format(time.RFC3339))
		}
		field("stable for", "%s", stable)
	}
	if c.Stopped {
		field("stopped", "yes: it does not run, and the levels leave it out until it is started")
	}
	field("in a row", "%d passed, %d failed (passes after %d, fails after %d)",
		c.Successes, c.Failures, c.SuccessThreshold, c.FailureThreshold)
	field("runs", "%d", c.Runs)
	field("period", "%v", c.Period)
	if c.Timeout > 0 { // heartbeats and watchdogs run nothing
		field("timeout", "%v", c.Timeout)
		field("initial delay", "%v", c.InitialDelay)
	}
	if len(c.History) == 0 {
		field("history", "none yet")
		return
	}
	fmt.Fprintln(w, "history, oldest first:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range c.History {
		fmt.Fprintf(tw, "  %s\t%v\t%s\n", r.Time.Format(resultTime), r.Duration, resultWords(r))
	}
	tw.Flush()
}
