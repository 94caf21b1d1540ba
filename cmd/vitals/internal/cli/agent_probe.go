//go:build vitals_probe

package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// The probe build (go build -tags vitals_probe): the one-shot commands and
// the commands that talk to a running agent, without the agent itself. It
// links none of what the agent serves and runs (Prometheus, the database
// and broker clients, supervision, the Kubernetes client), so it starts
// in about half the time of the full build: what an exec probe pays on every
// run. The agent's commands are still known, to say where they are.

// build names the build in `vitals version`.
const build = "probe build"

// buildHelp ends the root command's help.
const buildHelp = `

This is the probe build of vitals: run, validate and import are in the full
build (built without -tags vitals_probe).`

func agentCommands(io.Writer, io.Writer) []*cobra.Command {
	var out []*cobra.Command
	for _, use := range []string{"run", "validate", "import", "fleet"} {
		why := fmt.Sprintf("vitals %s: this is the probe build of vitals (probe, wait, version and the agent's client commands); %s is in the full build (built without -tags vitals_probe)", use, use)
		out = append(out, &cobra.Command{
			Use:   use,
			Short: "Not in the probe build of vitals: use the full build",
			Long:  why,
			// Whatever flags and arguments come, the answer is where the
			// command is; --help shows it too.
			Args:               cobra.ArbitraryArgs,
			FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
			RunE: func(*cobra.Command, []string) error {
				return configError{errors.New(why)}
			},
		})
	}
	return out
}

// execWorkload does nothing: the probe build runs no workload, so no vitals
// run starts it as one.
func execWorkload() {}
