//go:build !vitals_probe

package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
)

// The full build: the agent and the commands that read its configuration.
// The probe build (-tags vitals_probe, agent_probe.go) leaves them out.

// build names the build in `vitals version`: "" for the full build.
const build = ""

// buildHelp ends the root command's help: nothing to add for the full build.
const buildHelp = ""

func agentCommands(stdout, stderr io.Writer) []*cobra.Command {
	return []*cobra.Command{newRun(stderr), newValidate(stdout), newImport(stdout, stderr), newFleet(stdout, stderr)}
}

// execWorkload executes the workload in vitals's place when vitals run
// started this process as a run of it, to give it WATCHDOG_PID
// (agent.ExecWorkload); it returns at once in any other.
func execWorkload() { agent.ExecWorkload() }
