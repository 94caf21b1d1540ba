package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/timefmt"
)

func newChecks(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		level  string
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "checks [--level startup|live|ready] [-o text|wide|json|yaml]",
		Short: "List the checks of a running agent with their status and last result",
		Long: `List the checks of a running agent (vitals run): level, kind, status and how
long it has held, how many results were recorded, and the last one. A stopped
check shows its status with (stopped). -o wide adds the passes and failures in
a row against their thresholds, the period and the timeout, when the last run
began and how long it took, and the last result uncut. -o json and -o yaml
write the API's objects, with thresholds and timing too.`,
		Example: `  vitals checks
  vitals checks -o wide
  vitals checks --level ready -o json
  VITALS_API=tcp://10.0.0.7:8559 VITALS_API_TOKEN=... vitals checks`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := levelFlag(level)
			if err != nil {
				return err
			}
			checks, err := ask(cmd, &agent, func(c *client.Client, ctx context.Context) ([]client.Check, error) { return c.Checks(ctx, l) })
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, checks)
			}
			writeChecksTable(stdout, checks, time.Now(), output.wide())
			return nil
		},
	}
	agent.define(cmd)
	cmd.Flags().StringVar(&level, "level", "", "only the checks of this level: startup, live or ready")
	output = addOutput(cmd, true)
	complete(cmd, "level", "startup", "live", "ready")
	return cmd
}

// lastWidth caps the LAST column of the table: the whole output is in
// -o wide, and in vitals check NAME.
const lastWidth = 72

// writeChecksTable writes the checks as a table; wide adds the passes and
// failures in a row against their thresholds, the period and the timeout,
// when the last run began and how long it took, and leaves LAST uncut.
func writeChecksTable(w io.Writer, checks []client.Check, now time.Time, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "NAME\tLEVEL\tKIND\tSTATUS\tFOR\tRUNS\tPASSED\tFAILED\tPERIOD\tTIMEOUT\tLAST RUN\tTOOK\tLAST")
	} else {
		fmt.Fprintln(tw, "NAME\tLEVEL\tKIND\tSTATUS\tFOR\tRUNS\tLAST")
	}
	for _, c := range checks {
		last := "-"
		if c.Last != nil {
			last = resultWords(*c.Last)
		}
		if !wide {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.Name, c.Level, c.Kind, statusWords(c, now), age(c.Since, now), c.Runs, cut(last, lastWidth))
			continue
		}
		timeout, ran, took := "-", "-", "-"
		if c.Timeout > 0 { // heartbeats and watchdogs run nothing
			timeout = c.Timeout.String()
		}
		if c.Last != nil {
			ran, took = age(c.Last.Time, now), c.Last.Duration.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d/%d\t%d/%d\t%v\t%s\t%s\t%s\t%s\n", c.Name, c.Level, c.Kind, statusWords(c, now), age(c.Since, now), c.Runs,
			c.Successes, c.SuccessThreshold, c.Failures, c.FailureThreshold, c.Period, timeout, ran, took, last)
	}
	tw.Flush()
}

// statusWords is a check's status, and why it is not passing yet when its
// runs pass: "pending (stable in 12s)".
func statusWords(c client.Check, now time.Time) string {
	switch {
	case c.Stopped:
		return c.Status.String() + " (stopped)"
	case !c.StableAt.IsZero():
		return c.Status.String() + " (stable in " + stableIn(c, now) + ")"
	}
	return c.Status.String()
}

// stableIn is how long a check waiting to be stable has left to wait, to
// the second (to the millisecond under one), as /readyz?verbose says it.
func stableIn(c client.Check, now time.Time) string {
	return timefmt.Coarse(max(c.StableAt.Sub(now), 0))
}

// resultWords says what a result was: "ok", "ok: MESSAGE", "warn: WARNING",
// "failed: ERROR".
func resultWords(r client.Result) string {
	if d := detail(r); d != "" {
		return verdict(r) + ": " + d
	}
	return verdict(r)
}

func verdict(r client.Result) string {
	switch {
	case r.Warn:
		return "warn"
	case r.OK:
		return "ok"
	case r.Undecided:
		return "undecided"
	}
	return "failed"
}

// detail is a result's output and observed value, on one line.
func detail(r client.Result) string {
	s := oneLine(r.Output)
	if r.ObservedValue != nil {
		v := fmt.Sprint(r.ObservedValue)
		if f, ok := r.ObservedValue.(float64); ok {
			v = strconv.FormatFloat(f, 'g', 4, 64) // a heartbeat's age, a latency: 4 digits say enough
		}
		unit := r.ObservedUnit
		if unit == health.Dimensionless {
			unit = "" // a number with no unit: 12, not 12 1
		}
		s = strings.TrimSpace(s + " (" + strings.TrimSpace(v+" "+unit) + ")")
	}
	return s
}

// age is how long ago t was, to the second; "-" for none.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return max(now.Sub(t), 0).Round(time.Second).String()
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
