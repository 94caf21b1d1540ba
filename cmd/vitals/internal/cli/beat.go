package cli

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
)

func newBeat() *cobra.Command {
	var (
		agent  agentFlags
		status string
		output string
		value  float64
		unit   string
	)
	cmd := &cobra.Command{
		Use:   "beat NAME [--status pass|warn|fail] [--output TEXT] [--value N --unit UNIT]",
		Short: "Beat a heartbeat check of a running agent, saying pass, warn or fail",
		Long: `Beat a heartbeat check of a running agent (vitals run): the check passes while
its last beat is younger than its ttl. A beat may say how the workload is, as
Consul's TTL checks and Uptime Kuma's push monitors take it: --status warn makes
the check warn (it still passes), --status fail fails it at once; --output is
the result's output (why it warns or fails, or what the workload did); --value
with --unit is a value the workload observed, such as how long a job took
(Kuma's ping), shown in place of the beat's age. The ttl counts from every
beat, whatever it says: the check fails once no beat came within it.

Quiet; exit 0 once the agent has the beat. A bad --status, a --value without
--unit, a check that is not a heartbeat, or no check, exits 2.`,
		Example: `  while work; do vitals beat work-loop; done
  vitals beat backup --status fail --output "disk full"
  vitals beat backup --output "12 GB in 4m30s" --value 270 --unit s
  curl --unix-socket /run/vitals/vitals.sock -X POST http://vitals/v1/checks/work-loop/beat
  curl --unix-socket /run/vitals/vitals.sock -X POST -d '{"status": "warn", "output": "queue 80% full"}' \
    http://vitals/v1/checks/queue/beat`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b := client.Beat{Status: status, Output: output, ObservedUnit: unit}
			switch status {
			case "", "pass", "warn", "fail":
			default:
				return fmt.Errorf("--status %q: want pass, warn or fail", status)
			}
			switch given := cmd.Flags().Changed("value"); {
			case given && unit == "":
				return errors.New("--value needs its --unit, such as ms, s or jobs")
			case !given && unit != "":
				return errors.New("--unit without a --value")
			case math.IsNaN(value) || math.IsInf(value, 0):
				return fmt.Errorf("--value %v: want a finite number", value)
			case given:
				b.ObservedValue = &value
			}
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			if err := conn.Report(ctx, args[0], b); err != nil {
				return fromAgent(cmd, err)
			}
			return nil
		},
	}
	agent.define(cmd)
	f := cmd.Flags()
	f.StringVar(&status, "status", "", "pass (the default), warn or fail: fail fails the check at once")
	f.StringVar(&output, "output", "", "the result's output: why it warns or fails, or what the workload did")
	f.Float64Var(&value, "value", 0, "a value the workload observed, such as how long a job took; with --unit")
	f.StringVar(&unit, "unit", "", "the unit of --value, such as ms, s or jobs")
	complete(cmd, "status", "pass", "warn", "fail")
	return cmd
}
