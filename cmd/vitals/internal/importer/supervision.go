package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// What a Pebble layer's services do, and how vitals does it: each service
// an entry of services:, with its order and what it does when it exits;
// each check's on-failure, and the service it acts on, from the services'
// on-check-failure.

// Pebble's service defaults (internals/plan/plan.go and servstate), for what
// a layer leaves out.
const (
	pebbleBackoffDelay  = 500 * time.Millisecond
	pebbleBackoffFactor = 2.0
	pebbleBackoffLimit  = 30 * time.Second // also how long it runs before the backoff starts over
	pebbleKillDelay     = 5 * time.Second  // from SIGTERM to SIGKILL
	pebbleOnExit        = "restart"        // on-success and on-failure
)

// checkActions says what each of Pebble's on-check-failure actions is as a
// check's on-failure, and, for those that stop pebble, the code it exits
// with where vitals exits 1.
var checkActions = map[string]struct{ action, exit string }{
	"restart":          {config.OnFailureRestart, ""},
	"shutdown":         {config.OnFailureExit, "11"},
	"success-shutdown": {config.OnFailureExit, "0"},
	"ignore":           {config.OnFailureIgnore, ""},
}

// strength orders a check's on-failure actions: when several services act
// on one check, the check does the strongest.
var strength = map[string]int{config.OnFailureIgnore: 0, config.OnFailureRestart: 1, config.OnFailureExit: 2}

// exits says where vitals exits on purpose, as Pebble shut down there: for
// the Pebble layer that runs vitals, which shuts Pebble down then too.
type exits struct {
	success bool // with code 0: a service's on-success shutdown or failure-shutdown
	failure bool // with another code: a service's on-failure shutdown or success-shutdown, or a check's on-failure: exit
}

// supervision writes the layer's services as the file's services: block,
// and what they do when a check fails as the checks' on-failure, with the
// service each acts on. It says, for the layer that runs vitals, how long
// vitals may take to stop its services (their stop-timeouts, one after
// another at worst) and where it exits on purpose.
func (im *importer) supervision(services []*pebbleService, checks []check, inLayer map[string]bool, written map[string]int) (lines []string, stop time.Duration, ex exits, err error) {
	names := map[string]string{} // a service's name in the layer → in the file
	for _, s := range services {
		names[s.name] = im.serviceName(s.name, fmt.Sprintf("service %q", s.name))
	}
	if ex.failure, err = im.onFailure(services, names, checks, inLayer, written); err != nil {
		return nil, 0, ex, err
	}
	if len(services) == 0 {
		return nil, 0, ex, nil
	}
	lines = []string{"services:"}
	for _, s := range services {
		b, err := pebbleServiceBlock(s, names)
		if err != nil {
			return nil, 0, ex, err
		}
		im.warnings = append(im.warnings, b.warnings...)
		lines = append(lines, b.lines()...)
		stop += b.stop
		ex.success = ex.success || b.exits.success
		ex.failure = ex.failure || b.exits.failure
	}
	return lines, stop, ex, nil
}

// onFailure sets each check's on-failure, and the service it acts on, from
// the services' on-check-failure, with where it comes from, and reports
// whether a check exits.
func (im *importer) onFailure(services []*pebbleService, names map[string]string, checks []check, inLayer map[string]bool, written map[string]int) (exit bool, err error) {
	type said struct{ service, action string } // Pebble's words
	acts := make([][]said, len(checks))
	raw := make([]string, len(checks)) // the checks' names in the layer
	for name, i := range written {
		raw[i] = name
	}
	for _, s := range services {
		for _, e := range s.onCheckFailure {
			action, err := e.val.str()
			if err != nil {
				return false, err
			}
			if _, ok := checkActions[action]; !ok {
				return false, e.val.errorf("%q: want restart, shutdown, success-shutdown or ignore", action)
			}
			i, ok := written[e.key]
			switch {
			case !ok && inLayer[e.key]:
				im.warnf("service %q: on-check-failure names check %q, which is left out", s.name, e.key)
				continue
			case !ok:
				im.warnf("service %q: on-check-failure names check %q, which this layer does not define", s.name, e.key)
				continue
			}
			if action == "success-shutdown" {
				im.warnf("service %q: on-check-failure %s: success-shutdown is written as on-failure: exit, and vitals exits 1 where pebble exits 0", s.name, e.key)
			}
			acts[i] = append(acts[i], said{s.name, action})
		}
	}
	for i, as := range acts {
		if len(as) == 0 {
			continue
		}
		win := as[0]
		for _, a := range as[1:] {
			if strength[checkActions[a.action].action] > strength[checkActions[win.action].action] {
				win = a
			}
		}
		action := checkActions[win.action]
		if action.action == config.OnFailureIgnore {
			continue // the default
		}
		c := &checks[i]
		note := fmt.Sprintf("Pebble: service %s, on-check-failure %s", win.service, win.action)
		if action.exit != "" {
			note += fmt.Sprintf(": pebble exits %s, vitals exits 1", action.exit)
			exit = true
		}
		c.service = names[win.service]
		c.onFailure = field{key: "on-failure", value: action.action, raw: true, note: note}
		var differ, restartedToo []string
		for _, a := range as {
			if a == win {
				continue
			}
			c.after = append(c.after, fmt.Sprintf("Pebble: service %s, on-check-failure %s too.", a.service, a.action))
			switch theirs := checkActions[a.action].action; {
			case theirs != action.action:
				differ = append(differ, fmt.Sprintf("%s: %s", a.service, a.action))
			case theirs == config.OnFailureRestart:
				restartedToo = append(restartedToo, a.service)
			}
		}
		if len(differ) > 0 {
			c.after = append(c.after, "The services disagree, and vitals does the strongest: exit, then restart,",
				"then ignore.")
			im.warnf("check %q: services act on its failure differently (%s: %s, %s): written as on-failure: %s, the strongest, of service %s",
				raw[i], win.service, win.action, strings.Join(differ, ", "), action.action, c.service)
		}
		if len(restartedToo) > 0 {
			c.after = append(c.after, fmt.Sprintf("vitals restarts service %s alone, not %s.", c.service, strings.Join(restartedToo, ", ")))
			im.warnf("check %q: services %s and %s restart on its failure, and vitals restarts one service: written as service: %s",
				raw[i], win.service, strings.Join(restartedToo, ", "), c.service)
		}
	}
	return exit, nil
}

// serviceBlock is an entry of services:, from one Pebble service.
type serviceBlock struct {
	name   string   // its name in the file
	notes  []string // comment lines above the fields
	fields []field
	// warnings say what the notes say.
	warnings []string
	stop     time.Duration // its stop-timeout
	exits    exits         // where vitals exits after it exits, as Pebble shut down
}

// differ notes, in lines, what vitals does differently, and warns unless
// warning is "".
func (b *serviceBlock) differ(warning string, note ...string) {
	b.notes = append(b.notes, note...)
	if warning != "" {
		b.warnings = append(b.warnings, warning)
	}
}

// lines is the entry, indented under services:.
func (b serviceBlock) lines() []string {
	var w writer
	w.line(1, scalar(b.name)+":")
	for _, n := range b.notes {
		w.comment(2, n)
	}
	for _, f := range b.fields {
		w.field(2, f)
	}
	return strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n")
}

// pebbleServiceBlock writes s as a service vitals runs, saying what vitals
// does differently. names are the layer's services' names in the file.
func pebbleServiceBlock(s *pebbleService, names map[string]string) (serviceBlock, error) {
	b := serviceBlock{name: names[s.name]}
	if b.name != s.name {
		b.notes = append(b.notes, "Pebble's service "+s.name+".")
	}
	subject := fmt.Sprintf("service %q", s.name)
	f := s.f

	words, defaults, err := pebbleCommand(f["command"])
	if err != nil {
		return b, err
	}
	if len(defaults) > 0 {
		b.notes = append(b.notes, fmt.Sprintf("Pebble: [ %s ] are default arguments, which pebble run --args", strings.Join(defaults, " ")),
			"replaces; here they are part of the command.")
	}
	if command := slices.Concat(words, defaults); len(command) > 0 {
		b.fields = append(b.fields, field{key: "command", list: command})
	} else {
		b.differ(fmt.Sprintf("%s has no command in this layer (it takes it from another): give it as services.%s.command", subject, b.name),
			"Pebble: no command in this layer: give it as command:.")
	}
	if len(s.environment) > 0 {
		b.fields = append(b.fields, field{key: "env", pairs: s.environment})
	}
	if s.workingDir != "" {
		b.fields = append(b.fields, field{key: "dir", value: s.workingDir})
	}

	if s.user != "" || s.group != "" {
		var who, quoted []string
		if s.user != "" {
			who, quoted = append(who, "user "+s.user), append(quoted, fmt.Sprintf("user %q", s.user))
		}
		if s.group != "" {
			who, quoted = append(who, "group "+s.group), append(quoted, fmt.Sprintf("group %q", s.group))
		}
		b.differ(fmt.Sprintf("%s runs as %s in Pebble; vitals runs its services as its own user: left out", subject, strings.Join(quoted, " and ")),
			fmt.Sprintf("Pebble ran it as %s; vitals runs it as its own user.", strings.Join(who, " and ")))
	}
	switch startup, err := f["startup"].str(); {
	case err != nil:
		return b, err
	case startup == "disabled":
		b.differ(subject+" has startup: disabled, which vitals has no equivalent of for a service: it starts with the others",
			"Pebble: startup: disabled, so it started only with pebble start; vitals starts",
			"it with the others.")
	case startup != "" && startup != "enabled":
		return b, f["startup"].errorf("%q: want enabled or disabled", startup)
	}
	if err := b.order(f, subject, names); err != nil {
		return b, err
	}

	if err := b.restart(f, subject); err != nil {
		return b, err
	}
	if err := b.backoff(f, subject); err != nil {
		return b, err
	}
	if b.stop, err = pebbleDuration(f["kill-delay"], pebbleKillDelay, true); err != nil {
		return b, err
	}
	note := "Pebble: kill-delay"
	if f["kill-delay"].absent() {
		note = "Pebble's default kill-delay"
	}
	b.fields = append(b.fields, field{key: "stop-timeout", value: durationText(b.stop), raw: true, note: note})
	return b, nil
}

// order writes after, before and requires with the names the services have
// in the file, leaving out, and saying, those this layer does not define.
func (b *serviceBlock) order(f map[string]node, subject string, names map[string]string) error {
	lists := map[string][]string{}
	for _, k := range []string{"after", "before", "requires"} {
		given, err := f[k].strings()
		if err != nil {
			return err
		}
		var out, elsewhere []string
		for _, n := range given {
			if w, ok := names[n]; ok {
				out = append(out, w)
			} else {
				elsewhere = append(elsewhere, n)
			}
		}
		if len(elsewhere) > 0 {
			b.differ(fmt.Sprintf("%s: %s %s, which this layer does not define: left out", subject, k, strings.Join(elsewhere, ", ")),
				fmt.Sprintf("Pebble: %s %s, of another layer: left out.", k, strings.Join(elsewhere, ", ")))
		}
		if len(out) > 0 {
			b.fields = append(b.fields, field{key: k, list: out})
		}
		lists[k] = out
	}
	for _, r := range lists["requires"] {
		if !slices.Contains(lists["after"], r) {
			// Pebble orders by after and before only; vitals's requires
			// implies after.
			b.notes = append(b.notes, "Pebble: requires gave no order; vitals starts it after what it requires.")
			break
		}
	}
	return nil
}

// restart writes what vitals does when the service exits by itself, as
// Pebble's on-success (after exit 0) and on-failure (after any other exit or
// a signal) say, each restart by default: a restart policy, and restart
// rules for what the policy does not do. What differs is the code vitals
// exits with where Pebble shut down with its own.
func (b *serviceBlock) restart(f map[string]node, subject string) error {
	onSuccess, err := pebbleExitAction(f["on-success"], "failure-shutdown")
	if err != nil {
		return err
	}
	onFailure, err := pebbleExitAction(f["on-failure"], "success-shutdown")
	if err != nil {
		return err
	}
	policy, rules := pebbleExit(onSuccess, onFailure)
	note := fmt.Sprintf("Pebble: on-success %s, on-failure %s", onSuccess, onFailure)
	if f["on-success"].absent() && f["on-failure"].absent() {
		note = "Pebble's default: restart after any exit"
	}
	b.fields = append(b.fields, field{key: "restart", value: policy, raw: true, note: note})
	if len(rules) > 0 {
		b.fields = append(b.fields, rulesField(rules))
	}

	switch onSuccess {
	case "shutdown":
		b.exits.success = true
	case "failure-shutdown":
		b.exits.success = true
		b.differ(subject+": on-success failure-shutdown made pebble exit 10 after exit 0; vitals exits 0",
			"Pebble: on-success failure-shutdown made pebble exit 10 after exit 0; vitals",
			"exits 0.")
	}
	switch onFailure {
	case "shutdown":
		b.exits.failure = true
		// Not zero either way, so the kubelet sees the same: only the code
		// differs, and the comment says so.
		b.differ("",
			"Pebble: on-failure shutdown made pebble exit 10; vitals exits with the",
			"service's code.")
	case "success-shutdown":
		b.exits.failure = true
		b.differ(subject+": on-failure success-shutdown made pebble exit 0; vitals exits with the service's code",
			"Pebble: on-failure success-shutdown made pebble exit 0; vitals exits with the",
			"service's code.")
	}
	return nil
}

// pebbleExit is what Pebble's on-success and on-failure are in vitals: the
// restart policy nearest to them, and the rules, evaluated before it, for
// what it does not do. restart: always restarts after any exit, on-failure
// after a code other than 0 (a signal is 128+N), never after none; where it
// does not restart, vitals exits with the service's code, as Pebble's
// shutdowns stop pebble. So a rule is needed where Pebble ignores the exit,
// and where it shuts down but the policy restarts.
func pebbleExit(onSuccess, onFailure string) (policy string, rules []exitRule) {
	switch {
	case onSuccess == "restart":
		policy = config.RestartAlways
	case onFailure == "restart":
		policy = config.RestartOnFailure
	default:
		policy = config.RestartNever
	}
	for _, e := range []struct {
		on, action, operator string
		restarts             bool // the policy restarts after it
	}{
		{"on-success", onSuccess, "in", policy == config.RestartAlways},
		{"on-failure", onFailure, "not-in", policy != config.RestartNever},
	} {
		rule := exitRule{operator: e.operator, codes: []int64{0}, note: "Pebble: " + e.on + " " + e.action}
		switch {
		case e.action == "restart":
			continue
		case e.action == "ignore":
			rule.action = "ignore"
		case e.restarts:
			rule.action = "exit"
		default:
			continue
		}
		rules = append(rules, rule)
	}
	return policy, rules
}

// pebbleExitAction reads on-success or on-failure: restart, shutdown,
// ignore or the one that only it takes; restart when absent.
func pebbleExitAction(v node, own string) (string, error) {
	action, err := v.str()
	if err != nil {
		return "", err
	}
	switch action {
	case "":
		return pebbleOnExit, nil
	case "restart", "shutdown", "ignore", own:
		return action, nil
	}
	return "", v.errorf("%q: want restart, shutdown, %s or ignore", action, own)
}

// backoff writes Pebble's backoff-delay and backoff-limit as the backoff's
// initial delay and its max. vitals doubles the delay each time, and starts
// it over once the service ran config.BackoffResetAfter.
func (b *serviceBlock) backoff(f map[string]node, subject string) error {
	delay, err := pebbleDuration(f["backoff-delay"], pebbleBackoffDelay, true)
	if err != nil {
		return err
	}
	limit, err := pebbleDuration(f["backoff-limit"], pebbleBackoffLimit, true)
	if err != nil {
		return err
	}
	if v := f["backoff-factor"]; !v.absent() {
		s, err := v.str()
		if err != nil {
			return err
		}
		factor, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil:
			return v.errorf("%q is not a number", s)
		case factor < 1:
			return v.errorf("%s: must be 1 or more", s)
		case factor != pebbleBackoffFactor:
			b.differ(fmt.Sprintf("%s: backoff-factor %s is left out: vitals doubles the delay each time", subject, s),
				fmt.Sprintf("Pebble: backoff-factor %s; vitals doubles the delay each time.", s))
		}
	}
	initial, maximum := delay, limit
	if initial == 0 {
		// vitals needs a delay; 1ms is as good as none.
		initial = time.Millisecond
		b.differ(subject+": backoff-delay 0s is written as backoff.initial: 1ms, since vitals needs a delay",
			"Pebble: backoff-delay 0s restarted it at once; vitals waits 1ms.")
	}
	if maximum < initial {
		maximum = initial
		b.differ(fmt.Sprintf("%s: backoff-limit %s is below backoff-delay %s, which vitals refuses: written as backoff.max: %s", subject, durationText(limit), durationText(delay), durationText(maximum)),
			fmt.Sprintf("Pebble: backoff-limit %s is below backoff-delay %s: it waited the delay first,", durationText(limit), durationText(delay)),
			"then the limit; vitals waits "+durationText(maximum)+" each time.")
	}
	if limit != config.BackoffResetAfter {
		b.differ(fmt.Sprintf("%s: Pebble started the backoff over once it ran backoff-limit (%s); vitals does once it ran %s", subject, durationText(limit), durationText(config.BackoffResetAfter)),
			fmt.Sprintf("Pebble started the backoff over once it ran backoff-limit (%s); vitals does", durationText(limit)),
			"once it ran "+durationText(config.BackoffResetAfter)+".")
	}
	b.fields = append(b.fields, field{key: "backoff", raw: true,
		value: fmt.Sprintf("{initial: %s, max: %s}", durationText(initial), durationText(maximum))})
	return nil
}

// pebbleCommand splits a service's command as Pebble does: its words, and
// the default arguments written after them in [ ], which pebble run --args
// replaces. An absent command is no words.
func pebbleCommand(v node) (words, defaults []string, err error) {
	line, err := v.str()
	if err != nil {
		return nil, nil, err
	}
	all, err := splitWords(line)
	if err != nil {
		return nil, nil, v.errorf("%q: %v", line, err)
	}
	var in, had bool
	for i, w := range all {
		switch {
		case in && w == "[":
			return nil, nil, v.errorf("%q: a [ ] group inside another", line)
		case in && w == "]":
			in = false
		case in:
			defaults = append(defaults, w)
		case had:
			return nil, nil, v.errorf("%q: nothing may follow the [ ] group", line)
		case w == "[" && i == 0:
			return nil, nil, v.errorf("%q: the command cannot start with the [ ] group", line)
		case w == "[":
			in, had = true, true
		case w == "]":
			return nil, nil, v.errorf("%q: a ] with no [ before it", line)
		default:
			words = append(words, w)
		}
	}
	return words, defaults, nil
}
