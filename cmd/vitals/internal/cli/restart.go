package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

func newRestart(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "restart [NAME] [-o text|json|yaml]",
		Short: "Restart a service of a running agent",
		Long: `Restart a service of a running agent (vitals run with service: or services:):
without NAME its one service, with NAME the service of that name (its key under
services:; service:'s is its command's base name). Its stop signal to its
process group, SIGKILL after its stop-timeout, then a new start at once,
without the backoff; the checks that belong to it (with one service, every
check) start over, startup first. Prints the new process once it runs, and
exits 0; -o json and -o yaml write the service-started event of the new
process.

An agent with no such service, with several and no NAME (the error names them),
or whose service is not running (between a crash and its restart), exits 2.`,
		Example: `  vitals restart
  vitals restart worker
  curl --unix-socket /run/vitals/vitals.sock -X POST http://vitals/v1/services/worker/restart`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			restart := (*client.Client).RestartService
			if len(args) == 1 {
				restart = func(c *client.Client, ctx context.Context) (health.Event, error) {
					return c.RestartNamedService(ctx, args[0])
				}
			}
			e, err := ask(cmd, &agent, restart)
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, e)
			}
			fmt.Fprintf(stdout, "restarted %s: pid %d (restart %d)\n", e.Service, e.PID, e.Restarts)
			return nil
		},
	}
	agent.define(cmd)
	output = addOutput(cmd, false)
	return cmd
}
