package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
)

// Kinds is the table of the kinds a check may have (package kinds holds
// vitals's). config reads a kind's block through it and builds nothing: the
// table imports config, not the other way round.
type Kinds interface {
	// Names is every kind's name, sorted, for errors.
	Names() []string
	// Kind returns the kind named name, if there is one.
	Kind(name string) (Kind, bool)
}

// Kind is what config asks of one kind of check.
type Kind interface {
	// Decode reads the kind's block n, found at path, into its spec (plain
	// data), recording what is wrong with d: everything that building the
	// checker would find, too, so that a file that loads is a file whose
	// checks build. The spec is not used when d recorded errors.
	Decode(d *Decoder, n ast.Node, path string) (spec any)
	// Fed says whether the workload feeds the kind's checks through the
	// management API rather than vitals running them (a heartbeat's beats,
	// a watchdog's units of work): its Feed, 0 for a kind that vitals
	// runs, and its Deadline read from spec (0 when the block had errors,
	// spec nil). A fed check has no period, timeout, initial delay or
	// thresholds: its deadline decides.
	Fed(spec any) Fed
	// DefaultComponentType is the componentType of the kind's checks that
	// give no component-type: component, datastore or system.
	DefaultComponentType() string
	// DefaultFailureThreshold is the failure-threshold of the kind's checks
	// of spec that give none; 0 for the kubelet's, 3.
	DefaultFailureThreshold(spec any) int
	// Timing says what is wrong with spec at the check's period and
	// timeout (a window that holds fewer than two runs, a bound on a run's
	// time that its timeout ends first); nil when nothing is.
	Timing(spec any, period, timeout time.Duration) error
}

// Check is one check of the file, as data: whoever runs it builds its
// checker from Kind and Spec (package kinds).
type Check struct {
	Name  string
	Level health.Level
	// The timing, with the kubelet's defaults filled in (see
	// health.Check.Validate), but the kind's failure threshold where it has
	// one (1 for a log or a heartbeat: its failures are events); a
	// heartbeat's or a watchdog's as Monitor.Heartbeat and Monitor.Watchdog
	// run it (judged every default period, thresholds 1), its ttl or limit
	// deciding.
	Period, Timeout, InitialDelay      time.Duration
	SuccessThreshold, FailureThreshold int
	// StableFor is how long the check must have passed, with no failed
	// run, before it counts as passing (health.Check.StableFor); 0: at once.
	StableFor time.Duration
	// OnFailure is what the agent does when the check becomes fail:
	// OnFailureIgnore (default), OnFailureRestart or OnFailureExit.
	OnFailure string
	// Service is the service the check belongs to: what its on-failure
	// restarts (or stops first), what it starts over with. With one
	// service, that one's name whatever the file says; "" with none, or
	// for a check of none of several.
	Service string
	// StopTimeout, when not 0, is the service's stop-timeout when this
	// check's on-failure restarts or exits it (the kubelet's probe-level
	// terminationGracePeriodSeconds).
	StopTimeout time.Duration
	// Disabled: the check neither runs nor counts until it is started
	// (vitals start NAME), as Pebble's startup: disabled.
	Disabled bool
	// ComponentType is the check's componentType in the IETF health+json
	// answers: its component-type, or else its kind's.
	ComponentType string
	// Kind is the kind's name, such as http.
	Kind string
	// Spec is the kind's spec as its Decode read it.
	Spec any
	// Source is the kind's block as the file writes it, on one line, with
	// ${VAR} unexpanded: what --print shows without printing a secret.
	Source string
	// Fed is how the workload feeds a heartbeat or a watchdog through the
	// management API; zero for a check that vitals runs.
	Fed Fed
	// at is where the kind's block is, for errors found after the load.
	at Error
	// block is the kind's block, for errors at its fields found after it
	// was read (Kind.Timing); nil once the check is read.
	block ast.Node
}

// Fed is how the workload feeds a check through the management API, for a
// check that vitals does not run.
type Fed struct {
	Feed Feed // 0 for a check that vitals runs
	// Deadline is what judges what is fed: the ttl of beats, the limit of
	// units of work.
	Deadline time.Duration
}

// Feed is what the workload feeds a check with.
type Feed int

const (
	// Beats feed a heartbeat: it fails once its ttl passes with no beat.
	Beats Feed = iota + 1
	// Units of work, begun and ended, feed a watchdog: it fails while one
	// has run longer than its limit.
	Units
)

// decides says what decides a fed check, and when, for errors.
func (f Feed) decides() string {
	if f == Units {
		return "its limit decides, the moment a unit of work reaches it"
	}
	return "its ttl decides, the moment it passes"
}

// by says what the workload feeds a check with, for errors.
func (f Feed) by() string {
	if f == Units {
		return "fed by the workload with its own units of work"
	}
	return "beaten by the workload, one of its own loops"
}

// Errorf is an error about the check's kind block, where the file has it:
// FILE:LINE:COL: checks.NAME.KIND: MESSAGE.
func (c Check) Errorf(format string, args ...any) Error {
	e := c.at
	e.Msg = fmt.Sprintf(format, args...)
	return e
}

// Health is the check as the engine takes it, run by checker.
func (c Check) Health(checker health.Checker) health.Check {
	return health.Check{Name: c.Name, Level: c.Level, Checker: checker, Kind: c.Kind, ComponentType: c.ComponentType,
		Period: c.Period, Timeout: c.Timeout, InitialDelay: c.InitialDelay,
		SuccessThreshold: c.SuccessThreshold, FailureThreshold: c.FailureThreshold, StableFor: c.StableFor}
}

// What a check's on-failure may say.
const (
	OnFailureIgnore  = "ignore"  // events and hooks only
	OnFailureRestart = "restart" // restart the workload; its checks start over
	OnFailureExit    = "exit"    // stop the workload and exit 1, for the kubelet to restart the container
)

// checkKeys are the YAML keys of a check's timing and component type, by
// the health.Check field each sets (health.CheckError names the field).
var checkKeys = map[string]string{
	"Period": "period", "Timeout": "timeout", "InitialDelay": "initial-delay",
	"SuccessThreshold": "success-threshold", "FailureThreshold": "failure-threshold",
	"StableFor": "stable-for", "ComponentType": "component-type",
}

// checks reads the checks mapping, in the file's order, with the nodes of
// each check's fields.
func (d *Decoder) checks(n ast.Node, kinds Kinds) ([]Check, map[string]Given) {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		d.Errorf(n, "checks", "want a mapping of check names to checks, got %s", yamlnode.Describe(n))
		return nil, nil
	}
	var out []Check
	fields := map[string]Given{}
	for _, kv := range m.Values {
		name := yamlnode.KeyName(kv.Key)
		path := "checks." + name
		validName := health.ValidName(name)
		if !validName {
			d.Errorf(kv.Key, path, "a check name is lower case letters, digits and - _ . inside, at most 63 characters")
		}
		c, at, ok := d.check(name, kv.Value, path, kinds) // its errors too, whatever its name
		if !ok || !validName {
			continue
		}
		fields[name] = at
		// The engine validates each check as the Monitor will, so that a
		// file that loads is a file that starts.
		v, err := c.Health(nil).Validate()
		var ce *health.CheckError
		if errors.As(err, &ce) {
			switch key := checkKeys[ce.Field]; {
			case ce.Field == "Name":
				d.Errorf(kv.Key, path, "%s", ce.Msg)
			case at[key] != nil:
				d.Errorf(at[key], path+"."+key, "%s", ce.Msg)
			default:
				d.Errorf(kv.Value, path, "%s", ce.Msg)
			}
			continue
		}
		if kind, _ := kinds.Kind(c.Kind); c.Fed.Feed == 0 && c.Spec != nil {
			if err := kind.Timing(c.Spec, v.Period, v.Timeout); err != nil {
				d.timingError(c, err)
				continue
			}
		}
		// The file as vitals runs it: every default filled in. A heartbeat
		// or a watchdog runs nothing, so it has no timeout and no initial
		// delay; it is judged again every period.
		c.Period, c.Timeout, c.InitialDelay = v.Period, v.Timeout, v.InitialDelay
		c.SuccessThreshold, c.FailureThreshold = v.SuccessThreshold, v.FailureThreshold
		if c.Fed.Feed != 0 {
			c.Timeout, c.InitialDelay = 0, 0
		}
		// The block was kept for Timing's errors only: through its
		// tokens, a node holds the whole file's, which a running agent
		// would otherwise keep for as long as it runs these checks.
		c.block = nil
		out = append(out, c)
	}
	return out, fields
}

// FieldError is what is wrong with the field of a kind's block named
// field: Kind.Timing returns one to have it said at the field (a window in
// expr, a max-duration) rather than at the block.
func FieldError(field string, err error) error { return &fieldError{field, err} }

type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

// timingError records what Timing found wrong with c: at the field it
// names, when it names one the block has, else at the block.
func (d *Decoder) timingError(c Check, err error) {
	if fe, ok := errors.AsType[*fieldError](err); ok {
		if m, ok := yamlnode.Unwrap(c.block).(*ast.MappingNode); ok {
			for _, kv := range m.Values {
				if yamlnode.KeyName(kv.Key) == fe.field {
					d.Errorf(kv.Value, c.at.Path+"."+fe.field, "%v", fe.err)
					return
				}
			}
		}
	}
	d.errors = append(d.errors, c.Errorf("%v", err))
}

// check reads one check: its level and timing, and exactly one kind. at has
// the nodes of its fields, for errors found later.
func (d *Decoder) check(name string, n ast.Node, path string, kinds Kinds) (c Check, at Given, ok bool) {
	c = Check{Name: name, Level: health.Ready, OnFailure: OnFailureIgnore}
	before := d.Failures()
	var level string
	var kindName string
	var kindNode ast.Node
	fields := checkFields(&c, &level)
	for _, k := range kinds.Names() {
		fields = append(fields, Field{Key: k, Value: Value{Type: "mapping", Read: func(d *Decoder, n ast.Node, path string) {
			if kindName != "" {
				d.Errorf(n, path, "a check has one kind, and this one is %s already", kindName)
				return
			}
			kindName, kindNode = k, n
		}}}) // the schema has the kinds' blocks from their table
	}
	at, ok = d.Fields(n, path, fields)
	if !ok {
		return c, at, false
	}
	if level != "" {
		l, err := health.ParseLevel(level)
		if err != nil {
			d.Errorf(at["level"], path+".level", "%v", err)
		}
		c.Level = l
	}
	if kindName == "" {
		d.Errorf(n, path, "no kind: give one of %s", strings.Join(kinds.Names(), ", "))
		return c, at, false
	}
	kind, _ := kinds.Kind(kindName)
	c.Kind, c.Source, c.block = kindName, flow(kindNode), kindNode
	p := d.position(kindNode)
	c.at = Error{File: p.File, Line: p.Line, Column: p.Column, Path: path + "." + kindName}
	mark := d.Failures()
	spec := kind.Decode(d, kindNode, path+"."+kindName)
	if d.Failures() == mark {
		c.Spec = spec
	} else {
		spec = nil
	}
	if fed := kind.Fed(spec); fed.Feed != 0 {
		// A timing written as zero (or already wrong, and said so) is none.
		for _, f := range []struct {
			key string
			set bool
		}{{"period", c.Period != 0}, {"timeout", c.Timeout != 0}, {"initial-delay", c.InitialDelay != 0},
			{"success-threshold", c.SuccessThreshold != 0}, {"failure-threshold", c.FailureThreshold != 0}} {
			if f.set {
				d.Errorf(at[f.key], path+"."+f.key, "does not apply to a %s: %s", kindName, fed.Feed.decides())
			}
		}
		if t := kind.DefaultComponentType(); c.ComponentType != "" && c.ComponentType != t {
			d.Errorf(at["component-type"], path+".component-type", "a %s is %s: its component type is %s", kindName, fed.Feed.by(), t)
		}
		if fed.Feed == Units && c.Level == health.Startup {
			// As Monitor.Watchdog refuses it: startup would latch at once.
			d.Errorf(at["level"], path+".level", "a %s cannot be a startup check: it passes while idle, so startup would pass before any work", kindName)
		}
		c.Fed = fed
		c.Period, c.Timeout, c.InitialDelay, c.SuccessThreshold, c.FailureThreshold = 0, 0, 0, 0, 0 // its own: its kind's, and below
	} else if c.Period > 0 && c.Period < MinPeriod {
		d.Errorf(at["period"], path+".period", "%v is shorter than %v, the shortest period: more often is a busy loop, not a check", c.Period, MinPeriod)
	}
	if c.ComponentType == "" {
		c.ComponentType = kind.DefaultComponentType()
	}
	if c.FailureThreshold == 0 {
		c.FailureThreshold = kind.DefaultFailureThreshold(spec) // 0 leaves it to the kubelet's default
	}
	return c, at, d.Failures() == before
}

// checkFields are the fields of a check but its kind, read into c (its
// level into level, for ParseLevel).
func checkFields(c *Check, level *string) []Field {
	return []Field{
		overrideField("check"),
		{Key: "level", Value: Value{"string", String(level).Read, levelSchema}, Default: "ready",
			Doc: "The endpoint the check answers to: startup (/startupz), live (/livez) or ready (/readyz)."},
		{Key: "period", Value: Duration(&c.Period), Default: "10s",
			Doc: "Between the starts of two runs; at least 10ms. The kubelet's default."},
		{Key: "timeout", Value: Duration(&c.Timeout), Default: "1s",
			Doc: "Of one run, no longer than the period (the period, when that is shorter than 1s). The kubelet's default."},
		{Key: "initial-delay", Value: Duration(&c.InitialDelay), Default: "0s",
			Doc: "Before the first run: by default the first run is at once."},
		{Key: "success-threshold", Value: count(&c.SuccessThreshold), Default: "1",
			Doc: "Consecutive passing runs that make a pending or failed check pass."},
		{Key: "failure-threshold", Value: count(&c.FailureThreshold), Default: "3",
			Doc: "Consecutive failing runs that make a check fail: one lost packet should not flip a probe (Kubernetes and Pebble use 3 too). 1 for the kinds whose failure is an event at a moment, such as a log line or a ttl passing: the check fails at that moment."},
		{Key: "stable-for", Value: Duration(&c.StableFor), Default: "0s",
			Doc: "How long the check must have passed, with no failed run, before it counts as passing (Kubernetes's minReadySeconds, for one check): until then it stays pending, or failed, and passes at that moment; a failed run starts the wait over. It starts over with the workload. By default a check passes at once."},
		{Key: "on-failure", Value: oneOf(&c.OnFailure, OnFailureRestart, OnFailureExit, OnFailureIgnore), Default: OnFailureIgnore,
			Doc: "What the agent does when the check becomes fail: ignore (events and hooks only), restart (the workload; its checks start over) or exit (stop the workload and exit 1, for the kubelet to restart the container)."},
		{Key: "service", Value: Value{"string", String(&c.Service).Read, nameSchema}, Default: "the one service's", Described: true,
			Doc: "The service the check belongs to: the one its on-failure restarts, and that it starts over with (pending again, judging the new run) when that service restarts; the one whose output a log check reads, whose processes a process check looks at, whose messages a notify check hears. With one service, every check is its; with several, a check of none starts over with none, and one whose on-failure is restart, or that reads a service's output, processes or messages, must name it."},
		{Key: "stop-timeout", Value: Duration(&c.StopTimeout), Default: "the service's", Described: true,
			Doc: "The service's stop-timeout (between its stop-signal and SIGKILL) when this check's on-failure restarts or exits it: a grace of the check's own, as the kubelet's probe-level terminationGracePeriodSeconds. Only with on-failure restart or exit."},
		{Key: "startup", Value: Value{"string", func(d *Decoder, n ast.Node, path string) {
			var s string
			oneOf(&s, StartupEnabled, StartupDisabled).Read(d, n, path)
			c.Disabled = s == StartupDisabled
		}, enum(StartupEnabled, StartupDisabled)}, Default: StartupEnabled,
			Doc: "enabled, or disabled (Pebble's word): a disabled check neither runs nor counts for its level, pending, until vitals start NAME (or POST /v1/checks/NAME/start) starts it; vitals stop NAME stops it again."},
		{Key: "component-type", Value: Value{"string", String(&c.ComponentType).Read, componentTypeSchema}, Default: "the kind's", Described: true,
			Doc: "What the check checks, as the IETF health+json answers say it (componentType): component (a part of the workload), datastore (a database or a cache it keeps its data in), system (another system it depends on) or an absolute URI for a type of your own. By default the kind's (the table of kinds below); a heartbeat's and a watchdog's is component."},
	}
}

// flow writes a node on one line, as YAML's flow style, so that it reads
// back as the same value: a scalar is written as the file writes it, but
// for one that cannot stand as it is in a flow (a plain scalar with a
// comma or a brace in it, as a metric check's condition has, or a block
// scalar), which is written double-quoted.
func flow(n ast.Node) string {
	var b strings.Builder
	writeFlow(&b, n)
	return b.String()
}

func writeFlow(b *strings.Builder, n ast.Node) {
	switch v := yamlnode.Unwrap(n).(type) {
	case *ast.MappingNode:
		b.WriteByte('{')
		for i, kv := range v.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFlow(b, kv.Key)
			b.WriteString(": ")
			writeFlow(b, kv.Value)
		}
		b.WriteByte('}')
	case *ast.MappingValueNode:
		writeFlow(b, &ast.MappingNode{Values: []*ast.MappingValueNode{v}})
	case *ast.SequenceNode:
		b.WriteByte('[')
		for i, item := range v.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFlow(b, item)
		}
		b.WriteByte(']')
	case *ast.LiteralNode:
		b.WriteString(strconv.Quote(v.Value.Value))
	case *ast.StringNode:
		// A quoted scalar is quoted again from its value: the parser's copy
		// of the text as written (Origin) loses some escapes' digits.
		quoted := v.Token.Type == token.DoubleQuoteType || v.Token.Type == token.SingleQuoteType
		if !quoted && inFlow(v.Value) {
			b.WriteString(v.Value)
		} else {
			b.WriteString(strconv.Quote(v.Value))
		}
	case nil:
		b.WriteString("null")
	default:
		b.WriteString(strings.TrimSpace(v.String()))
	}
}

// inFlow reports whether a plain scalar reads the same inside a flow
// mapping or list: none of YAML's flow indicators in it, nothing that would
// start a comment or a key, and no other meaning at its start.
func inFlow(s string) bool {
	switch {
	case s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, ",[]{}\n\t"),
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":"),
		strings.ContainsRune("#&*!|>'\"%@`", rune(s[0])):
		return false
	case strings.ContainsRune("-?:", rune(s[0])):
		return len(s) > 1 && s[1] != ' ' // -x is plain; "- x" starts a list
	}
	return true
}
