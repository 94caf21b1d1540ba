package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
)

func newHooks(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "hooks [-o text|wide|json|yaml]",
		Short: "List the hooks of a running agent and how their deliveries go",
		Long: `List the hooks of a running agent (vitals run), in the order of its file: name,
kind (exec, webhook or pebble-notice), target (the command, the URL without
its secrets, or Pebble's socket),
the event types it is on, how many events it delivered, gave up on (failed)
and missed (the log dropped them before the hook read them), and whether it is
failing (its latest event was given up on), with the last error. -o wide adds
the id of the last event delivered and when the last error came, and leaves
the error uncut. -o json and -o yaml write the API's objects.`,
		Example: `  vitals hooks
  vitals hooks -o json | jq '.[] | select(.failing)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hooks, err := ask(cmd, &agent, (*client.Client).Hooks)
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, hooks)
			}
			writeHooksTable(stdout, hooks, time.Now(), output.wide())
			return nil
		},
	}
	agent.define(cmd)
	output = addOutput(cmd, true)
	return cmd
}

// writeHooksTable writes the hooks as a table; wide adds the last event
// delivered and when the last error came, and leaves LAST ERROR uncut.
func writeHooksTable(w io.Writer, hooks []client.Hook, now time.Time, wide bool) {
	if len(hooks) == 0 {
		fmt.Fprintln(w, "no hooks: the agent's file has none")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "NAME\tKIND\tTARGET\tON\tDELIVERED\tFAILED\tMISSED\tSTATE\tLAST ID\tERROR AGE\tLAST ERROR")
	} else {
		fmt.Fprintln(tw, "NAME\tKIND\tTARGET\tON\tDELIVERED\tFAILED\tMISSED\tSTATE\tLAST ERROR")
	}
	for _, h := range hooks {
		on := make([]string, len(h.On))
		for i, t := range h.On {
			on[i] = string(t)
		}
		state, last := "ok", "-"
		if h.Failing {
			state = "failing"
		}
		if h.LastError != "" {
			last = oneLine(h.LastError)
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s", oneLine(h.Name), h.Kind, oneLine(h.Target), strings.Join(on, ","),
			h.Delivered, h.Failed, h.Missed, state)
		if !wide {
			fmt.Fprintf(tw, "%s\t%s\n", row, cut(last, lastWidth))
			continue
		}
		id := "-"
		if h.LastDeliveredID != 0 {
			id = fmt.Sprint(h.LastDeliveredID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row, id, age(h.LastErrorTime, now), last)
	}
	tw.Flush()
}
