package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// This file is the commands that change what a running agent does, or say
// how its hooks go: notify, stop, start and hooks. Their exit codes are the
// other API commands' (api.go).

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
