package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
	"github.com/vitals-dev/vitals/internal/timefmt"
)

// This file is the commands that talk to a running agent (vitals run) through
// its management API. Where an outcome has an exit code of its own (health,
// check), it is 0 pass, 1 fail; an answer of the agent that says the request
// was wrong (an unknown check, a wrong token) exits 2, as bad usage does; an
// agent that cannot be reached exits 1.

// followWait is how long one request of events --follow waits for an event
// before asking again: under the idle timeouts of proxies.
const followWait = 30 * time.Second

// newAPICommands returns checks, check, health, events, beat, work,
// restart, notify, stop, start, hooks and reload.
func newAPICommands(stdout, stderr io.Writer) []*cobra.Command {
	return []*cobra.Command{newChecks(stdout), newCheck(stdout), newHealth(stdout), newEvents(stdout, stderr), newBeat(),
		newWork(stdout, stderr), newRestart(stdout), newNotify(stdout), newStopOrStart(stdout, false), newStopOrStart(stdout, true), newHooks(stdout), newReload(stdout)}
}

// agentFlags say where the agent's API is.
type agentFlags struct{ addr, tokenFile string }

// defaultAPI is apisocket.Default, found once: every command over the API
// says it in its --api flag's help, and each command line builds them all
// (finding it looks at directories: thirteen times would be thirteen sets
// of system calls in every vitals probe, an exec probe run every period).
var defaultAPI = sync.OnceValue(apisocket.Default)

func (a *agentFlags) define(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.addr, "api", "", "the agent's API: a unix socket, tcp://HOST:PORT or an http:// URL (default $VITALS_API, else "+defaultAPI()+")")
	f.StringVar(&a.tokenFile, "api-token-file", "", "the file with the token of a TCP API (default: the token in $VITALS_API_TOKEN)")
	cmd.MarkFlagFilename("api-token-file")
}

// client calls the API that --api, $VITALS_API or the default names, with the
// token of --api-token-file or $VITALS_API_TOKEN.
func (a *agentFlags) client() (*client.Client, error) {
	token := os.Getenv("VITALS_API_TOKEN")
	if a.tokenFile != "" {
		var err error
		if token, err = api.ReadToken(a.tokenFile); err != nil {
			return nil, fmt.Errorf("--api-token-file: %w", err)
		}
	}
	return client.New(cmp.Or(a.addr, os.Getenv("VITALS_API"), defaultAPI()), token)
}

// connect is what every command over the API starts with: the client, and
// the command's context, which SIGINT or SIGTERM ends.
func (a *agentFlags) connect(cmd *cobra.Command) (*client.Client, context.Context, context.CancelFunc, error) {
	conn, err := a.client()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	return conn, ctx, stop, nil
}

// ask is what a command that makes one call of the API does: connect, call,
// and map the call's error to its exit code (fromAgent). call is a method
// of the client, such as (*client.Client).Hooks, or a function of one.
func ask[T any](cmd *cobra.Command, agent *agentFlags, call func(*client.Client, context.Context) (T, error)) (T, error) {
	conn, ctx, stop, err := agent.connect(cmd)
	if err != nil {
		var zero T
		return zero, err
	}
	defer stop()
	v, err := call(conn, ctx)
	if err != nil {
		return v, fromAgent(cmd, err)
	}
	return v, nil
}

// fromAgent maps an API call's error to its exit code: the agent's 4xx answer
// (an unknown check, a check that is no heartbeat or no watchdog, a wrong
// token, a file it refuses to reload) is bad usage, 2; no answer, a 5xx,
// or a 429 (beyond its limits: try again) is a failure, 1.
func fromAgent(cmd *cobra.Command, err error) error {
	var e *client.Error
	switch {
	case errors.As(err, &e) && e.Status == http.StatusUnauthorized:
		return fmt.Errorf("%s (give the agent's token with --api-token-file or $VITALS_API_TOKEN)", e.Message)
	case errors.As(err, &e) && e.Status == http.StatusTooManyRequests:
		return failed{fmt.Sprintf("%s: %s", cmd.CommandPath(), e.Message)} // a moment's refusal: try again, not bad usage
	case errors.As(err, &e) && e.Status < 500:
		return errors.New(e.Message)
	}
	return failed{fmt.Sprintf("%s: %v", cmd.CommandPath(), err)}
}

// levelFlag reads --level; "" is 0 (every level).
func levelFlag(s string) (health.Level, error) {
	if s == "" {
		return 0, nil
	}
	l, err := health.ParseLevel(s)
	if err != nil {
		return 0, fmt.Errorf("--level: %v", err)
	}
	return l, nil
}

// complete offers the values of a flag that has a fixed set.
func complete(cmd *cobra.Command, flag string, values ...string) {
	cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

func newChecks(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		level  string
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "checks [--level startup|live|ready] [-o text|wide|json|yaml]",
		Short: "List the checks of a running agent with their status and last result",
		Long: `List the checks of a running agent (vitals run): level, kind, status and how
long it has held, how many results were recorded, and the last one. A stopped
check shows its status with (stopped). -o wide adds the passes and failures in
a row against their thresholds, the period and the timeout, when the last run
began and how long it took, and the last result uncut. -o json and -o yaml
write the API's objects, with thresholds and timing too.`,
		Example: `  vitals checks
  vitals checks -o wide
  vitals checks --level ready -o json
  VITALS_API=tcp://10.0.0.7:8559 VITALS_API_TOKEN=... vitals checks`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := levelFlag(level)
			if err != nil {
				return err
			}
			checks, err := ask(cmd, &agent, func(c *client.Client, ctx context.Context) ([]client.Check, error) { return c.Checks(ctx, l) })
			if err != nil {
				return err
			}
			if output.document() {
				return output.write(stdout, checks)
			}
			writeChecksTable(stdout, checks, time.Now(), output.wide())
			return nil
		},
	}
	agent.define(cmd)
	cmd.Flags().StringVar(&level, "level", "", "only the checks of this level: startup, live or ready")
	output = addOutput(cmd, true)
	complete(cmd, "level", "startup", "live", "ready")
	return cmd
}

// lastWidth caps the LAST column of the table: the whole output is in
// -o wide, and in vitals check NAME.
const lastWidth = 72

// writeChecksTable writes the checks as a table; wide adds the passes and
// failures in a row against their thresholds, the period and the timeout,
// when the last run began and how long it took, and leaves LAST uncut.
func writeChecksTable(w io.Writer, checks []client.Check, now time.Time, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "NAME\tLEVEL\tKIND\tSTATUS\tFOR\tRUNS\tPASSED\tFAILED\tPERIOD\tTIMEOUT\tLAST RUN\tTOOK\tLAST")
	} else {
		fmt.Fprintln(tw, "NAME\tLEVEL\tKIND\tSTATUS\tFOR\tRUNS\tLAST")
	}
	for _, c := range checks {
		last := "-"
		if c.Last != nil {
			last = resultWords(*c.Last)
		}
		if !wide {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.Name, c.Level, c.Kind, statusWords(c, now), age(c.Since, now), c.Runs, cut(last, lastWidth))
			continue
		}
		timeout, ran, took := "-", "-", "-"
		if c.Timeout > 0 { // heartbeats and watchdogs run nothing
			timeout = c.Timeout.String()
		}
		if c.Last != nil {
			ran, took = age(c.Last.Time, now), c.Last.Duration.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d/%d\t%d/%d\t%v\t%s\t%s\t%s\t%s\n", c.Name, c.Level, c.Kind, statusWords(c, now), age(c.Since, now), c.Runs,
			c.Successes, c.SuccessThreshold, c.Failures, c.FailureThreshold, c.Period, timeout, ran, took, last)
	}
	tw.Flush()
}

// statusWords is a check's status, and why it is not passing yet when its
// runs pass: "pending (stable in 12s)".
func statusWords(c client.Check, now time.Time) string {
	switch {
	case c.Stopped:
		return c.Status.String() + " (stopped)"
	case !c.StableAt.IsZero():
		return c.Status.String() + " (stable in " + stableIn(c, now) + ")"
	}
	return c.Status.String()
}

// stableIn is how long a check waiting to be stable has left to wait, to
// the second (to the millisecond under one), as /readyz?verbose says it.
func stableIn(c client.Check, now time.Time) string {
	return timefmt.Coarse(max(c.StableAt.Sub(now), 0))
}

// resultWords says what a result was: "ok", "ok: MESSAGE", "warn: WARNING",
// "failed: ERROR".
func resultWords(r client.Result) string {
	if d := detail(r); d != "" {
		return verdict(r) + ": " + d
	}
	return verdict(r)
}

func verdict(r client.Result) string {
	switch {
	case r.Warn:
		return "warn"
	case r.OK:
		return "ok"
	case r.Undecided:
		return "undecided"
	}
	return "failed"
}

// detail is a result's output and observed value, on one line.
func detail(r client.Result) string {
	s := oneLine(r.Output)
	if r.ObservedValue != nil {
		v := fmt.Sprint(r.ObservedValue)
		if f, ok := r.ObservedValue.(float64); ok {
			v = strconv.FormatFloat(f, 'g', 4, 64) // a heartbeat's age, a latency: 4 digits say enough
		}
		unit := r.ObservedUnit
		if unit == health.Dimensionless {
			unit = "" // a number with no unit: 12, not 12 1
		}
		s = strings.TrimSpace(s + " (" + strings.TrimSpace(v+" "+unit) + ")")
	}
	return s
}

// age is how long ago t was, to the second; "-" for none.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return max(now.Sub(t), 0).Round(time.Second).String()
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func newCheck(stdout io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		run    bool
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "check NAME [--run] [-o text|json|yaml]",
		Short: "Show one check of a running agent with its kept results; --run runs it now",
		Long: `Show one check of a running agent (vitals run): its configuration, status and
kept results, oldest first. Exit 0 when the check passes (pass or warn), 1 when
it is pending or fails; with --run, the check runs now and the exit code is
that run's: 0 passed, 1 failed. The run counts toward the check's thresholds
like any other, unless the check is stopped or not running (waiting for
startup, or a startup check that has passed).

An unknown check exits 2, as a bad argument does. -o json and -o yaml write
the API's object; with --run, {"result": RUN, "check": CHECK}.`,
		Example: `  vitals check db
  vitals check peer-config --run
  vitals check db -o json | jq '.history[] | select(.ok | not)'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			name := args[0]
			var ran *client.Result
			if run {
				r, err := conn.Run(ctx, name)
				if err != nil {
					return fromAgent(cmd, err)
				}
				ran = &r
			}
			c, err := conn.Check(ctx, name)
			if err != nil {
				return fromAgent(cmd, err)
			}
			var v any = c
			if ran != nil {
				v = struct {
					Result client.Result `json:"result"`
					Check  client.Check  `json:"check"`
				}{*ran, c}
			}
			if output.document() {
				if err := output.write(stdout, v); err != nil {
					return err
				}
			} else {
				writeCheck(stdout, c, ran, time.Now())
			}
			switch {
			case ran != nil && !ran.OK:
				return failed{fmt.Sprintf("%s: %s", name, oneLine(ran.Output))}
			case ran == nil && (c.Status == health.Pending || c.Status == health.Fail):
				return failed{fmt.Sprintf("%s: %s", name, whyNotPassing(c, time.Now()))}
			}
			return nil
		},
	}
	agent.define(cmd)
	cmd.Flags().BoolVar(&run, "run", false, "run the check now; exit 0 if the run passes, 1 if it fails")
	output = addOutput(cmd, false)
	return cmd
}

// whyNotPassing says why a pending or failing check is so.
func whyNotPassing(c client.Check, now time.Time) string {
	if !c.StableAt.IsZero() {
		return fmt.Sprintf("%s: pass, stable in %s", c.Status, stableIn(c, now))
	}
	for i := len(c.History) - 1; i >= 0; i-- {
		if r := c.History[i]; !r.OK {
			return fmt.Sprintf("%s: %s", c.Status, oneLine(r.Output))
		}
	}
	if c.Runs == 0 {
		return fmt.Sprintf("%s: no result yet", c.Status)
	}
	return fmt.Sprintf("%s: %d of %d passes needed", c.Status, c.Successes, c.SuccessThreshold)
}

// resultTime shows when a run began, to the millisecond: runs a period
// apart may share a second.
const resultTime = "2006-01-02T15:04:05.000Z07:00"

func writeCheck(w io.Writer, c client.Check, ran *client.Result, now time.Time) {
	field := func(key, format string, args ...any) {
		fmt.Fprintf(w, "%-14s %s\n", key+":", fmt.Sprintf(format, args...))
	}
	if ran != nil {
		line := fmt.Sprintf("%s in %v", verdict(*ran), ran.Duration)
		if d := detail(*ran); d != "" {
			line += ": " + d
		}
		field("run", "%s", line)
	}
	field("name", "%s", c.Name)
	field("level", "%s", c.Level)
	field("kind", "%s", c.Kind)
	status := c.Status.String()
	if !c.Since.IsZero() {
		status += fmt.Sprintf(" for %s (since %s)", age(c.Since, now), c.Since.Format(time.RFC3339))
	}
	field("status", "%s", status)
	if c.StableFor > 0 {
		stable := c.StableFor.String()
		if !c.StableAt.IsZero() {
			stable += fmt.Sprintf(" (its runs pass: stable in %s, at %s)", stableIn(c, now), c.StableAt.Format(time.RFC3339))
		}
		field("stable for", "%s", stable)
	}
	if c.Stopped {
		field("stopped", "yes: it does not run, and the levels leave it out until it is started")
	}
	field("in a row", "%d passed, %d failed (passes after %d, fails after %d)",
		c.Successes, c.Failures, c.SuccessThreshold, c.FailureThreshold)
	field("runs", "%d", c.Runs)
	field("period", "%v", c.Period)
	if c.Timeout > 0 { // heartbeats and watchdogs run nothing
		field("timeout", "%v", c.Timeout)
		field("initial delay", "%v", c.InitialDelay)
	}
	if len(c.History) == 0 {
		field("history", "none yet")
		return
	}
	fmt.Fprintln(w, "history, oldest first:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range c.History {
		fmt.Fprintf(tw, "  %s\t%v\t%s\n", r.Time.Format(resultTime), r.Duration, resultWords(r))
	}
	tw.Flush()
}

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

func newEvents(stdout, stderr io.Writer) *cobra.Command {
	var (
		agent  agentFlags
		after  uint64
		follow bool
		output *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "events [--after ID] [--follow] [-o text|json|yaml]",
		Short: "Print the events of a running agent; --follow waits for more",
		Long: `Print the events a running agent (vitals run) keeps, oldest first, or those
after the event ID given with --after. With --follow, wait for new events and
print them as they come, until interrupted (exit 0) or until the agent stops.
Ids grow by one: a jump after --after means the agent's log dropped events
before they were read, and a line on stderr says so.

Each line reads ID TIME TYPE and what changed (a notice: its key and data,
as NAME=VALUE); -o json writes each event as
one JSON object per line (the API's form), also when following, and -o yaml
each as a YAML document of its own, after ---.`,
		Example: `  vitals events
  vitals events --follow
  vitals events --after 41 -o json | jq 'select(.type == "check-failed")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			conn, ctx, stop, err := agent.connect(cmd)
			if err != nil {
				return err
			}
			defer stop()
			var wait time.Duration
			if follow {
				wait = followWait
			}
			stopping := false
			for {
				evs, err := conn.Events(ctx, after, wait)
				if follow && ctx.Err() != nil {
					return nil // interrupted: how following ends
				}
				var answered *client.Error
				if err != nil && stopping && !errors.As(err, &answered) {
					return nil // the agent said it was stopping, and it has
				}
				if err != nil {
					return fromAgent(cmd, err)
				}
				if len(evs) > 0 && after > 0 && evs[0].ID > after+1 {
					fmt.Fprintf(stderr, "vitals events: %d events after %d were dropped from the agent's log before they were read\n",
						evs[0].ID-after-1, after)
				}
				for _, e := range evs {
					if output.document() {
						if err := output.writeItem(stdout, e); err != nil {
							return err
						}
					} else {
						fmt.Fprintln(stdout, eventLine(e))
					}
					after = e.ID
					stopping = stopping || e.Type == health.EventStopping
				}
				if !follow {
					return nil
				}
			}
		},
	}
	agent.define(cmd)
	f := cmd.Flags()
	f.Uint64Var(&after, "after", 0, "only the events after this id (0: every event the agent keeps)")
	f.BoolVarP(&follow, "follow", "f", false, "wait for new events and print them as they come")
	output = addOutput(cmd, false)
	return cmd
}

// eventLine is one event on one line: ID TIME TYPE, then what changed.
func eventLine(e health.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d  %s  %s", e.ID, e.Time.Format(resultTime), e.Type)
	switch {
	case e.Type.Transition():
		fmt.Fprintf(&b, "  %s (%s) %s -> %s", e.Check, e.Level, e.From, e.To)
	case e.Check != "": // check-added, -removed, -stopped, -started
		fmt.Fprintf(&b, "  %s (%s)", e.Check, e.Level)
	case e.Service != "":
		fmt.Fprintf(&b, "  %s", e.Service)
		if e.PID != 0 {
			fmt.Fprintf(&b, " pid %d", e.PID)
		}
		if e.ExitCode != nil {
			fmt.Fprintf(&b, " exit code %d", *e.ExitCode)
		} else if e.Signal != "" {
			fmt.Fprintf(&b, " signal %s", e.Signal)
		}
		if e.Restarts > 0 {
			fmt.Fprintf(&b, " restarts %d", e.Restarts)
		}
	case e.Level != 0:
		fmt.Fprintf(&b, "  %s", e.Level)
	case e.Key != "": // notice
		fmt.Fprintf(&b, "  %s", e.Key)
		if len(e.Data) > 0 {
			b.WriteString(" " + escape.Pairs(e.Data))
		}
	}
	if why := cmp.Or(e.Output, e.Reason); why != "" {
		b.WriteString(": " + oneLine(why))
	}
	return b.String()
}

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
