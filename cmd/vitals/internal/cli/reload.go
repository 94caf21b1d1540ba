package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
)

func newReload(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "reload [-o text|json|yaml]",
		Short: "Make a running agent read its file again and apply what changed",
		Long: `Make a running agent (vitals run) read its file again, every layer of it, as
SIGHUP does, and apply what changed as a difference: a check whose definition
did not change goes on as it was (status, history, counters, schedule); one
whose timing or thresholds alone changed keeps its status and history; one that
tests something else starts over, pending (a heartbeat or a watchdog is made
anew); a removed check leaves the endpoints, the status page and /metrics; an
added one appears, pending. details, ui, auth, tls's files, service-info and
drain apply from the next request or stop; hooks and kubernetes follow on from
the last event the old ones handled; a service whose command, env or dir
changed is restarted, that one alone.

The file is judged whole first. A file that does not load, or that changes what
a reload cannot (listen, grpc-listen, api and its token file, TLS on or off, a
service added, removed or moved in the order, a notify check), is
refused with every reason and its position, as vitals validate prints them;
nothing changes, and reload exits 2.

Prints what changed; -o json and -o yaml write it as the API answers it.`,
		Example: `  vitals reload
  kill -HUP "$(pidof vitals)"   # the same, and the services get SIGHUP too`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := ask(cmd, &agent, func(c *client.Client, ctx context.Context) (client.Reloaded, error) {
				return c.Reload(ctx)
			})
			var f failed
			if err != nil && !errors.As(err, &f) {
				// The agent refused the file: its reasons, each at its
				// position, are the whole message, as validate's.
				return configError{err}
			}
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, r)
			}
			fmt.Fprintf(stdout, "reloaded: %s\n", r)
			return nil
		},
	}
	agent.define(cmd)
	output = addOutput(cmd, false)
	return cmd
}
