package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// newStopOrStart returns stop, or start.
func newStopOrStart(stdout io.Writer, start bool) *cobra.Command {
	var (
		agent  agentFlags
		output *outputFlag
	)
	verb, done, event := "stop", "stopped", health.EventCheckStopped
	short := "Stop checks of a running agent: they do not run, and their levels leave them out"
	long := `Stop checks of a running agent (vitals run): a stopped check does not run and
its level leaves it out, as if it were not there, keeping its status and
results to look at, until vitals start starts it. Stopping a stopped check
does nothing. Pebble's equivalent is pebble stop-checks.`
	if start {
		verb, done, event = "start", "started", health.EventCheckStarted
		short = "Start stopped checks of a running agent again"
		long = `Start checks of a running agent (vitals run) that vitals stop stopped, or that
its file starts disabled (startup: disabled): each runs at once, and its level
counts it again, with the status it had (pending, for a check never started).
Starting a check that runs does nothing. Pebble's equivalent is pebble
start-checks.`
	}
	cmd := &cobra.Command{
		Use:   verb + " CHECK... [-o text|json|yaml]",
		Short: short,
		Long: long + `

Each change is an event (` + string(event) + `), which hooks may be on. An unknown
check exits 2 and changes nothing, whatever other checks are named. Prints
each check, once, as it is now; -o json and -o yaml write the API's checks.`,
		Example: fmt.Sprintf(`  vitals %s db cache
  vitals %s db -o json`, verb, verb),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			act := (*client.Client).StopChecks
			if start {
				act = (*client.Client).StartChecks
			}
			checks, err := ask(cmd, &agent, func(c *client.Client, ctx context.Context) ([]client.Check, error) {
				return act(c, ctx, args...)
			})
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, checks)
			}
			for _, c := range checks {
				fmt.Fprintf(stdout, "%s %s (%s, %s)\n", done, c.Name, c.Level, c.Status)
			}
			return nil
		},
	}
	agent.define(cmd)
	output = addOutput(cmd, false)
	return cmd
}
