package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
	"github.com/vitals-dev/vitals/probe"
)

// The probe's example of a dependency target, in the full build only.
var depsProbeExample = func() string {
	if !target.Builds("postgres") {
		return ""
	}
	return `
  vitals probe "postgres://app:$PGPASSWORD@db:5432/app?sslmode=require"`
}()

func newProbe(stdout, stderr io.Writer) *cobra.Command {
	var (
		o       target.Options
		timeout time.Duration
		verbose bool
		output  *outputFlag
	)
	cmd := &cobra.Command{
		Use:   "probe TARGET | probe -- COMMAND [ARGS...]",
		Short: "Run one check now: exit 0 if it passes, 1 if it fails",
		Long: `Run one check now and exit 0 if it passes, 1 if it fails, 2 on bad usage.
Quiet on success unless -v; on failure, one line on stderr says why. -o json
and -o yaml write the result on stdout, whether it passed or failed.
A static binary with no dependencies: the exec probe for images without curl.

` + target.Help,
		Example: `  vitals probe http://localhost:8080/healthz
  vitals probe https://api.internal/ready --status 200,204 --ca-file /etc/ssl/internal.pem
  vitals probe http://localhost:8080/ --body '"status":"ok"' --header 'Host: api.example.com'
  vitals probe http://localhost:8080/actuator/health --json '$.status=UP'
  vitals probe http://localhost:8080/app --no-follow-redirects --status 302 --response-header 'Location: ^/login'
  vitals probe tcp://localhost:6379 --send 'PING\r\n' --expect '+PONG'
  vitals probe file:///config/peer1/peer1.conf --non-empty --max-age 10m
  vitals probe tls://example.com:443 --min-validity 168h -o json
  vitals probe grpc://localhost:50051/readiness
  vitals probe metrics+http://localhost:8080/metrics --expr 'max(workqueue_longest_running_processor_seconds) < 5m'
  vitals probe http://localhost:8080/status --json '$.queue.depth=< 100' --max-duration 300ms` + depsProbeExample + `
  vitals probe --timeout 5s -- pg_isready -h localhost`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := positive(map[string]time.Duration{"timeout": timeout}); err != nil {
				return err
			}
			if err := underTimeout(cmd.Flags(), "timeout", timeout); err != nil {
				return err
			}
			targets, argv, err := splitArgs(cmd, args)
			if err != nil {
				return err
			}
			if len(targets)+btoi(argv != nil) != 1 {
				return fmt.Errorf("probe takes one target: a URL, or -- COMMAND [ARGS...] (got %d)", len(targets)+btoi(argv != nil))
			}
			probes, err := buildAll(cmd.Flags(), targets, argv, o, true)
			if err != nil {
				return err
			}
			defer closeAll(probes)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			p := probes[0]
			r := health.Run(ctx, p.Prober, timeout)
			if output.document() {
				if err := output.write(stdout, resultOf(p, r)); err != nil {
					return err
				}
			}
			switch {
			case r.Undecided:
				// A check that decides over several runs (a rate needs two
				// scrapes) decides nothing in one: no run of this command
				// can pass or fail it.
				return configError{fmt.Errorf("%s: %s: vitals probe runs a check once, and this one decides over several runs: use vitals wait, which runs it until it decides, or a check of vitals run",
					p, oneLine(r.Output))}
			case !r.OK:
				return failed{fmt.Sprintf("%s: %s", p, oneLine(r.Output))}
			}
			if verbose && !output.document() {
				fmt.Fprintf(stdout, "ok: %s: %s\n", p, describe(r))
			}
			return nil
		},
	}
	f := cmd.Flags()
	o = target.DefineFlags(f)
	f.DurationVar(&timeout, "timeout", time.Second, "give up on the check after this long (the kubelet's default)")
	f.BoolVarP(&verbose, "verbose", "v", false, "say what passed, too")
	output = addOutput(cmd, false)
	completeValues(cmd)
	return cmd
}

// completeValues offers the values of the flags that have a fixed set.
func completeValues(cmd *cobra.Command) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	for flag, values := range target.Choices() {
		cmd.RegisterFlagCompletionFunc(flag, fixed(values...))
	}
}

// positive checks that every duration flag is above zero.
func positive(durations map[string]time.Duration) error {
	for _, flag := range slices.Sorted(maps.Keys(durations)) {
		if d := durations[flag]; d <= 0 {
			return fmt.Errorf("--%s %v: must be positive", flag, d)
		}
	}
	return nil
}

// underTimeout checks that --max-duration, a bound on an answer's time, is
// under the timeout flag's, which ends the check first: the file's rule
// (the http kind's timing).
func underTimeout(f *pflag.FlagSet, flag string, timeout time.Duration) error {
	if d, err := f.GetDuration("max-duration"); err == nil && f.Changed("max-duration") && d >= timeout {
		return fmt.Errorf("--max-duration %v is not under --%s %v, which ends the check first", d, flag, timeout)
	}
	return nil
}

// splitArgs separates URL targets from a command given after --.
func splitArgs(cmd *cobra.Command, args []string) (targets, argv []string, err error) {
	dash := cmd.ArgsLenAtDash()
	if dash < 0 {
		return args, nil, nil
	}
	if dash == len(args) {
		return nil, nil, fmt.Errorf("-- must be followed by a command")
	}
	return args[:dash], args[dash:], nil
}

// buildAll builds every target, reporting every bad one at once. A kind flag
// must apply to the target (single) or to at least one of them (several), and
// a flag given must have a value.
//
// Each probe is built shown (see show): its name and every output with the
// secrets of the command line and of the environment hidden, so that no line
// and no JSON the command writes shows them.
func buildAll(flags *pflag.FlagSet, targets, argv []string, o target.Options, single bool) ([]target.Target, error) {
	var probes []target.Target
	var errs []string
	rd := redactor(targets, o, os.Environ())
	for _, name := range o.Given() {
		if f := flags.Lookup(name); f != nil && f.Value.Type() == "string" && f.Value.String() == "" {
			errs = append(errs, fmt.Sprintf("--%s is empty: give it a value, or leave it out", name))
		}
	}
	kinds := map[string]bool{}
	for _, t := range targets {
		kind, err := target.KindOf(t)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		kinds[kind] = true
		if unfit := o.Unfit(kind); single && len(unfit) > 0 {
			errs = append(errs, fmt.Sprintf("%s does not apply to %s target (%s)", strings.Join(unfit, ", "), article(kind), t))
			continue
		}
		if w := target.Window(t, o); single && w > 0 {
			// vitals probe runs a target once: one that cannot decide in one
			// run is bad usage, whatever the answer would be.
			errs = append(errs, fmt.Sprintf("target %q: increase and rate need two scrapes within their window (%v), and vitals probe scrapes once: use vitals wait, which scrapes until they decide, or a check of vitals run", t, w))
			continue
		}
		p, err := target.Build(t, o)
		if err != nil {
			// Said once: a bad --kubeconfig is the error of every k8s:// target.
			if !slices.Contains(errs, err.Error()) {
				errs = append(errs, err.Error())
			}
			continue
		}
		probes = append(probes, show(p, rd))
	}
	if argv != nil {
		kinds["exec"] = true
		if unfit := o.Unfit("exec"); single && len(unfit) > 0 {
			errs = append(errs, fmt.Sprintf("%s does not apply to a command", strings.Join(unfit, ", ")))
		} else if p, err := target.BuildExec(argv, o); err != nil {
			errs = append(errs, err.Error())
		} else {
			probes = append(probes, show(p, rd))
		}
	}
	if !single {
		for _, name := range o.Given() {
			if fits := target.KindsOf(name); !anyOf(fits, kinds) {
				errs = append(errs, fmt.Sprintf("--%s applies to %s targets, and there is none", name, strings.Join(fits, " and ")))
			}
		}
	}
	if len(errs) > 0 {
		closeAll(probes)
		return nil, fmt.Errorf("%s", rd.Redact(strings.Join(errs, "\nvitals: ")))
	}
	return probes, nil
}

// closeAll closes every probe, all at once, and waits: a dependency's probe
// says goodbye to its server on the connection it kept (a Terminate, a
// connection.close), within a second. That changes nothing of a result the
// command has, so a close that fails is not the command's failure.
func closeAll(probes []target.Target) {
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Go(func() { p.Close() })
	}
	wg.Wait()
}

// article puts "a" or "an" before a kind's name.
func article(kind string) string {
	if strings.ContainsRune("aeiou", rune(kind[0])) || kind == "http" {
		return "an " + kind
	}
	return "a " + kind
}

func anyOf(kinds []string, have map[string]bool) bool {
	for _, k := range kinds {
		if have[k] {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// result is a probe's result as -o json and -o yaml write it.
type result struct {
	Target        string    `json:"target"`
	Kind          string    `json:"kind"`
	OK            bool      `json:"ok"`
	Undecided     bool      `json:"undecided,omitempty"` // the run decided nothing yet (client.Result.Undecided)
	Output        string    `json:"output,omitempty"`
	ObservedValue any       `json:"observedValue,omitempty"`
	ObservedUnit  string    `json:"observedUnit,omitempty"`
	Time          time.Time `json:"time"`
	Duration      string    `json:"duration"`
	// Kubernetes is what a k8s:// target of vitals wait found: the document
	// of package kubewait's Result (the objects, the pods' names).
	Kubernetes any `json:"kubernetes,omitempty"`
}

// resultOf is r as JSON shows it; its output, redacted already (see show),
// escaped as the agent's JSON escapes it.
func resultOf(p target.Target, r health.Result) result {
	return result{Target: p.String(), Kind: p.Kind(), OK: r.OK, Undecided: r.Undecided, Output: escape.Text(r.Output),
		ObservedValue: r.ObservedValue, ObservedUnit: r.ObservedUnit, Time: r.Time, Duration: r.Duration.String()}
}

// oneLine folds a multi-line output (a command's) into one line, so that a
// failure is one line on stderr, and escapes what a terminal would act on
// (an escape sequence in a command's output must not clear the screen or
// forge earlier lines).
func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return escape.Line(s)
}

// describe says what a passing result saw: its message, or else what it
// observed.
func describe(r health.Result) string {
	switch {
	case r.Output != "":
		return oneLine(r.Output)
	case r.ObservedValue != nil && r.ObservedUnit == health.Dimensionless:
		return fmt.Sprint(r.ObservedValue)
	case r.ObservedValue != nil:
		return strings.TrimSpace(fmt.Sprintf("%v %s", r.ObservedValue, r.ObservedUnit))
	}
	return "passed"
}

// redactor hides what the one-shot commands' targets and flags carry, as the
// agent hides a file's secrets (package redact): the passwords, tokens and
// secret-named query values of the target URLs, what the kind flags given
// carry as their kinds say (the credentials of --header: Authorization,
// X-Api-Key, …; the secret-named variables of --env), and the secret-named
// variables of env, vitals's own environment, which a command it runs
// inherits (and may print: the kubelet copies an exec probe's output into
// Events).
func redactor(targets []string, o target.Options, env []string) *redact.Redactor {
	var secrets []string
	for _, t := range targets {
		secrets = append(secrets, redact.URL(t)...)
	}
	secrets = append(secrets, o.Secrets()...)
	secrets = append(secrets, redact.Environ(env)...)
	return redact.New(secrets...)
}

// show is p as the one-shot commands show it: a probe of its own, made with
// probe.New around p, whose name and whose every run's message and error
// have their secrets hidden at the source, so that every line, -v and -o
// json get the same safe text. A target that the wait watches (k8s://)
// stays one, its reports hidden alike. Its Close closes p.
func show(p target.Target, rd *redact.Redactor) target.Target {
	measure := func(ctx context.Context) (health.Observation, error) {
		obs, err := p.Measure(ctx)
		obs.Message = rd.Redact(obs.Message)
		return obs, hide(rd, err)
	}
	s := target.Target{Prober: probe.New(p.Kind(), rd.Redact(p.String()), measure, p.Close)}
	if p.Watch != nil {
		s.Watch = func(ctx context.Context, report func(health.Result, any)) error {
			return hide(rd, p.Watch(ctx, func(r health.Result, found any) {
				r.Output = rd.Redact(r.Output)
				report(r, hideDocument(rd, found))
			}))
		}
	}
	return s
}

// hideDocument is what a watched target found, as the document -o json
// writes, with every string in it redacted.
func hideDocument(rd *redact.Redactor, found any) any {
	if found == nil {
		return nil
	}
	var doc any
	b, err := json.Marshal(found)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		return nil // a document that JSON cannot write is not shown
	}
	var hideIn func(v any) any
	hideIn = func(v any) any {
		switch x := v.(type) {
		case string:
			return rd.Redact(x)
		case map[string]any:
			for k, e := range x {
				x[k] = hideIn(e)
			}
		case []any:
			for i, e := range x {
				x[i] = hideIn(e)
			}
		}
		return v
	}
	return hideIn(doc)
}

// hide returns err with its text redacted; it unwraps to err (a deadline
// stays a deadline).
func hide(rd *redact.Redactor, err error) error {
	if err == nil {
		return nil
	}
	return hidden{err, rd.Redact(err.Error())}
}

// hidden is an error whose text has its secrets hidden, wrapping the error
// as it was for errors.Is and errors.As.
type hidden struct {
	err  error
	text string
}

func (h hidden) Error() string { return h.text }
func (h hidden) Unwrap() error { return h.err }
