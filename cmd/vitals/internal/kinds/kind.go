// Package kinds is the table of the kinds a check may have: the only list
// of them. Each kind, in a file of its own, declares its name, its YAML
// fields (read with positions through config's Decoder), a minimal example,
// how a block is checked when the file loads, and how its checker is built.
// config reads a check's block through the table (config.Kinds), the agent
// builds checkers with Table.Build, vitals probe and vitals wait take its
// targets and flags through package target (a kind's CLI), and
// docs/reference/config.md is generated from it. Adding a kind is one new
// file and one line in All.
//
// kinds imports config and the packages that build checkers (probe,
// grpchealth, deps, logwatch, procnet); config imports none of them. In the probe
// build (-tags vitals_probe) the dependency kinds are names and schemes
// only (deps_probe.go), so that it links none of their clients.
package kinds

import (
	"io"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/spf13/pflag"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// All is every kind, in the order the reference lists them.
var All = Table{
	&HTTP, &TCP, &TLS, &Exec, &File, &DNS, &GRPC, &Metric, &Log, &Heartbeat, &Watchdog, &Notify,
	&Connection, &Listening,
	&Postgres, &Redis, &AMQP, &NATS,
}

// Kind is one kind of check: what the file says of it, and how it is built.
// Its unexported parts come from define.
type Kind struct {
	// Name is the kind's key in a check, such as http.
	Name string
	// Summary says what a check of the kind does, in one line.
	Summary string
	// Example is a minimal block of the kind that loads, in YAML's flow
	// style: the reference shows it, and a test loads and builds it.
	Example string
	// ComponentType is what a check of the kind checks, as the IETF
	// health+json answers say it (componentType), unless the check says
	// otherwise (component-type): datastore for a database or a cache the
	// workload keeps its data in (postgres, redis); system for another
	// system it depends on and does not keep its data in (a broker, the
	// resolver); component for a part of the workload itself. A kind that
	// probes an address (http, tcp, tls, grpc) is component, since in
	// vitals run it most often checks the workload beside it, its port or
	// its endpoint: a check of an upstream service says system.
	ComponentType string
	// FailureThreshold is the failure-threshold of the kind's checks that
	// give none; 0 for the kubelet's, 3, which forgives a lost packet. A
	// kind whose failure is an event at a moment (a line in the workload's
	// output, a ttl passing) says health.EventFailureThreshold, 1, so that
	// its checks fail at that moment rather than two periods later; a check
	// may still give more. Where only some of the kind's checks fail on
	// events (block.events), the others keep the kubelet's: a check that
	// waits for something to come ("no line yet") is not failing at a
	// moment, and would fail at its first run.
	FailureThreshold int
	// EventsWhen says, for the reference, which of the kind's checks fail
	// on events and so have FailureThreshold: "" for every one.
	EventsWhen string
	// CLI is how vitals probe and vitals wait take a target of the kind,
	// or why they take none.
	CLI *CLI
	// Import says which checks of other formats vitals import maps to the
	// kind; nil: none.
	Import *Import
	// Details is what the reference says of the kind after its fields, in
	// Markdown, for a kind with more to say than a field's line holds (the
	// metric kind's grammar); "" for none.
	Details string
	// Rules are what the schema (docs/reference/vitals.schema.json) says of
	// a block beyond its fields, in JSON Schema's words: the kind's rules on
	// which fields go together. nil: none.
	Rules config.Schema

	// spec returns a new spec and the fields of the block reading into it.
	spec func() (spec any, fields []config.Field)
	// check is what Decode checks of a block whose fields read without
	// error; it returns the spec as the file means it.
	check func(d *config.Decoder, n ast.Node, path string, spec any, given config.Given) any
	// build makes the checker of a check named name from its spec.
	build func(name string, spec any, env Env) (health.Checker, error)
	// events says whether the checks of a spec fail on events, and so have
	// FailureThreshold; nil: every one does.
	events func(spec any) bool
	// feed is what the workload feeds the kind's checks with; 0 for a kind
	// that runs.
	feed config.Feed
	// deadline is a fed kind's ttl or limit, read from its spec.
	deadline func(spec any) time.Duration
	// timing says what is wrong with a spec at a check's period and
	// timeout; nil: nothing can be.
	timing func(spec any, period, timeout time.Duration) error
}

// CLI is how vitals probe and vitals wait take a target of a kind (cli.go):
// its schemes, its flags, and how a target and the flags become its probe.
// Its unexported parts come from takes.
type CLI struct {
	// Schemes are the URL schemes of the kind's targets, such as http and
	// https; none when the target is the command line after --.
	Schemes []string
	// Target is how the reference and help write a target, such as
	// "http://HOST[:PORT]/PATH" or "-- COMMAND [ARGS...]"; "" for none.
	Target string
	// Help says what a target checks, in a few words, for the commands'
	// help on targets.
	Help string
	// Example is a target of the kind that builds a probe, as typed after
	// vitals probe: for the tests, which run it.
	Example string
	// ExampleFlags are the flags the example needs, name and value, as
	// given on a command line: a metric target's --expr. None for most.
	ExampleFlags []string
	// Why says why vitals probe and vitals wait run no check of the kind,
	// to a target that names it (log://app): what the kind judges happens
	// over time, inside vitals run. "" for a kind they run.
	Why string

	// flags are the kind's flags, bound to a value of their own.
	flags func() []Flag
	// build makes the probe of a URL target or of a command line (argv),
	// reading the kind's flags from a flag set.
	build func(target string, argv []string, f *pflag.FlagSet) (*probe.Prober, error)
	// window is how long a target needs to decide over its runs, with the
	// kind's flags read from a flag set; nil: one run decides.
	window func(f *pflag.FlagSet) (time.Duration, error)
}

// Env is what a checker is built against: the parts of the agent that a
// kind hooks its checks into.
type Env struct {
	// Output registers a log check with the workload's output, which it
	// reads from then on. nil when there is no workload: a log check then
	// fails to build.
	Output func(*logwatch.Check)
	// Workload registers a check that looks at the workload's processes
	// (a connection or listening check that names no others), and returns
	// what gives the pid of the workload's run that runs now, 0 between
	// runs. nil when there is no workload: such a check then fails to
	// build.
	Workload func(check string) (pid func() int)
	// Notify makes the checker of a notify check named name, with its
	// watchdog (0: none), which answers from what the workload says of
	// itself (package notify). nil when there is no workload: a notify
	// check then fails to build.
	Notify func(name string, watchdog time.Duration) health.Checker
}

// block is a kind's block read into a spec of type S.
type block[S any] struct {
	// fields are the block's fields, reading into s.
	fields func(s *S) []config.Field
	// check is what is checked of a block whose fields read without error,
	// with the nodes of the fields given, for errors at the field; it may
	// complete s. nil: s is checked by building its checker, whose error is
	// said at the block.
	check func(d *config.Decoder, n ast.Node, path string, s *S, given config.Given)
	// build makes the checker of the check named name; nil for a fed
	// kind.
	build func(name string, s S, env Env) (health.Checker, error)
	// offline is what is checked of a block in place of building it when
	// the file is checked for another machine (config.Decoder.Offline), for
	// a kind whose build looks for what that machine has; nil: it is built
	// all the same.
	offline func(s S) error
	// tls is the block's TLS options, for a kind that has the TLS fields:
	// their files are read where the check runs, so a file checked for
	// another machine is built without them, once the options are
	// validated. nil: no TLS fields.
	tls func(s *S) *probe.TLSOptions
	// token is the block's bearer-token-file, for a kind that has one: read
	// where the check runs too, so a file checked for another machine is
	// built without it. nil: none.
	token func(s *S) *string
	// events says whether the checks of s fail on events at a moment (a
	// fail-pattern line, a watchdog running out), and so have the kind's
	// FailureThreshold; nil: every check of the kind does.
	events func(s S) bool
	// feed is what the workload feeds the kind's checks with, through the
	// management API: config.Beats (a heartbeat) or config.Units (a
	// watchdog); 0 for a kind that runs, with a build.
	feed config.Feed
	// deadline is a fed kind's ttl or limit.
	deadline func(s S) time.Duration
	// timing says what is wrong with s at a check's period and timeout:
	// what a run cannot judge in its timeout, or a window that holds too
	// few runs. nil: nothing can be.
	timing func(s S, period, timeout time.Duration) error
}

// define makes k a kind whose blocks read into an S, as b says.
func define[S any](k Kind, b block[S]) Kind {
	k.spec = func() (any, []config.Field) {
		s := new(S)
		return s, b.fields(s)
	}
	name := k.Name
	k.check = func(d *config.Decoder, n ast.Node, path string, spec any, given config.Given) any {
		s := spec.(*S)
		switch {
		case b.check != nil:
			b.check(d, n, path, s, given)
		case b.offline != nil && d.Offline():
			if err := b.offline(*s); err != nil {
				d.Errorf(n, path, "%s", probe.WithoutKind(err))
			}
		case b.build != nil:
			// Built once to be checked, as it will be built to run: a
			// dependency's connection is dialled at its first run, not
			// here.
			built := *s
			if b.tls != nil && d.Offline() {
				o := b.tls(&built)
				if err := o.Validate(); err != nil {
					d.Errorf(n, path, "%v", err)
					break
				}
				*o = o.WithoutFiles()
			}
			if b.token != nil && d.Offline() {
				*b.token(&built) = ""
			}
			checker, err := b.build(checkName(path, name), built, Env{})
			if err != nil {
				d.Errorf(n, path, "%s", probe.WithoutKind(err))
			} else if c, ok := checker.(io.Closer); ok {
				c.Close()
			}
		}
		return *s
	}
	if b.build != nil {
		k.build = func(name string, spec any, env Env) (health.Checker, error) { return b.build(name, spec.(S), env) }
	}
	if b.feed != 0 {
		k.feed = b.feed
		k.deadline = func(spec any) time.Duration { return b.deadline(spec.(S)) }
	}
	if b.events != nil {
		k.events = func(spec any) bool { return b.events(spec.(S)) }
	}
	if b.timing != nil {
		k.timing = func(spec any, period, timeout time.Duration) error { return b.timing(spec.(S), period, timeout) }
	}
	return k
}

// checkName is the name of the check whose kind's block is at path,
// checks.NAME.KIND.
func checkName(path, kind string) string {
	return strings.TrimSuffix(strings.TrimPrefix(path, "checks."), "."+kind)
}

// Decode reads a block of the kind (config.Kind).
func (k *Kind) Decode(d *config.Decoder, n ast.Node, path string) any {
	spec, fields := k.spec()
	mark := d.Failures()
	given, ok := d.Fields(n, path, fields)
	if !ok || d.Failures() > mark {
		return nil
	}
	return k.check(d, n, path, spec, given)
}

// Fed says whether the workload feeds the kind's checks, and how
// (config.Kind).
func (k *Kind) Fed(spec any) config.Fed {
	if k.feed == 0 || spec == nil {
		return config.Fed{Feed: k.feed}
	}
	return config.Fed{Feed: k.feed, Deadline: k.deadline(spec)}
}

// DefaultComponentType is the componentType of the kind's checks that say
// none (config.Kind).
func (k *Kind) DefaultComponentType() string { return k.ComponentType }

// DefaultFailureThreshold is the failure-threshold of the kind's checks of
// spec that give none (config.Kind): FailureThreshold for those that fail
// on events, 0 (the kubelet's) for the others. spec is nil when the block
// had errors.
func (k *Kind) DefaultFailureThreshold(spec any) int {
	if k.events != nil && spec != nil && !k.events(spec) {
		return 0
	}
	return k.FailureThreshold
}

// Timing says what is wrong with the kind's spec at a check's period and
// timeout (config.Kind); nil when nothing is.
func (k *Kind) Timing(spec any, period, timeout time.Duration) error {
	if k.timing == nil || spec == nil {
		return nil
	}
	return k.timing(spec, period, timeout)
}

// Fields are the fields of the kind's block, for the reference.
func (k *Kind) Fields() []config.Field {
	_, fields := k.spec()
	return fields
}

// Table is a table of kinds; All is vitals's.
type Table []*Kind

// Names is every kind's name, sorted (config.Kinds).
func (t Table) Names() []string {
	names := make([]string, len(t))
	for i, k := range t {
		names[i] = k.Name
	}
	slices.Sort(names)
	return names
}

// Kind returns the kind named name (config.Kinds).
func (t Table) Kind(name string) (config.Kind, bool) {
	k := t.Lookup(name)
	return k, k != nil
}

// Lookup returns the kind named name, nil if there is none.
func (t Table) Lookup(name string) *Kind {
	for _, k := range t {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// Build builds the checker of c, a check that config read through t,
// against env. An error is a config.Error at the check's kind block. A
// checker that keeps a connection between runs is an io.Closer: close it
// once the check has stopped. A heartbeat or a watchdog has no checker: it
// runs nothing, and health.Monitor.Heartbeat or Watchdog adds it, with
// c.Fed.
func (t Table) Build(c config.Check, env Env) (health.Checker, error) {
	k := t.Lookup(c.Kind)
	switch {
	case k == nil:
		return nil, c.Errorf("no kind %q in the table", c.Kind)
	case k.build == nil:
		return nil, c.Errorf("a %s runs nothing: the workload feeds it through the management API", c.Kind)
	}
	checker, err := k.build(c.Name, c.Spec, env)
	if err != nil {
		return nil, c.Errorf("%s", probe.WithoutKind(err))
	}
	return checker, nil
}

// requestFields are the fields of an HTTP request that say who asks, beside
// its URL and its TLS fields: of http and metric, whose requests are alike.
func requestFields(s *probe.HTTPSpec) []config.Field {
	return []config.Field{
		{Key: "headers", Value: config.Headers((*map[string][]string)(&s.Header)),
			Doc: "Sent with the request; a Host header sets the virtual host. Their values are secrets, never printed."},
		{Key: "bearer-token-file", Value: config.CString(&s.BearerTokenFile),
			Doc: "A file whose content is sent as Authorization: Bearer TOKEN, read at every run, so that a rotated token is the one sent: a Kubernetes service account's, /var/run/secrets/kubernetes.io/serviceaccount/token, for an endpoint behind controller-runtime's authentication filter. Not with an Authorization header."},
	}
}

// tlsFields are the fields that say how a server is verified and who the
// probe is to it, read into o: of http, tls and grpc.
func tlsFields(o *probe.TLSOptions) []config.Field {
	return []config.Field{
		{Key: "ca-file", Value: config.CString(&o.CAFile),
			Doc: "A PEM bundle of the roots to verify the server with, instead of the system's."},
		{Key: "cert", Value: config.CString(&o.CertFile),
			Doc: "A PEM client certificate, for servers that ask for one; with key."},
		{Key: "key", Value: config.CString(&o.KeyFile), Doc: "The key of cert."},
		{Key: "server-name", Value: config.String(&o.ServerName),
			Doc: "The name to verify the certificate against and to send as SNI; by default the target's host."},
		{Key: "insecure", Value: config.Bool(&o.InsecureSkipVerify), Default: "false",
			Doc: "Accepts any certificate. The kubelet's HTTPS probes do; vitals verifies unless told not to."},
	}
}

var _ config.Kinds = All
