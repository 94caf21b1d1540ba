package kinds

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/probe"
)

// The CLI facet of the table: how vitals probe and vitals wait take a target
// of each kind. A kind declares its flags as it declares its fields, bound
// to what its probe is built from; package target defines every kind's
// flags once on a command's flag set, finds a target's kind by its scheme,
// and builds the probe through the kind's CLI.

// Flag is a flag of a kind's targets. A flag that several kinds take (the
// TLS ones) is one flag of the command, declared alike by each kind, as
// tlsFlags declares the TLS ones.
type Flag struct {
	// Name is the flag's name, without --.
	Name string
	// Usage says what the flag does, for help; help puts the kinds that
	// take it before it.
	Usage string
	// Value is the field the flag's value goes to, as stringFlag,
	// stringsFlag, boolFlag, intFlag or durationFlag bind it.
	Value FlagValue
	// File says the flag's value is a file name, for shell completion.
	File bool
	// Choices are the values the flag takes, for shell completion; nil for
	// any.
	Choices []string
	// Secrets returns what one value of the flag carries that no output may
	// show (a credential of a header, a password in a variable); nil for a
	// flag whose values carry none.
	Secrets func(value string) []string
}

// FlagValue is where a flag's value goes: a field of what a kind's probe
// is built from.
type FlagValue struct {
	// define defines the flag on a flag set, with its zero value as the
	// default.
	define func(f *pflag.FlagSet, name, usage string)
	// take reads the flag's value from a flag set into the field.
	take func(f *pflag.FlagSet, name string) error
}

// Define defines the flag named name on f, with usage and its zero value as
// its default.
func (v FlagValue) Define(f *pflag.FlagSet, name, usage string) { v.define(f, name, usage) }

func flagValue[T any](p *T, define func(f *pflag.FlagSet, name, usage string), get func(f *pflag.FlagSet, name string) (T, error)) FlagValue {
	return FlagValue{define: define, take: func(f *pflag.FlagSet, name string) (err error) {
		*p, err = get(f, name)
		return err
	}}
}

func stringFlag(p *string) FlagValue {
	return flagValue(p, func(f *pflag.FlagSet, name, usage string) { f.String(name, "", usage) }, (*pflag.FlagSet).GetString)
}

// stringsFlag is a flag that may be given more than once, each value whole
// (commas included). Its values are read from the flag itself, not through
// GetStringArray, which parses them back from their CSV form: a lone empty
// value would come back as none, and a CR LF inside one as an LF.
func stringsFlag(p *[]string) FlagValue {
	return flagValue(p, func(f *pflag.FlagSet, name, usage string) { f.StringArray(name, nil, usage) },
		func(f *pflag.FlagSet, name string) ([]string, error) {
			v := f.Lookup(name).Value // defined: the flag was given
			values, ok := v.(pflag.SliceValue)
			if !ok {
				return nil, fmt.Errorf("--%s is a %s, not a repeatable string", name, v.Type())
			}
			return values.GetSlice(), nil
		})
}

func boolFlag(p *bool) FlagValue {
	return flagValue(p, func(f *pflag.FlagSet, name, usage string) { f.Bool(name, false, usage) }, (*pflag.FlagSet).GetBool)
}

func intFlag(p *int) FlagValue {
	return flagValue(p, func(f *pflag.FlagSet, name, usage string) { f.Int(name, 0, usage) }, (*pflag.FlagSet).GetInt)
}

func durationFlag(p *time.Duration) FlagValue {
	return flagValue(p, func(f *pflag.FlagSet, name, usage string) { f.Duration(name, 0, usage) }, (*pflag.FlagSet).GetDuration)
}

// targets is how a kind's targets and flags read into an A, the value its
// probe is built from.
type targets[A any] struct {
	// flags are the kind's flags, reading into a.
	flags func(a *A) []Flag
	// url makes the probe of a URL target, with a as the flags gave it.
	// nil for a kind whose target is a command line.
	url func(target string, a A) (*probe.Prober, error)
	// command makes the probe of the command line after --, with a as the
	// flags gave it; nil for a kind whose targets are URLs.
	command func(argv []string, a A) (*probe.Prober, error)
	// window is how long a target needs to decide, over its runs, with a as
	// the flags gave it: a metric condition's shortest window of increase
	// or rate, which needs two scrapes within it; 0 when one run decides.
	// nil for a kind whose every target decides in one run.
	window func(a A) time.Duration
}

// takes makes c the CLI of a kind whose targets read into an A, as t says.
func takes[A any](c CLI, t targets[A]) *CLI {
	flags := func(a *A) []Flag {
		if t.flags == nil {
			return nil
		}
		return t.flags(a)
	}
	c.flags = func() []Flag { return flags(new(A)) }
	read := func(f *pflag.FlagSet) (A, error) {
		var a A
		for _, fl := range flags(&a) {
			if f.Changed(fl.Name) {
				if err := fl.Value.take(f, fl.Name); err != nil {
					return a, err
				}
			}
		}
		return a, nil
	}
	c.build = func(target string, argv []string, f *pflag.FlagSet) (*probe.Prober, error) {
		a, err := read(f)
		if err != nil {
			return nil, err
		}
		if t.command != nil {
			return t.command(argv, a)
		}
		return t.url(target, a)
	}
	if t.window != nil {
		c.window = func(f *pflag.FlagSet) (time.Duration, error) {
			a, err := read(f)
			if err != nil {
				return 0, err
			}
			return t.window(a), nil
		}
	}
	return &c
}

// Window is how long a target of the kind, with the values of the kind's
// flags that f was given, needs to decide over its runs: 0 when one run
// decides, as vitals probe runs one; the shortest window of a metric
// condition's increase and rate, which needs two scrapes within it.
func (c *CLI) Window(f *pflag.FlagSet) (time.Duration, error) {
	if c.window == nil {
		return 0, nil
	}
	return c.window(f)
}

// Flags are the kind's flags, in the order it declares them.
func (c *CLI) Flags() []Flag {
	if c.flags == nil {
		return nil
	}
	return c.flags()
}

// Builds says whether this build makes probes of the kind's targets: not
// for a kind that cannot run once (Why), nor, in the probe build, for a
// kind whose probe links a client of its own (the dependency kinds).
func (c *CLI) Builds() bool { return c.build != nil }

// Build makes the probe of a URL target of a kind that Builds, with the
// values of the kind's flags that f was given; f has every kind's flags
// defined (by target.DefineFlags), and a flag not given keeps its default.
func (c *CLI) Build(target string, f *pflag.FlagSet) (*probe.Prober, error) {
	return c.build(target, nil, f)
}

// BuildCommand makes the probe of a command line, for the kind whose target
// is one (exec), with the values of its flags that f was given, as Build.
func (c *CLI) BuildCommand(argv []string, f *pflag.FlagSet) (*probe.Prober, error) {
	return c.build("", argv, f)
}

// parseTarget parses a URL target, for the kinds that read its parts.
func parseTarget(target string) (*url.URL, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	return u, nil
}

// hostPort is the HOST:PORT of a target that is nothing more, such as
// tcp://HOST:PORT.
func hostPort(target string) (string, error) {
	u, err := parseTarget(target)
	if err != nil {
		return "", err
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("target %q: want %s://HOST:PORT", target, u.Scheme)
	}
	return u.Host, nil
}

// requestArgs are what the flags of an HTTP request read into, beside its
// URL: of http and metric targets, as requestFields are in the file.
type requestArgs struct {
	headers   []string // --header "Name: value"
	tokenFile string
	tls       probe.TLSOptions
}

// requestFlags are the flags of an HTTP request, read into a.
func requestFlags(a *requestArgs) []Flag {
	return append([]Flag{
		{Name: "header", Value: stringsFlag(&a.headers), Usage: `a request header "Name: value" (repeatable; Host sets the virtual host)`,
			Secrets: func(h string) []string {
				name, value, _ := strings.Cut(h, ":")
				return redact.Header(strings.TrimSpace(name), strings.TrimSpace(value))
			}},
		{Name: "bearer-token-file", Value: stringFlag(&a.tokenFile), File: true,
			Usage: "a file whose content is sent as Authorization: Bearer TOKEN (a service account's token)"},
	}, tlsFlags(&a.tls)...)
}

// apply sets the request's fields of s from the flags.
func (a requestArgs) apply(s *probe.HTTPSpec) error {
	h, err := parseHeaders("header", "value", a.headers)
	if err != nil {
		return err
	}
	s.Header, s.BearerTokenFile, s.TLS = h, a.tokenFile, a.tls
	return nil
}

// parseHeaders reads the "Name: value" lines of --header, or of another
// flag of such lines, whose value is what.
func parseHeaders(flag, what string, lines []string) (http.Header, error) {
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--%s %q: want \"Name: %s\"", flag, l, what)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// tlsFlags are the flags that say how a server is verified and who the
// probe is to it, read into o: of http, tls and grpc, as tlsFields are in
// the file.
func tlsFlags(o *probe.TLSOptions) []Flag {
	return []Flag{
		{Name: "insecure", Value: boolFlag(&o.InsecureSkipVerify), Usage: "accept any server certificate"},
		{Name: "ca-file", Value: stringFlag(&o.CAFile), File: true, Usage: "PEM roots to verify the server with"},
		{Name: "cert", Value: stringFlag(&o.CertFile), File: true, Usage: "PEM client certificate"},
		{Name: "key", Value: stringFlag(&o.KeyFile), File: true, Usage: "PEM key of the client certificate"},
		{Name: "server-name", Value: stringFlag(&o.ServerName), Usage: "the name to verify and send as SNI"},
	}
}
