package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

func newNotify(stdout io.Writer) *cobra.Command {
	var (
		agent       agentFlags
		output      *outputFlag
		repeatAfter time.Duration
	)
	cmd := &cobra.Command{
		Use:   "notify KEY [NAME=VALUE...] [-o text|json|yaml]",
		Short: "Record a notice in a running agent's events, for its hooks, Kubernetes and readers",
		Long: `Record a notice in the events of a running agent (vitals run): an event of
type notice with KEY and the data NAME=VALUE..., which the agent's hooks (on:
[notice]), its Kubernetes Events, its metrics and vitals events get as they get
every event. The workload tells its manager what no check sees: its
configuration reloaded, a leader elected, a backup done. Pebble's equivalent is
pebble notify, whose keys vitals takes as they are.

KEY is lower-case words of letters and digits joined by -, in parts separated
by /, after a domain or not: example.com/config-reloaded (Pebble's form),
db/leader-elected, config-reloaded; at most 256 bytes. Each NAME is letters,
digits and - _ . (at most 64 bytes), each VALUE at most 1 KiB of text; at most
32 pairs, 4 KiB in all. A bad KEY or NAME=VALUE exits 2, naming it, and
nothing is sent. Prints the notice's id; -o json and -o yaml write its event.

With --repeat-after (Pebble's flag), a notice less than that long after the
last event of its KEY counts an occurrence of that event, and takes its data,
instead of adding an event: hooks and readers are not woken again, as Pebble
wakes no one. The agent takes at most 10 notices a second from one process
group (a shell loop of vitals notify is one) and 50 from all (bursts of 50 and
100); beyond that it answers 429, and notify exits 1 saying when to try again.`,
		Example: `  vitals notify example.com/config-reloaded generation=4 path=/etc/app.conf
  vitals notify leader-elected
  curl --unix-socket /run/vitals/vitals.sock -d '{"key": "leader-elected"}' http://vitals/v1/notices`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := noticeData(args[0], args[1:])
			if err != nil {
				return err
			}
			e, err := ask(cmd, &agent, func(c *client.Client, ctx context.Context) (health.Event, error) {
				return c.NotifyRepeating(ctx, args[0], data, repeatAfter)
			})
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, e)
			}
			if e.Occurrences > 1 {
				fmt.Fprintf(stdout, "repeated notice %d: %s (%d occurrences)\n", e.ID, e.Key, e.Occurrences)
				return nil
			}
			fmt.Fprintf(stdout, "recorded notice %d: %s\n", e.ID, e.Key)
			return nil
		},
	}
	agent.define(cmd)
	output = addOutput(cmd, false)
	cmd.Flags().DurationVar(&repeatAfter, "repeat-after", 0, "count a repeat of KEY within this long as an occurrence of its last event, not a new one")
	return cmd
}

// noticeData reads the NAME=VALUE arguments of a notice of key, and checks
// the notice as the agent will (health.ValidateNotice), saying which
// argument is wrong.
func noticeData(key string, args []string) (map[string]string, error) {
	var data map[string]string
	given := map[string]string{} // a name: its argument
	for _, arg := range args {
		name, value, ok := strings.Cut(arg, "=")
		if !ok || name == "" { // an empty name is no entry the agent's error could name
			return nil, fmt.Errorf("argument %q: want NAME=VALUE", arg)
		}
		if first, twice := given[name]; twice {
			return nil, fmt.Errorf("argument %q: %s is given twice, first as %q", arg, name, first)
		}
		given[name] = arg
		if data == nil {
			data = map[string]string{}
		}
		data[name] = value
	}
	err := health.ValidateNotice(key, data)
	if e, ok := errors.AsType[*health.NoticeError](err); ok && e.Entry != "" {
		return nil, fmt.Errorf("argument %q: %w", given[e.Entry], err)
	}
	return data, err
}
