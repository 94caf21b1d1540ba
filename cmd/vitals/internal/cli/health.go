package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

func newHealth(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		level  string
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "health [--level startup|live|ready] [-o text|json|yaml]",
		Short: "Say whether a running agent's level passes: exit 0 if it does, 1 if not",
		Long: `Say whether a level of a running agent (vitals run) passes, as its probe
endpoint would answer: exit 0 when it does, 1 when it does not (one line on
stderr names every check that fails it, with its reason) or when the agent
cannot be reached. The level is ready unless --level says otherwise: readiness
needs startup passed and no live check failing too. -o json and -o yaml write
the API's verdict on stdout, whatever it is.`,
		Example: `  vitals health
  vitals health --level live
  livenessProbe: {exec: {command: [vitals, health, --level, live]}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := levelFlag(level)
			if err != nil {
				return err
			}
			h, err := ask(cmd, &agent, func(c *client.Client, ctx context.Context) (client.Health, error) {
				return c.Health(ctx, cmp.Or(l, health.Ready)) // --level "" too
			})
			if err != nil {
				return err
			}
			if output.document() {
				if err := output.write(stdout, h); err != nil {
					return err
				}
			}
			if !h.OK {
				return failed{oneLine(h.Reason)}
			}
			if !output.document() {
				fmt.Fprintf(stdout, "%sz check passed\n", h.Level)
			}
			return nil
		},
	}
	agent.define(cmd)
	cmd.Flags().StringVar(&level, "level", "ready", "startup, live or ready")
	output = addOutput(cmd, false)
	complete(cmd, "level", "startup", "live", "ready")
	return cmd
}
