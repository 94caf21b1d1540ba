package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// What a Pebble layer's services do, and how vitals does it: a check's
// on-failure from the services' on-check-failure, and the service: block
// from the layer's one service.

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

// supervision writes what the layer's services do when a check fails as the
// checks' on-failure, and the services: a layer's one service as the
// service: block; several as comments in the preamble, since vitals runs
// one workload.
func (im *importer) supervision(services []*pebbleService, checks []check, inLayer map[string]bool, written map[string]int) (preamble, service []string, err error) {
	restarts, err := im.onFailure(services, checks, inLayer, written)
	if err != nil {
		return nil, nil, err
	}
	switch len(services) {
	case 0:
		return nil, nil, nil
	case 1:
		b, err := pebbleServiceBlock(services[0])
		if err != nil {
			return nil, nil, err
		}
		im.warnings = append(im.warnings, b.warnings...)
		return nil, b.lines(), nil
	}
	preamble = []string{
		fmt.Sprintf("vitals runs one workload, and this layer has %d services: each is below,", len(services)),
		"as comments. Make one the service: (or give its command after --), and run",
		"one vitals for each of the others.",
	}
	if restarts {
		preamble = append(preamble, "A check's on-failure: restart restarts that one workload.")
	}
	var names []string
	for _, s := range services {
		// Its warnings are its notes, in the comments: it is not what runs.
		b, err := pebbleServiceBlock(s)
		if err != nil {
			return nil, nil, err
		}
		preamble = append(preamble, "")
		preamble = append(preamble, b.lines()...)
		names = append(names, strconv.Quote(s.name))
	}
	restart := ""
	if restarts {
		restart = "; on-failure: restart restarts that one workload"
	}
	im.warnf("services %s: vitals runs one workload, so they are written as comments: make one the service: (or give its command after --), and run one vitals for each of the others%s",
		strings.Join(names, ", "), restart)
	return preamble, nil, nil
}

// onFailure sets each check's on-failure from the services' on-check-failure,
// with where it comes from, and reports whether a check restarts the
// workload.
func (im *importer) onFailure(services []*pebbleService, checks []check, inLayer map[string]bool, written map[string]int) (restarts bool, err error) {
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
		}
		c.onFailure = field{key: "on-failure", value: action.action, raw: true, note: note}
		var differ []string
		for _, a := range as {
			if a == win {
				continue
			}
			c.after = append(c.after, fmt.Sprintf("Pebble: service %s, on-check-failure %s too.", a.service, a.action))
			if checkActions[a.action].action != action.action {
				differ = append(differ, fmt.Sprintf("%s: %s", a.service, a.action))
			}
		}
		if len(differ) > 0 {
			c.after = append(c.after, "The services disagree, and vitals does the strongest: exit, then restart,",
				"then ignore.")
			im.warnf("check %q: services act on its failure differently (%s: %s, %s): written as on-failure: %s, the strongest",
				raw[i], win.service, win.action, strings.Join(differ, ", "), action.action)
		}
		if action.action == config.OnFailureRestart && len(services) > 1 {
			c.after = append(c.after, fmt.Sprintf("It restarts the one workload vitals runs, not service %s alone.", win.service))
			restarts = true
		}
	}
	return restarts, nil
}

// serviceBlock is a service: block, from one Pebble service.
type serviceBlock struct {
	notes  []string // comment lines above the fields
	fields []field
	// warnings say what the notes say, for when the block is what runs.
	warnings []string
}

// differ notes, in lines, what vitals does differently, and warns unless
// warning is "".
func (b *serviceBlock) differ(warning string, note ...string) {
	b.notes = append(b.notes, note...)
	if warning != "" {
		b.warnings = append(b.warnings, warning)
	}
}

func (b serviceBlock) lines() []string {
	var w writer
	w.line(0, "service:")
	for _, n := range b.notes {
		w.comment(1, n)
	}
	for _, f := range b.fields {
		w.field(1, f)
	}
	return strings.Split(strings.TrimSuffix(w.b.String(), "\n"), "\n")
}

// pebbleServiceBlock writes s as the workload vitals runs, saying what
// vitals does differently.
func pebbleServiceBlock(s *pebbleService) (serviceBlock, error) {
	b := serviceBlock{notes: []string{"From Pebble's service " + s.name + "."}}
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
		b.differ(subject+" has no command in this layer (it takes it from another): give it as service.command, or after -- on the command line",
			"Pebble: no command in this layer: give it as command:, or after -- on the",
			"command line.")
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
		b.differ(fmt.Sprintf("%s runs as %s in Pebble; vitals runs the workload as its own user: left out", subject, strings.Join(quoted, " and ")),
			fmt.Sprintf("Pebble ran it as %s; vitals runs it as its own user.", strings.Join(who, " and ")))
	}
	switch startup, err := f["startup"].str(); {
	case err != nil:
		return b, err
	case startup == "disabled":
		b.differ(subject+" has startup: disabled, which vitals has no equivalent of: the workload starts at once",
			"Pebble: startup: disabled, so it started only with pebble start; vitals starts",
			"it at once.")
	case startup != "" && startup != "enabled":
		return b, f["startup"].errorf("%q: want enabled or disabled", startup)
	}
	var order []string
	for _, k := range []string{"requires", "before", "after"} {
		names, err := f[k].strings()
		if err != nil {
			return b, err
		}
		if len(names) > 0 {
			order = append(order, k+" "+strings.Join(names, ", "))
		}
	}
	if len(order) > 0 {
		b.differ(subject+": requires, before and after are left out: vitals runs one workload",
			fmt.Sprintf("Pebble: %s.", strings.Join(order, "; ")),
			"vitals runs one workload, with no other to wait for.")
	}

	if err := b.restart(f, subject); err != nil {
		return b, err
	}
	if err := b.backoff(f, subject); err != nil {
		return b, err
	}
	kill, err := pebbleDuration(f["kill-delay"], pebbleKillDelay, true)
	if err != nil {
		return b, err
	}
	note := "Pebble: kill-delay"
	if f["kill-delay"].absent() {
		note = "Pebble's default kill-delay"
	}
	b.fields = append(b.fields, field{key: "stop-timeout", value: durationText(kill), raw: true, note: note})
	return b, nil
}

// restart writes the restart policy nearest to what Pebble does when the
// service exits by itself: on-success after exit 0, on-failure after any
// other exit or a signal, each restart by default. restart: always restarts
// after both, on-failure after a failure only; never, and on-failure after
// exit 0, stop vitals with the workload's code.
func (b *serviceBlock) restart(f map[string]node, subject string) error {
	onSuccess, err := pebbleExitAction(f["on-success"], "failure-shutdown")
	if err != nil {
		return err
	}
	onFailure, err := pebbleExitAction(f["on-failure"], "success-shutdown")
	if err != nil {
		return err
	}
	policy := config.RestartNever
	switch {
	case onSuccess == "restart" && onFailure == "restart":
		policy = config.RestartAlways
	case onFailure == "restart":
		policy = config.RestartOnFailure
	}
	note := fmt.Sprintf("Pebble: on-success %s, on-failure %s", onSuccess, onFailure)
	if f["on-success"].absent() && f["on-failure"].absent() {
		note = "Pebble's default: restart after any exit"
	}
	b.fields = append(b.fields, field{key: "restart", value: policy, raw: true, note: note})

	if policy != config.RestartAlways {
		switch onSuccess {
		case "restart":
			// Restarting after exit 0 alone is no policy of vitals.
			b.differ(fmt.Sprintf("%s: on-success restart restarted it after exit 0; vitals exits 0 then: only restart: always restarts after exit 0, and after a failure too (on-failure %s)", subject, onFailure),
				"Pebble: on-success restart restarted it after exit 0; vitals exits 0 then: only",
				"restart: always restarts after exit 0, and after a failure too.")
		case "failure-shutdown":
			b.differ(subject+": on-success failure-shutdown made pebble exit 10 after exit 0; vitals exits 0",
				"Pebble: on-success failure-shutdown made pebble exit 10 after exit 0; vitals",
				"exits 0.")
		case "ignore":
			b.differ(subject+": on-success ignore left it stopped after exit 0, and pebble running; vitals exits 0",
				"Pebble: on-success ignore left it stopped after exit 0, and pebble running;",
				"vitals exits 0.")
		}
	}
	if policy == config.RestartNever {
		switch onFailure {
		case "shutdown":
			// Not zero either way, so the kubelet sees the same: only the
			// code differs, and the comment says so.
			b.differ("",
				"Pebble: on-failure shutdown made pebble exit 10; vitals exits with the",
				"workload's code.")
		case "success-shutdown":
			b.differ(subject+": on-failure success-shutdown made pebble exit 0; vitals exits with the workload's code",
				"Pebble: on-failure success-shutdown made pebble exit 0; vitals exits with the",
				"workload's code.")
		case "ignore":
			b.differ(subject+": on-failure ignore left it stopped, and pebble running; vitals exits with the workload's code",
				"Pebble: on-failure ignore left it stopped, and pebble running; vitals exits",
				"with the workload's code.")
		}
	}
	return nil
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
// it over once the workload ran config.BackoffResetAfter.
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
