package config

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/signals"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
)

// Service is one workload vitals runs and supervises (an entry of
// services:, or the service: block), with its defaults filled in. Package
// supervise runs it as it is.
type Service struct {
	// Name is its key in services:; for the service: block, its command's
	// base name, or "" when the command line gives the command (the agent
	// names it then). Events, logs and requests call the service by it.
	Name string
	// Command is the command and its arguments, with no shell; empty when
	// the command line gives it (after --).
	Command []string
	// Env is added to vitals's own environment for the workload.
	Env map[string]string
	// Dir is the workload's working directory; "": vitals's.
	Dir string
	// Restart is RestartNever (default), RestartOnFailure or RestartAlways.
	Restart string
	// RestartRules are read before Restart, in order, the first whose exit
	// codes match deciding (the kubelet's restartPolicyRules).
	RestartRules []RestartRule
	// BackoffInitial and BackoffMax bound the wait before a restart,
	// doubled after each quick exit. Defaults DefaultBackoffInitial and
	// DefaultBackoffMax.
	BackoffInitial, BackoffMax time.Duration
	// StopSignal stops the workload's process group. Default
	// DefaultStopSignal.
	StopSignal syscall.Signal
	// StopTimeout is how long the workload has between its StopSignal and
	// SIGKILL to its group; 0 (stop-timeout: 0s): SIGKILL at once. Default
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// NotificationFD is s6's notification-fd: the descriptor, at least 3,
	// at which each run of the workload gets the write end of a pipe of its
	// own, to write a newline to once it is ready, for its notify checks; 0
	// for none.
	NotificationFD int
	// After, Before and Requires order the services as Pebble's fields do:
	// a service starts after those it comes after or requires, and stops
	// before them. They name services of the file.
	After, Before, Requires []string
}

// What a service's restart may say.
const (
	RestartNever     = "never"      // vitals exits with the workload
	RestartOnFailure = "on-failure" // restart after a non-zero exit or a signal
	RestartAlways    = "always"     // restart after every exit
)

// The defaults of a service's fields, which the file's services get filled
// in, and package supervise gives a zero field too (WithDefaults).
const (
	// DefaultBackoffInitial and DefaultBackoffMax bound the wait before a
	// restart, doubled after each quick exit: the first restart comes
	// quickly, and a workload that keeps failing is tried twice a minute.
	DefaultBackoffInitial = 500 * time.Millisecond
	DefaultBackoffMax     = 30 * time.Second
	// DefaultStopSignal is what programs expect to stop on, as Docker and
	// the kubelet send it.
	DefaultStopSignal = syscall.SIGTERM
	// DefaultStopTimeout is how long the workload has between its
	// stop-signal and SIGKILL: well within the pod's default grace of 30s.
	DefaultStopTimeout = 10 * time.Second
)

// BackoffResetAfter is how long the workload runs before the agent starts
// its restart backoff over from backoff.initial: a workload that ran this
// long is not crash-looping, and its next restart need not wait long. It is
// the agent's, not a setting of the file (the importers say it where a
// peer's limit differs): 30s, as Pebble's default backoff-limit, after
// which Pebble starts its backoff over too.
const BackoffResetAfter = 30 * time.Second

// WithDefaults returns s with its zero Restart, BackoffInitial, BackoffMax
// and StopSignal set to their defaults (a zero BackoffMax takes at least
// BackoffInitial; Decide never waits beyond the larger of the two). The file's services have them already; package
// supervise applies it to what it is given, so that a zero field means what
// it means in the file. StopTimeout is left as it is: its 0 is the file's
// stop-timeout: 0s, SIGKILL at once, and a service that is not the file's
// starts from DefaultStopTimeout (NewService).
func (s Service) WithDefaults() Service {
	s.Restart = cmp.Or(s.Restart, RestartNever)
	s.BackoffInitial = cmp.Or(s.BackoffInitial, DefaultBackoffInitial)
	s.BackoffMax = cmp.Or(s.BackoffMax, max(DefaultBackoffMax, s.BackoffInitial))
	s.StopSignal = cmp.Or(s.StopSignal, DefaultStopSignal)
	return s
}

// NewService is the service of command with every field at its default,
// named by its command's base name: what a service's block starts from
// (with no command), and the service of a command given after -- to a file
// without one.
func NewService(command []string) Service {
	s := Service{Command: command, StopTimeout: DefaultStopTimeout}.WithDefaults()
	if len(command) > 0 {
		s.Name = filepath.Base(command[0])
	}
	return s
}

// service reads a service's block, with its defaults filled in; order
// gets the nodes of its after, before and requires.
func (d *Decoder) service(n ast.Node, path string, order *serviceOrder) *Service {
	defaults := NewService(nil)
	s := &defaults
	given, _ := d.Fields(n, path, serviceFields(s, order))
	if backoff := given["backoff"]; backoff != nil {
		switch {
		case s.BackoffInitial == 0:
			d.Errorf(backoff, join(path, "backoff.initial"), "0s: give a delay of more than 0")
		case s.BackoffInitial > s.BackoffMax:
			d.Errorf(backoff, join(path, "backoff"), "initial %v is longer than max %v", s.BackoffInitial, s.BackoffMax)
		case s.BackoffMax < MinPeriod:
			d.Errorf(backoff, join(path, "backoff.max"), "%v is shorter than %v: a workload that exits at once would be restarted in a busy loop", s.BackoffMax, MinPeriod)
		}
	}
	return s
}

// serviceFields are the fields of a service, read into s (the nodes of
// its ordering into order).
func serviceFields(s *Service, order *serviceOrder) []Field {
	return []Field{
		overrideField("service"),
		{Key: "command", Value: Value{"list of strings", func(d *Decoder, n ast.Node, path string) {
			mark := d.Failures()
			Argv(&s.Command).Read(d, n, path) // as an exec check's: no shell splits a string
			if d.Failures() == mark && (len(s.Command) == 0 || s.Command[0] == "") {
				d.Errorf(n, path, "no command: give the command and its arguments as a list")
			}
		}, argvSchema}, Doc: "The program and its arguments, with no shell; required unless the command comes after -- on vitals run's command line. Found in $PATH when vitals run starts, where the workload runs."},
		{Key: "env", Value: Value{"mapping of names to strings", func(d *Decoder, n ast.Node, path string) {
			m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
			if !ok {
				d.Errorf(n, path, "want a mapping of variable names to values, got %s", yamlnode.Describe(n))
				return
			}
			s.Env = map[string]string{}
			for _, kv := range m.Values {
				key := yamlnode.KeyName(kv.Key)
				if !validVar(key) {
					d.Errorf(kv.Key, join(path, key), "%q is not a variable name", key)
					continue
				}
				if v, ok := d.scalar(kv.Value, join(path, key)); ok {
					d.secret(redact.Env(key, v)...)
					if strings.IndexByte(v, 0) >= 0 {
						d.Errorf(kv.Value, join(path, key), "has a NUL byte, which no environment can hold")
						continue
					}
					s.Env[key] = v
				}
			}
		}, Schema{"type": "object", "propertyNames": variableSchema, "additionalProperties": scalar}}, Doc: "Variables added to vitals's own environment for the workload."},
		{Key: "dir", Value: CString(&s.Dir), Doc: "The workload's working directory; by default vitals's."},
		{Key: "restart", Value: oneOf(&s.Restart, RestartNever, RestartOnFailure, RestartAlways), Default: RestartNever,
			Doc: "never (vitals exits with the workload, for the kubelet to restart the container), on-failure (after a non-zero exit or a signal) or always. The restart-rules come first."},
		{Key: "restart-rules", Value: Value{"list of rules", func(d *Decoder, n ast.Node, path string) { s.RestartRules = d.restartRules(n, path) },
			Schema{"type": "array", "items": Ref("services.NAME.restart-rules[]"), "maxItems": MaxRestartRules}},
			Doc: "What an exit does before restart: decides, the kubelet's restartPolicyRules: the rules in order, the first whose exit-codes match deciding its action; restart: when none does. A death by signal N is code 128+N, as the shell and the kubelet say."},
		{Key: "backoff", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) {
			d.Fields(n, path, serviceBackoffFields(s))
		}, Ref("service.backoff")}, Doc: "The wait before a restart: initial, doubled after each quick exit up to max (below)."},
		{Key: "stop-signal", Value: Value{"string", func(d *Decoder, n ast.Node, path string) {
			if v, ok := d.scalar(n, path); ok {
				if sig, ok := signals.ParseSignal(v); ok {
					s.StopSignal = sig
				} else {
					d.Errorf(n, path, "%q is not a signal name such as SIGTERM, SIGINT or SIGQUIT", v)
				}
			}
		}, signalSchema()}, Default: signals.SignalName(DefaultStopSignal), Doc: "What stops the workload: a signal's name, SIGTERM or TERM."},
		{Key: "stop-timeout", Value: Duration(&s.StopTimeout), Default: DefaultStopTimeout.String(),
			Doc: "Between the stop-signal and SIGKILL: well within a pod's default grace of 30s."},
		{Key: "notification-fd", Value: notificationFD(&s.NotificationFD),
			Doc: "s6's notification-fd: the descriptor, 3 to 1023, at which each run of the workload gets the write end of a pipe; " +
				"a newline written to it says the run is ready, as s6-supervise reads it, and passes its notify checks (vitals reads no further, as s6 does not: write it once, then close it). " +
				"By default the workload gets none; NOTIFY_SOCKET is set either way when the file has a notify check."},
		{Key: "after", Value: order.list(&s.After, "after"),
			Doc: "Services this one starts after, and stops before (Pebble's after)."},
		{Key: "before", Value: order.list(&s.Before, "before"),
			Doc: "Services this one starts before, and stops after (Pebble's before)."},
		{Key: "requires", Value: order.list(&s.Requires, "requires"),
			Doc: "Services this one needs: it starts after them and stops before them, as with after, and none of them may be missing from the file (Pebble's requires)."},
	}
}

// MaxNotificationFD is the highest notification-fd: 1024 descriptors is the
// usual soft limit on open files, which a process inherits (RLIMIT_NOFILE),
// and a descriptor at or past it cannot be made.
const MaxNotificationFD = 1023

// notificationFD reads a service's notification-fd: 0, 1 and 2 are the
// workload's standard input, output and error.
func notificationFD(dst *int) Value {
	return Value{"integer", func(d *Decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		if !ok {
			return
		}
		v, err := strconv.Atoi(s)
		switch {
		case err != nil || strconv.Itoa(v) != s:
			d.Errorf(n, path, "want a descriptor's number, got %q", s)
		case v < 0:
			d.Errorf(n, path, "%d is no descriptor: give 3 to %d", v, MaxNotificationFD)
		case v < 3:
			d.Errorf(n, path, "%d is the workload's standard %s: give 3 or more", v, [...]string{"input", "output", "error"}[v])
		case v > MaxNotificationFD:
			d.Errorf(n, path, "%d is past %d: a descriptor at or past the usual limit on open files (1024) cannot be made", v, MaxNotificationFD)
		default:
			*dst = v
		}
	}, wholeNumber(3, MaxNotificationFD)}
}

// serviceBackoffFields are the fields of a service's backoff, read into s.
func serviceBackoffFields(s *Service) []Field {
	return []Field{
		{Key: "initial", Value: Duration(&s.BackoffInitial), Default: DefaultBackoffInitial.String(),
			Doc: "The first wait, more than 0: the first restart comes quickly."},
		{Key: "max", Value: Duration(&s.BackoffMax), Default: DefaultBackoffMax.String(),
			Doc: "The longest wait, at least initial and 10ms."},
	}
}

// RestartRule is one of a service's restart-rules: when the exit's code is
// (In) or is not (!In) one of Codes, Action is done.
type RestartRule struct {
	Action string // RuleRestart, RuleExit or RuleIgnore
	In     bool   // operator in; false: not-in
	Codes  []int
}

// String is the rule as the file writes it, on one line: {action: restart,
// exit-codes: {operator: in, values: [42]}}.
func (r RestartRule) String() string {
	op := "in"
	if !r.In {
		op = "not-in"
	}
	codes := make([]string, len(r.Codes))
	for i, c := range r.Codes {
		codes[i] = strconv.Itoa(c)
	}
	return fmt.Sprintf("{action: %s, exit-codes: {operator: %s, values: [%s]}}", r.Action, op, strings.Join(codes, ", "))
}

// What a restart rule may do.
const (
	RuleRestart = "restart" // restart the service, after its backoff
	RuleExit    = "exit"    // stop every service, and vitals exits with this one's code
	RuleIgnore  = "ignore"  // leave it down; vitals and the other services go on
)

// MaxRestartRules is the most rules a service has, as the kubelet allows a
// container (restartPolicyRules, at most 20).
const MaxRestartRules = 20

// restartRules reads a service's restart-rules.
func (d *Decoder) restartRules(n ast.Node, path string) []RestartRule {
	seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode)
	if !ok {
		d.Errorf(n, path, "want a list of rules such as {action: restart, exit-codes: {operator: in, values: [42]}}, got %s", yamlnode.Describe(n))
		return nil
	}
	if len(seq.Values) > MaxRestartRules {
		d.Errorf(n, path, "%d rules: at most %d, as the kubelet allows", len(seq.Values), MaxRestartRules)
	}
	var out []RestartRule
	for i, item := range seq.Values {
		at := fmt.Sprintf("%s[%d]", path, i)
		r := RestartRule{}
		var operator string
		mark := d.Failures()
		given, ok := d.Fields(item, at, restartRuleFields(&r, &operator))
		if !ok {
			continue
		}
		if given["action"] == nil {
			d.Errorf(item, at, "no action: give restart, exit or ignore")
		}
		if given["exit-codes"] == nil {
			d.Errorf(item, at, "no exit-codes: give {operator: in, values: [CODE...]}")
		}
		r.In = operator == "in"
		if d.Failures() == mark {
			out = append(out, r)
		}
	}
	return out
}

// restartRuleFields are the fields of a restart rule, read into r (its
// operator into operator).
func restartRuleFields(r *RestartRule, operator *string) []Field {
	return []Field{
		{Key: "action", Value: oneOf(&r.Action, RuleRestart, RuleExit, RuleIgnore),
			Doc: "restart (the service, after its backoff), exit (stop every service, and vitals exits with this one's code) or ignore (leave it down; vitals and the other services go on)."},
		{Key: "exit-codes", Value: Value{"mapping", func(d *Decoder, n ast.Node, path string) {
			given, ok := d.Fields(n, path, exitCodesFields(r, operator))
			if !ok {
				return
			}
			for _, key := range []string{"operator", "values"} {
				if given[key] == nil {
					d.Errorf(n, path, "no %s: exit-codes has an operator (in or not-in) and values", key)
				}
			}
		}, Ref("services.NAME.restart-rules[].exit-codes")},
			Doc: "The exit codes the rule is for: {operator: in | not-in, values: [CODE...]}."},
	}
}

// exitCodesFields are the fields of a rule's exit-codes.
func exitCodesFields(r *RestartRule, operator *string) []Field {
	return []Field{
		{Key: "operator", Value: oneOf(operator, "in", "not-in"),
			Doc: "in: the rule is for these codes; not-in: for every other code."},
		{Key: "values", Value: Value{"list of exit codes", func(d *Decoder, n ast.Node, path string) {
			seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode)
			switch {
			case !ok:
				d.Errorf(n, path, "want a list of exit codes, 0 to 255, such as [42], got %s", yamlnode.Describe(n))
				return
			case len(seq.Values) == 0:
				d.Errorf(n, path, "an empty list: give exit codes, 0 to 255, such as [42]")
				return
			}
			for i, item := range seq.Values {
				at := fmt.Sprintf("%s[%d]", path, i)
				s, ok := d.scalar(item, at)
				if !ok {
					continue
				}
				code, err := strconv.Atoi(s)
				if err != nil || code < 0 || code > 255 {
					d.Errorf(item, at, "%q is not an exit code: give 0 to 255 (a death by signal N is 128+N)", s)
					continue
				}
				r.Codes = append(r.Codes, code)
			}
		}, Schema{"type": "array", "items": wholeNumber(0, 255), "minItems": 1}},
			Doc: "Exit codes, 0 to 255; a death by signal N is 128+N (137 for SIGKILL)."},
	}
}

// serviceOrder keeps, while the file is read, where each service names
// another in after, before and requires, for the errors of ordering
// (orderServices).
type serviceOrder struct {
	refs []serviceRef
}

// serviceRef is one name in a service's after, before or requires.
type serviceRef struct {
	from, field, to string
	at              ast.Node
	path            string
}

// list reads the names of one of a service's ordering fields (a single
// name is a list of one); from is filled in by services, once the
// service's name is known.
func (o *serviceOrder) list(dst *[]string, field string) Value {
	return Value{"list of service names", list(dst, func(d *Decoder, n ast.Node, path string) (string, bool) {
		s, ok := d.scalar(n, path)
		if ok {
			o.refs = append(o.refs, serviceRef{field: field, to: s, at: n, path: path})
		}
		return s, ok
	}), Schema{"anyOf": []Schema{nameSchema, {"type": "array", "items": nameSchema}}}}
}

// services reads the services: mapping: each service's block, then their
// order (orderServices), which is the order of the result.
func (d *Decoder) services(n ast.Node, path string) []Service {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		d.Errorf(n, path, "want a mapping of service names to services, got %s", yamlnode.Describe(n))
		return nil
	}
	if len(m.Values) == 0 {
		d.Errorf(n, path, "no services: give at least one, or leave services: out")
		return nil
	}
	var out []Service
	keys := map[string]ast.Node{}
	var order serviceOrder
	for _, kv := range m.Values {
		name := yamlnode.KeyName(kv.Key)
		at := join(path, name)
		valid := health.ValidName(name)
		if !valid {
			d.Errorf(kv.Key, at, "a service name is lower case letters, digits and - _ . inside, at most 63 characters")
		}
		mark := len(order.refs)
		s := d.service(kv.Value, at, &order)
		for i := mark; i < len(order.refs); i++ {
			order.refs[i].from = name
		}
		if !valid {
			order.refs = order.refs[:mark] // said already; no service orders by it
		}
		if s.Command == nil {
			d.Errorf(kv.Value, at, "no command: give the command and its arguments as a list (only the one service of service: may take it from the command line)")
		}
		if valid {
			s.Name, keys[name] = name, kv.Key
			out = append(out, *s)
		}
	}
	return d.orderServices(out, keys, order)
}

// orderServices sorts services in the order they start: each after those
// it comes after or requires and before those it comes before, and, where
// that leaves a choice, by name, as Pebble orders them. A name that is no
// service of the file, and a cycle, are errors at the name.
func (d *Decoder) orderServices(services []Service, keys map[string]ast.Node, order serviceOrder) []Service {
	// first[b] lists the services that start before b.
	first := map[string][]serviceRef{}
	for _, r := range order.refs {
		switch {
		case keys[r.to] == nil:
			d.Errorf(r.at, r.path, "%q is no service of this file (services: %s)", r.to, strings.Join(sortedKeys(keys), ", "))
		case r.to == r.from:
			d.Errorf(r.at, r.path, "%s names itself", r.from)
		case r.field == "before":
			first[r.to] = append(first[r.to], r)
		default: // after, requires
			first[r.from] = append(first[r.from], r)
		}
	}
	byName := map[string]Service{}
	for _, s := range services {
		byName[s.Name] = s
	}
	var out []Service
	done := map[string]bool{}
	for len(out) < len(services) {
		var next []string
		for _, s := range services {
			if done[s.Name] {
				continue
			}
			if !slices.ContainsFunc(first[s.Name], func(r serviceRef) bool { return !done[edgeFrom(r)] }) {
				next = append(next, s.Name)
			}
		}
		if len(next) == 0 {
			d.cycle(services, done, first)
			return services
		}
		slices.Sort(next)
		done[next[0]] = true
		out = append(out, byName[next[0]])
	}
	return out
}

// edgeFrom is the service that r says starts first.
func edgeFrom(r serviceRef) string {
	if r.field == "before" {
		return r.from
	}
	return r.to
}

// cycle reports a cycle among the services not done: it follows, from the
// first of them, a service that must start before it and is not done,
// until one comes again, and says the cycle at the name that closes it.
func (d *Decoder) cycle(services []Service, done map[string]bool, first map[string][]serviceRef) {
	var at string
	for _, s := range services {
		if !done[s.Name] {
			at = s.Name
			break
		}
	}
	seen := map[string]int{}
	var path []serviceRef
	for {
		if i, ok := seen[at]; ok {
			loop := path[i:]
			words := make([]string, len(loop))
			for j, r := range loop {
				words[j] = fmt.Sprintf("%s %s %s", r.from, r.field, r.to)
			}
			d.Errorf(loop[0].at, loop[0].path, "a cycle: %s; no service could start first", strings.Join(words, ", "))
			return
		}
		seen[at] = len(path)
		i := slices.IndexFunc(first[at], func(r serviceRef) bool { return !done[edgeFrom(r)] })
		if i < 0 { // orderServices found none free: every one waits on another
			return
		}
		r := first[at][i]
		path = append(path, r)
		at = edgeFrom(r)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// shorthand is the service: block as the one service of the file, named
// by its command's base name (the events' name for it since before
// services: was), or "" when the command line gives the command.
func shorthand(s *Service) Service {
	if len(s.Command) > 0 {
		s.Name = filepath.Base(s.Command[0])
	}
	return *s
}

// What a check's startup may say: Pebble's words.
const (
	StartupEnabled  = "enabled"  // it runs from the start
	StartupDisabled = "disabled" // it runs once vitals start NAME starts it
)

// checkServices checks what the checks say of the services: the service a
// check names is one of the file's; with several, a check that restarts
// one names it; a stop-timeout goes with an on-failure that stops a
// service. at are the nodes of each check's fields.
func (d *Decoder) checkServices(c *Config, at map[string]Given) {
	names := make([]string, len(c.Services))
	for i, s := range c.Services {
		names[i] = s.Name
	}
	for i := range c.Checks {
		ch := &c.Checks[i]
		given := at[ch.Name]
		path := "checks." + ch.Name
		switch {
		case ch.Service == "":
		case len(c.Services) == 0:
			d.Errorf(given["service"], path+".service", "%q is no service of this file: the file has no services: (a workload given after -- is the one service, and every check's)", ch.Service)
			ch.Service = ""
		case c.Shorthand && c.Services[0].Name == "":
			d.Errorf(given["service"], path+".service", "%q: the service: block has no command to be named by: give services: with names", ch.Service)
			ch.Service = ""
		case !slices.Contains(names, ch.Service):
			d.Errorf(given["service"], path+".service", "%q is no service of this file (services: %s)", ch.Service, strings.Join(slices.Sorted(slices.Values(names)), ", "))
			ch.Service = ""
		}
		if len(c.Services) == 1 && ch.Service == "" {
			ch.Service = c.Services[0].Name // the one service's checks are all its own
		}
		if len(c.Services) > 1 && ch.Service == "" && ch.OnFailure == OnFailureRestart {
			d.Errorf(given["on-failure"], path+".on-failure", "restart: which service? give service: one of %s", strings.Join(names, ", "))
		}
		if ch.StopTimeout > 0 && ch.OnFailure == OnFailureIgnore {
			d.Errorf(given["stop-timeout"], path+".stop-timeout", "applies when the check's on-failure restarts or exits a service, and its on-failure is ignore")
		}
	}
}
