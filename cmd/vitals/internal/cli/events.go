package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
)

func newEvents(stdout, stderr io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		after  uint64
		follow bool
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "events [--after ID] [--follow] [-o text|json|yaml]",
		Short: "Print the events of a running agent; --follow waits for more",
		Long: `Print the events a running agent (vitals run) keeps, oldest first, or those
after the event ID given with --after. With --follow, wait for new events and
print them as they come, until interrupted (exit 0) or until the agent stops.
Ids grow by one: a jump after --after means the agent's log dropped events
before they were read, and a line on stderr says so.

Each line reads ID TIME TYPE and what changed (a notice: its key and data,
as NAME=VALUE); -o json writes each event as
one JSON object per line (the API's form), also when following, and -o yaml
each as a YAML document of its own, after ---.`,
		Example: `  vitals events
  vitals events --follow
  vitals events --after 41 -o json | jq 'select(.type == "check-failed")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			var wait time.Duration
			if follow {
				wait = followWait
			}
			stopping := false
			for {
				evs, err := conn.Events(ctx, after, wait)
				if follow && ctx.Err() != nil {
					return nil // interrupted: how following ends
				}
				var answered *client.Error
				if err != nil && stopping && !errors.As(err, &answered) {
					return nil // the agent said it was stopping, and it has
				}
				if err != nil {
					return fromAgent(cmd, err)
				}
				if len(evs) > 0 && after > 0 && evs[0].ID > after+1 {
					fmt.Fprintf(stderr, "vitals events: %d events after %d were dropped from the agent's log before they were read\n",
						evs[0].ID-after-1, after)
				}
				for _, e := range evs {
					if output.document() {
						if err := output.writeItem(stdout, e); err != nil {
							return err
						}
					} else {
						fmt.Fprintln(stdout, eventLine(e))
					}
					after = e.ID
					stopping = stopping || e.Type == health.EventStopping
				}
				if !follow {
					return nil
				}
			}
		},
	}
	agent.define(cmd)
	f := cmd.Flags()
	f.Uint64Var(&after, "after", 0, "only the events after this id (0: every event the agent keeps)")
	f.BoolVarP(&follow, "follow", "f", false, "wait for new events and print them as they come")
	output = addOutput(cmd, false)
	return cmd
}

// eventLine is one event on one line: ID TIME TYPE, then what changed.
func eventLine(e health.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d  %s  %s", e.ID, e.Time.Format(resultTime), e.Type)
	switch {
	case e.Type.Transition():
		fmt.Fprintf(&b, "  %s (%s) %s -> %s", e.Check, e.Level, e.From, e.To)
	case e.Check != "": // check-added, -removed, -stopped, -started
		fmt.Fprintf(&b, "  %s (%s)", e.Check, e.Level)
	case e.Service != "":
		fmt.Fprintf(&b, "  %s", e.Service)
		if e.PID != 0 {
			fmt.Fprintf(&b, " pid %d", e.PID)
		}
		if e.ExitCode != nil {
			fmt.Fprintf(&b, " exit code %d", *e.ExitCode)
		} else if e.Signal != "" {
			fmt.Fprintf(&b, " signal %s", e.Signal)
		}
		if e.Restarts > 0 {
			fmt.Fprintf(&b, " restarts %d", e.Restarts)
		}
	case e.Level != 0:
		fmt.Fprintf(&b, "  %s", e.Level)
	case e.Key != "": // notice
		fmt.Fprintf(&b, "  %s", e.Key)
		if len(e.Data) > 0 {
			b.WriteString(" " + escape.Pairs(e.Data))
		}
	}
	if why := cmp.Or(e.Output, e.Reason); why != "" {
		b.WriteString(": " + oneLine(why))
	}
	return b.String()
}
