package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/target"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

const targetHelp = `Targets name their kind by scheme:
  http://HOST[:PORT]/PATH, https://...   an HTTP answer with an expected status (default 200-399)
  tcp://HOST:PORT                        a TCP connect, optionally --send/--expect
  tls://HOST:PORT                        a TLS handshake and the certificate's remaining validity
  file:///PATH                           a file that exists (--non-empty, --regular, --max-age, --content)
  dns://NAME, dns://SERVER/NAME          a name that resolves (--type, --expect)
  -- COMMAND [ARGS...]                   a command that exits 0 (no shell)`

func newProbe(stdout, stderr io.Writer) *cobra.Command {
	var (
		o       target.Options
		timeout time.Duration
		verbose bool
		output  string
	)
	cmd := &cobra.Command{
		Use:   "probe TARGET | probe -- COMMAND [ARGS...]",
		Short: "Run one check now: exit 0 if it passes, 1 if it fails",
		Long: `Run one check now and exit 0 if it passes, 1 if it fails, 2 on bad usage.
Quiet on success unless -v; on failure, one line on stderr says why.
A static binary with no dependencies: the exec probe for images without curl.

` + targetHelp,
		Example: `  vitals probe http://localhost:8080/healthz
  vitals probe https://api.internal/ready --status 200,204 --ca-file /etc/ssl/internal.pem
  vitals probe http://localhost:8080/ --body '"status":"ok"' --header 'Host: api.example.com'
  vitals probe tcp://localhost:6379 --send 'PING\r\n' --expect '+PONG'
  vitals probe file:///config/peer1/peer1.conf --non-empty --max-age 10m
  vitals probe tls://example.com:443 --min-validity 168h -o json
  vitals probe --timeout 5s -- pg_isready -h localhost`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if timeout <= 0 {
				return fmt.Errorf("--timeout %v: must be positive", timeout)
			}
			o.Set = cmd.Flags().Changed
			targets, argv, err := splitArgs(cmd, args)
			if err != nil {
				return err
			}
			if len(targets)+btoi(argv != nil) != 1 {
				return fmt.Errorf("probe takes one target: a URL, or -- COMMAND [ARGS...] (got %d)", len(targets)+btoi(argv != nil))
			}
			probes, err := buildAll(targets, argv, o, true)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			p := probes[0]
			r := health.Run(ctx, p, timeout)
			if output == "json" {
				if err := writeJSON(stdout, resultOf(p, r)); err != nil {
					return err
				}
			}
			if !r.OK {
				return failed{fmt.Sprintf("%s: %s", p, oneLine(r.Output))}
			}
			if verbose && output == "text" {
				fmt.Fprintf(stdout, "ok: %s: %s\n", p, describe(r))
			}
			return nil
		},
	}
	f := cmd.Flags()
	addKindFlags(f, &o)
	f.DurationVar(&timeout, "timeout", time.Second, "give up on the check after this long (the kubelet's default)")
	f.BoolVarP(&verbose, "verbose", "v", false, "say what passed, too")
	f.StringVarP(&output, "output", "o", "text", "text, or json for the result as JSON on stdout")
	return cmd
}

// addKindFlags defines the kinds' flags; each applies to the kinds that
// target.Kinds names for it, and is refused for others.
func addKindFlags(f *pflag.FlagSet, o *target.Options) {
	f.StringVar(&o.Method, "method", "", "http: request method (default GET)")
	f.StringVar(&o.Status, "status", "", "http: statuses that pass, as codes and ranges (default 200-399)")
	f.StringVar(&o.Body, "body", "", "http: a regular expression the body must match (first 10 KiB)")
	f.StringVar(&o.NotBody, "not-body", "", "http: a regular expression the body must not match")
	f.StringArrayVar(&o.Header, "header", nil, `http: a request header "Name: value" (repeatable; Host sets the virtual host)`)
	f.BoolVar(&o.Insecure, "insecure", false, "http, tls: accept any server certificate")
	f.StringVar(&o.CAFile, "ca-file", "", "http, tls: PEM roots to verify the server with")
	f.StringVar(&o.CertFile, "cert", "", "http, tls: PEM client certificate")
	f.StringVar(&o.KeyFile, "key", "", "http, tls: PEM key of the client certificate")
	f.StringVar(&o.ServerName, "server-name", "", "http, tls: the name to verify and send as SNI")
	f.StringVar(&o.Send, "send", "", `tcp: bytes to send after connecting (escapes \r \n \t \\ \xHH)`)
	f.StringArrayVar(&o.Expect, "expect", nil, "tcp: text the answer must contain; dns: an answer that must be there (repeatable)")
	f.BoolVar(&o.NonEmpty, "non-empty", false, "file: the file must not be empty")
	f.BoolVar(&o.Regular, "regular", false, "file: the file must be a regular file")
	f.DurationVar(&o.MaxAge, "max-age", 0, "file: the file must have been modified within this long")
	f.StringVar(&o.Content, "content", "", "file: a regular expression the content must match")
	f.StringVar(&o.Type, "type", "", "dns: record type: A, AAAA, CNAME, MX, TXT or NS (default any address)")
	f.DurationVar(&o.MinValidity, "min-validity", 0, "tls: the certificate must stay valid at least this long")
	f.StringArrayVar(&o.Env, "env", nil, "exec: KEY=VALUE for the command's environment (repeatable)")
	f.StringVar(&o.Dir, "dir", "", "exec: working directory of the command")
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

// buildAll builds every target, reporting every bad one at once. Each kind
// flag must apply to every target (single) or to at least one (several).
func buildAll(targets, argv []string, o target.Options, single bool) ([]*probe.Prober, error) {
	var probes []*probe.Prober
	var errs []string
	kinds := map[string]bool{}
	for _, t := range targets {
		kind, err := target.KindOf(t)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		kinds[kind] = true
		if unfit := o.Unfit(kind); single && len(unfit) > 0 {
			errs = append(errs, fmt.Sprintf("%s does not apply to a %s target (%s)", strings.Join(unfit, ", "), kind, t))
			continue
		}
		p, err := target.Build(t, o)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		probes = append(probes, p)
	}
	if argv != nil {
		kinds["exec"] = true
		if unfit := o.Unfit("exec"); single && len(unfit) > 0 {
			errs = append(errs, fmt.Sprintf("%s does not apply to a command", strings.Join(unfit, ", ")))
		} else if p, err := target.BuildExec(argv, o); err != nil {
			errs = append(errs, err.Error())
		} else {
			probes = append(probes, p)
		}
	}
	if !single {
		for flag, fits := range target.Kinds {
			if o.Set != nil && o.Set(flag) && !anyOf(fits, kinds) {
				errs = append(errs, fmt.Sprintf("--%s applies to %s targets, and there is none", flag, strings.Join(fits, " and ")))
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\nvitals: "))
	}
	return probes, nil
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

func checkOutput(o string) error {
	if o != "text" && o != "json" {
		return fmt.Errorf("--output %q: use text or json", o)
	}
	return nil
}

// result is a probe's result as -o json writes it.
type result struct {
	Target        string    `json:"target"`
	Kind          string    `json:"kind"`
	OK            bool      `json:"ok"`
	Output        string    `json:"output,omitempty"`
	ObservedValue any       `json:"observedValue,omitempty"`
	ObservedUnit  string    `json:"observedUnit,omitempty"`
	Time          time.Time `json:"time"`
	Duration      string    `json:"duration"`
}

func resultOf(p *probe.Prober, r health.Result) result {
	return result{Target: p.String(), Kind: p.Kind(), OK: r.OK, Output: r.Output,
		ObservedValue: r.ObservedValue, ObservedUnit: r.ObservedUnit, Time: r.Time, Duration: r.Duration.String()}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneLine folds a multi-line output (a command's) into one line, so that a
// failure is one line on stderr.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// describe says what a passing result saw: its message, or else what it
// observed.
func describe(r health.Result) string {
	switch {
	case r.Output != "":
		return oneLine(r.Output)
	case r.ObservedValue != nil:
		return strings.TrimSpace(fmt.Sprintf("%v %s", r.ObservedValue, r.ObservedUnit))
	}
	return "passed"
}
