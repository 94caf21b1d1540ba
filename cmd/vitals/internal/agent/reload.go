package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
)

// A reload reads the file again (vitals reload, POST /v1/reload, SIGHUP,
// --watch) and applies what changed, as a difference. The file is judged
// whole first: a file that does not load, or that changes what a reload
// cannot change, is refused with every reason, and nothing changes.
//
// Of the checks: a check whose definition did not change is not touched
// (its status, history, counters and schedule go on); a check whose timing
// or thresholds alone changed keeps its status and history
// (health.Monitor.Update); a check that tests something else starts over,
// pending (Replace); a removed check leaves the endpoints, the page,
// /metrics and gRPC; an added one appears pending.
//
// The checks bound to more than the Monitor change with it: a heartbeat
// or a watchdog is made anew, and the API finds it (fed); a log check is
// shown its service's lines from then on (setLogCheck); on-failure
// actions are set anew (supervise.Actions.Set).
//
// Of the rest of the file: details:, ui:, auth:, tls:'s files and
// service-info: make a new front for the probe listener, swapped whole;
// kubernetes: a new reporter, and hooks: each changed hook, which follow
// on from the event after the last one the old one handles; a service
// whose command, env or dir changed is restarted (Supervisor.Update), and
// its other fields hold from its next exit; drain: holds from the next
// stop.
//
// What a reload cannot change, and says why: the addresses vitals serves
// at (listen:, grpc-listen:, api:, api-token-file:) and whether the probe
// listener speaks TLS, which the kubelet's probes, grpc-health-probe, the
// workload and vitals's commands were told at start; a service added,
// removed or moved in the order, or its notification-fd; a notify check,
// which hears its service through the receiver made for it at start.

// The results of a reload, as vitals_config_reloads_total counts them.
const (
	reloadApplied  = "applied"
	reloadRejected = "rejected"
)

// plan is what a reload does: to the checks, in the new file's order, and
// to the other parts of the file, by key.
type plan struct {
	added, changed, retimed []config.Check
	removed                 []string
	sections                []string // the keys of the parts besides checks: that changed, in the file's order
	services                []string // the services whose definition changed, by name, in the new file's order
}

// empty says that the reload changes nothing.
func (p plan) empty() bool {
	return len(p.added)+len(p.changed)+len(p.retimed)+len(p.removed)+len(p.sections) == 0
}

// changes says whether the plan changes the part of the file under key.
func (p plan) changes(key string) bool { return slices.Contains(p.sections, key) }

// planReload compares the file running, old, with next, read again, and
// says what a reload does, or every reason it is refused: a part of the
// file that a reload cannot change and that changed, or a check that
// changed, came or went where fixed (the reason a check cannot be changed
// by a reload, "" when it can) says it cannot. startupPassed refuses a new
// startup check, which latches. It is pure: the agent applies the plan.
func planReload(old, next *config.Config, startupPassed bool, fixed func(config.Check) string) (plan, error) {
	var errs config.Errors
	var p plan
	for _, s := range sections(old, next) {
		switch {
		case s.same:
		case s.fixed != "":
			errs = append(errs, next.ErrorAt(s.key, "changed: %s", s.fixed))
		default:
			p.sections = append(p.sections, s.key)
		}
	}
	if p.services = planServices(old, next, &errs); len(p.services) > 0 {
		p.sections = append(p.sections, "services")
	}
	was := map[string]config.Check{}
	for _, ch := range old.Checks {
		was[ch.Name] = ch
	}
	kept := map[string]bool{}
	for _, ch := range next.Checks {
		before, ok := was[ch.Name]
		kept[ch.Name] = ok
		switch {
		case ok && sameCheck(before, ch):
			continue
		case ok && fixed(before) != "":
			errs = append(errs, ch.Errorf("changed: %s, which a reload does not change; restart vitals to apply it", fixed(before)))
		case fixed(ch) != "":
			errs = append(errs, ch.Errorf("%s: %s, which a reload does not add or change; restart vitals to apply it",
				map[bool]string{true: "changed", false: "added"}[ok], fixed(ch)))
		case ch.Level == health.Startup && startupPassed && !(ok && sameCheck(untimed(before), untimed(ch)) && ch.Fed.Feed == 0):
			errs = append(errs, ch.Errorf("a startup check cannot start anew once startup has passed: it latches until vitals restarts"))
		case !ok:
			p.added = append(p.added, ch)
		case sameCheck(untimed(before), untimed(ch)) && ch.Fed.Feed == 0:
			// A heartbeat or watchdog keeps its ttl or limit for its
			// life: retimed, it is made anew (changed).
			p.retimed = append(p.retimed, ch)
		default:
			p.changed = append(p.changed, ch)
		}
	}
	for _, ch := range old.Checks {
		if kept[ch.Name] {
			continue
		}
		if why := fixed(ch); why != "" {
			errs = append(errs, next.ErrorAt("checks."+ch.Name, "removed: %s, which a reload does not remove; restart vitals to apply it", why))
			continue
		}
		p.removed = append(p.removed, ch.Name)
	}
	if len(errs) > 0 {
		return plan{}, errs
	}
	return p, nil
}

// section is one part of the file besides its checks: whether two files
// give it alike, and why a reload cannot change it ("" when it can).
type section struct {
	key   string
	same  bool
	fixed string
}

// Why a reload cannot change a part of the file: what was told of it at
// start, and would be left asking where nobody answers.
const (
	fixedListen = "the kubelet's probes, the pod's ports and the scrapers reach the probe endpoints at the address vitals bound at start; " +
		"serving them elsewhere would fail every probe that names the old one: restart vitals to move them"
	fixedGRPC = "grpc-health-probe and the kubelet's gRPC probes reach gRPC health at the address vitals bound at start; " +
		"serving it elsewhere would fail every probe that names the old one: restart vitals to move it"
	fixedAPI = "the workload, exec probes and vitals's commands were told where the management API is, and with which token " +
		"(--api, $VITALS_API, $VITALS_API_TOKEN); moving it would leave their beats and notices unanswered: restart vitals to change it"
	fixedTLS = "the kubelet's probes name their scheme (HTTP or HTTPS) in the pod spec; turning TLS on or off would fail every one: " +
		"restart vitals to change it (a change of tls:'s files is applied)"
	fixedHistory  = "the checks' histories were read from history.file at start, and are written there until the stop: restart vitals to change it"
	fixedServices = "a reload does not add or remove a service (%s): the order the services start and stop in was set at start; restart vitals to apply it"
	fixedOrder    = "changed: the order the services start and stop in, and the pipe each run gets, were set at start: restart vitals to apply it"
)

func sections(a, b *config.Config) []section {
	same := func(x, y any) bool { return reflect.DeepEqual(x, y) }
	tls := ""
	if (a.TLS == nil) != (b.TLS == nil) {
		tls = fixedTLS
	}
	return []section{
		{"listen", a.Listen == b.Listen, fixedListen},
		{"grpc-listen", a.GRPCListen == b.GRPCListen, fixedGRPC},
		{"api", a.API == b.API, fixedAPI},
		{"api-token-file", a.APITokenFile == b.APITokenFile, fixedAPI},
		{"details", a.Details == b.Details, ""},
		{"ui", a.UI == b.UI, ""},
		{"history", a.History == b.History, fixedHistory},
		{"tls", same(a.TLS, b.TLS), tls},
		{"auth", same(a.Auth, b.Auth), ""},
		{"service-info", a.ServiceInfo == b.ServiceInfo, ""},
		{"drain", a.Drain == b.Drain, ""},
		{"hooks", same(a.Hooks, b.Hooks), ""},
		{"kubernetes", same(a.Kubernetes, b.Kubernetes), ""},
	}
}

// planServices says which services a reload changes, by name, in next's
// order, adding to errs every change it cannot make: a service added or
// removed, or one whose place in the order or notification-fd changed.
func planServices(old, next *config.Config, errs *config.Errors) []string {
	was := map[string]config.Service{}
	for _, s := range old.Services {
		was[s.Name] = s
	}
	if old.Shorthand && next.Shorthand {
		// The one service, whatever its command names it: it keeps the
		// name it started with.
		was = map[string]config.Service{next.Services[0].Name: old.Services[0]}
	}
	var changed, added []string
	for _, s := range next.Services {
		before, ok := was[s.Name]
		delete(was, s.Name)
		switch {
		case !ok:
			added = append(added, s.Name)
		case reflect.DeepEqual(before, s) || (old.Shorthand && next.Shorthand && sameButName(before, s)):
		case before.NotificationFD != s.NotificationFD || !slices.Equal(before.After, s.After) ||
			!slices.Equal(before.Before, s.Before) || !slices.Equal(before.Requires, s.Requires):
			*errs = append(*errs, next.ErrorAt(serviceKey(next, s.Name), "%s", fixedOrder))
		default:
			changed = append(changed, s.Name)
		}
	}
	var said []string
	if len(added) > 0 {
		said = append(said, "added "+strings.Join(added, ", "))
	}
	if len(was) > 0 {
		said = append(said, "removed "+strings.Join(slices.Sorted(maps.Keys(was)), ", "))
	}
	if len(said) > 0 {
		*errs = append(*errs, next.ErrorAt("services", "changed: "+fixedServices, strings.Join(said, "; ")))
	}
	return changed
}

// sameButName says whether a and b differ in their names alone.
func sameButName(a, b config.Service) bool {
	a.Name = b.Name
	return reflect.DeepEqual(a, b)
}

// serviceKey is where the file gives the service of that name: service,
// or services.NAME.
func serviceKey(c *config.Config, name string) string {
	if c.Shorthand {
		return "service"
	}
	return "services." + name
}

// sameCheck says whether two checks are defined alike: every field the
// file gives, the kind's block as the file writes it (${VAR} unexpanded:
// vitals's environment does not change while it runs) included, and not
// where the file gives them.
func sameCheck(a, b config.Check) bool { return definitionOf(a) == definitionOf(b) }

// definition is what defines a check, as sameCheck compares it and
// history.file keeps it: every field the file gives, not where.
type definition struct {
	Name, Kind, Source, OnFailure, Service, ComponentType string
	Level                                                 health.Level
	Fed                                                   config.Fed
	Period, Timeout, InitialDelay, StableFor, StopTimeout time.Duration
	SuccessThreshold, FailureThreshold                    int
	Disabled                                              bool
}

func definitionOf(c config.Check) definition {
	return definition{Name: c.Name, Kind: c.Kind, Source: c.Source, OnFailure: c.OnFailure, Service: c.Service, ComponentType: c.ComponentType,
		Level: c.Level, Fed: c.Fed, Period: c.Period, Timeout: c.Timeout, InitialDelay: c.InitialDelay, StableFor: c.StableFor,
		StopTimeout: c.StopTimeout, SuccessThreshold: c.SuccessThreshold, FailureThreshold: c.FailureThreshold, Disabled: c.Disabled}
}

// untimed is c without its timing and thresholds: two checks alike but
// for them test the same thing.
func untimed(c config.Check) config.Check {
	c.Period, c.Timeout, c.InitialDelay, c.SuccessThreshold, c.FailureThreshold, c.StableFor = 0, 0, 0, 0, 0, 0
	return c
}

// fixed says why a reload cannot change ch: what besides the Monitor
// holds it. "" when it can.
func (a *Agent) fixed(ch config.Check) string {
	switch {
	case ch.Fed.Feed != 0 && a.live != nil && a.live.apiOff != nil:
		return "a check the workload feeds through the management API, which is off (see the log of the start): give api: to serve it"
	case a.isRunning(ch.Name) && a.needs[ch.Name] == kinds.ErrNoWorkloadToHear:
		return "a notify check, which hears its service's messages through the receiver made for it at start"
	}
	return ""
}

// isRunning says whether the agent runs a check of that name.
func (a *Agent) isRunning(name string) bool {
	_, ok := a.monitor.CheckState(name)
	return ok
}

// built is a check of the new file, made before anything changes.
type built struct {
	check  health.Check // its Checker nil for a check the workload feeds
	closer io.Closer    // nil when it keeps no connection
	need   error        // what it needs of a workload (kinds.ErrNoProcesses), or nil
	// log is a log check, shown the lines of svc's output once applied.
	log *logwatch.Check
	svc *service
}

// errHears is what building a notify check says: the reload refuses it
// (fixed).
var errHears = errors.New("it hears its service's messages through the receiver made for it at start: " +
	"a reload does not add or change a notify check; restart vitals to apply it")

// build makes the checkers of the plan's new and changed checks: a check
// of the workload's processes looks at its service's pid; a check that
// would read a service's output or messages is refused at its position,
// and what was made is closed again.
func (a *Agent) build(p plan) (map[string]built, error) {
	out := map[string]built{}
	var errs config.Errors
	retimed := map[string]bool{}
	for _, ch := range p.retimed {
		retimed[ch.Name] = true
	}
	for _, ch := range append(append(append([]config.Check{}, p.added...), p.changed...), p.retimed...) {
		if ch.Fed.Feed != 0 {
			out[ch.Name] = built{} // the Monitor makes it (addFed)
			continue
		}
		var reads, need error
		var b built
		env := kinds.Env{
			Output: func(c *logwatch.Check) {
				need = kinds.ErrNoWorkload
				if b.svc, reads = a.serviceFor(ch, kinds.ErrNoWorkload); reads == nil {
					b.log = c
				}
			},
			Workload: func(string) func() int {
				need = kinds.ErrNoProcesses
				s, err := a.serviceFor(ch, kinds.ErrNoProcesses)
				if err != nil {
					reads = err
					return func() int { return 0 }
				}
				return s.pid
			},
			Notify: func(string, time.Duration) health.Checker {
				reads = errHears
				return health.CheckerFunc(func(context.Context) error { return errHears })
			},
		}
		checker, err := kinds.All.Build(ch, env)
		if old := a.logCheck(ch.Name); err == nil && b.log != nil && old != nil && retimed[ch.Name] {
			// Its lines are the same: what it saw of them stands.
			checker, b.log = old, old
		}
		if err == nil && reads != nil {
			err = reads
		}
		if err != nil {
			if c, ok := checker.(io.Closer); ok {
				c.Close()
			}
			errs = append(errs, ch.Errorf("%v", err))
			continue
		}
		b.check = ch.Health(checker)
		b.check.Disabled = ch.Disabled
		b.need = need
		b.closer, _ = checker.(io.Closer)
		out[ch.Name] = b
	}
	if len(errs) > 0 {
		for _, b := range out {
			if b.closer != nil {
				b.closer.Close()
			}
		}
		return nil, errs
	}
	return out, nil
}

// logCheck is the log check of that name that a service's output is
// shown to, or nil.
func (a *Agent) logCheck(name string) *logwatch.Check {
	for _, s := range a.services {
		for _, c := range s.logChecks {
			if c.Name() == name {
				return c
			}
		}
	}
	return nil
}

// setLogCheck makes c (nil: none) the log check of that name, shown the
// lines of s's output from now on: the streams that showed them to
// another of that name show it no more, and c is woken by its lines. The
// lists are made anew, never changed in place: the streams read them as
// they copy.
func (a *Agent) setLogCheck(name string, c *logwatch.Check, s *service) {
	if c == nil && a.logCheck(name) == nil {
		return
	}
	for _, sv := range a.services {
		if i := slices.IndexFunc(sv.logChecks, func(l *logwatch.Check) bool { return l.Name() == name }); i >= 0 {
			sv.logChecks = slices.Delete(slices.Clone(sv.logChecks), i, i+1)
			sv.streams.Set(sv.logChecks)
		}
	}
	if c == nil {
		a.wake.remove(name)
		return
	}
	s.logChecks = append(slices.Clone(s.logChecks), c)
	s.streams.Set(s.logChecks)
	a.wake.add(name)
}

// serviceFor is the service whose output, processes or messages ch reads:
// the one it names, or the only one; need when there is none.
func (a *Agent) serviceFor(ch config.Check, need error) (*service, error) {
	if len(a.services) == 0 {
		return nil, need
	}
	if s := serviceNamed(a.services, ch.Service); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("which service's? the file has %d: give the check service: one of %s", len(a.services), a.serviceNames())
}

// Reload reads the file again and applies what changed (see
// above). The error is a *ConfigError, with every reason, when the file is
// refused: nothing changed then; a *RunError when the Monitor refused a
// change of the plan (vitals is stopping, or startup passed meanwhile): the
// changes made before it stand, and the next reload starts from them.
// Either way an event says so (config-reloaded, config-rejected), the log
// and vitals_config_reloads_total count it.
func (a *Agent) Reload(why string) (client.Reloaded, error) {
	a.reloading.Lock()
	defer a.reloading.Unlock()
	out, err := a.reload()
	if err != nil {
		a.reloads.WithLabelValues(reloadRejected).Inc()
		a.logger.Warn("the file was not reloaded", "why", why, "err", err)
		a.monitor.Emit(health.Event{Type: health.EventConfigRejected, Output: err.Error(), Reason: why})
		return out, err
	}
	a.reloads.WithLabelValues(reloadApplied).Inc()
	a.logger.Info("the file was reloaded", "why", why, "added", out.Added, "changed", out.Changed,
		"retimed", out.Retimed, "removed", out.Removed, "sections", out.Sections, "restarted", out.Restarted)
	a.monitor.Emit(health.Event{Type: health.EventConfigReloaded, Output: out.String(), Reason: why})
	return out, nil
}

func (a *Agent) reload() (client.Reloaded, error) {
	if a.opts.Reload == nil {
		return client.Reloaded{}, &ConfigError{errors.New("there is no file to read again: vitals run was given none, or read it from stdin")}
	}
	if a.stopping() {
		return client.Reloaded{}, errStopping
	}
	old := a.now.Load()
	if a.opts.Watch {
		// Read as the load reads it: a change the watch sees later is
		// compared with this.
		a.sums.Store(configSum(old.Paths))
	}
	next, err := a.opts.Reload()
	if err != nil {
		return client.Reloaded{}, &ConfigError{err}
	}
	p, err := planReload(old, next, !a.monitor.Snapshot().StartupPassed.IsZero(), a.fixed)
	if err != nil {
		return client.Reloaded{}, &ConfigError{errors.New(next.Redact(err.Error()))}
	}
	if a.live == nil && len(p.services) > 0 {
		// Made with the agent, they start with Run: nothing to change.
		return client.Reloaded{}, &ConfigError{next.ErrorAt("services", "changed before vitals runs: a reload changes the services it runs; restart vitals to apply it")}
	}
	made, err := a.build(p)
	if err != nil {
		return client.Reloaded{}, &ConfigError{errors.New(next.Redact(err.Error()))}
	}
	var parts remade
	if a.live != nil {
		if parts, err = a.live.remake(p, next); err != nil {
			closeAll(made, nil)
			return client.Reloaded{}, redacted(err, next.Redact)
		}
	}
	a.applying.Lock()
	defer a.applying.Unlock()
	if a.stopping() { // it began while the file was read: the stop finds the parts as they are
		closeAll(made, nil)
		return client.Reloaded{}, errStopping
	}
	// The new file's secrets are hidden from its first output on, and
	// the old file's still: the checks' histories may hold them.
	a.secrets.Store(a.secrets.Load().With(next.Redactor()))
	done := map[string]bool{} // the names whose change was applied
	var out client.Reloaded
	whole := false // every change applied, the other parts' too
	defer func() {
		// The file as it now runs, whether every change was applied or
		// the Monitor refused one: its checks are those that run, what
		// the next reload compares with, what each service starts over
		// with and the actions act on; the rest is the new file's once
		// applied.
		now := *old
		if whole {
			now = *next
		}
		now.Checks = applied(old.Checks, next.Checks, done)
		a.now.Store(&now)
		setChecks(a.services, now.Checks)
		a.actions.Set(a.actionsOf(now.Checks))
		closeAll(made, done)
	}()
	// The new checks' actions from their first result on; the old ones'
	// while they run. The deferred Set leaves those of the checks that run.
	acts := a.actionsOf(old.Checks)
	maps.Copy(acts, a.actionsOf(next.Checks))
	a.actions.Set(acts)
	if err := a.applyChecks(p, made, done, &out); err != nil {
		return out, err
	}
	// The Monitor's own: what Checker, and so the pod condition's
	// message, withholds; the IETF JSON's top.
	if p.changes("details") {
		a.monitor.SetDetails(next.Details != config.DetailsNone)
	}
	if p.changes("service-info") {
		a.monitor.SetServiceInfo(next.ServiceInfo)
	}
	if p.changes("hooks") {
		a.hooks.Apply(next.Hooks)
	}
	if a.live != nil {
		out.Restarted = a.live.apply(parts)
	}
	whole, out.Sections = true, p.sections
	return out, nil
}

// errStopping refuses a reload once the stop has begun.
var errStopping = &RunError{errors.New("vitals is stopping: the file is not read again")}

// stopping says whether the stop has begun.
func (a *Agent) stopping() bool { return a.live != nil && a.live.ending.Load() }

// applyChecks applies the plan's changes of checks, with the checkers
// made, in the order removed, retimed, changed, added, noting each applied
// in done and out. A check the workload feeds is made anew by the Monitor,
// and found by the API from then on.
func (a *Agent) applyChecks(p plan, made map[string]built, done map[string]bool, out *client.Reloaded) error {
	was := a.fed.Load()
	fed := &api.FedChecks{Heartbeats: maps.Clone(was.Heartbeats), Watchdogs: maps.Clone(was.Watchdogs)}
	defer a.fed.Store(fed)
	for _, name := range p.removed {
		if err := a.monitor.Remove(name); err != nil {
			return stoppedPartway(err)
		}
		done[name] = true
		a.closeChecker(name)
		delete(fed.Heartbeats, name)
		delete(fed.Watchdogs, name)
		delete(a.needs, name)
		a.setLogCheck(name, nil, nil)
		out.Removed = append(out.Removed, name)
	}
	apply := func(chs []config.Check, do func(health.Check) error, into *[]string) error {
		for _, ch := range chs {
			b := made[ch.Name]
			var err error
			if ch.Fed.Feed != 0 {
				err = a.replaceFed(ch, fed)
			} else {
				err = do(b.check)
			}
			if err != nil {
				return stoppedPartway(err)
			}
			done[ch.Name] = true
			a.closeChecker(ch.Name)
			if b.closer != nil {
				a.closers[ch.Name] = b.closer
			}
			a.needs[ch.Name] = b.need
			a.setLogCheck(ch.Name, b.log, b.svc)
			*into = append(*into, ch.Name)
		}
		return nil
	}
	if err := apply(p.retimed, a.monitor.Update, &out.Retimed); err != nil {
		return err
	}
	if err := apply(p.changed, a.monitor.Replace, &out.Changed); err != nil {
		return err
	}
	return apply(p.added, a.monitor.Add, &out.Added)
}

// replaceFed puts ch, a check the workload feeds, in place of the one of
// its name, if any: made anew, pending until the workload next feeds it
// (a heartbeat for at most its ttl), as a Heartbeat or a Watchdog keeps
// its ttl or limit for its life.
func (a *Agent) replaceFed(ch config.Check, fed *api.FedChecks) error {
	if a.isRunning(ch.Name) {
		if err := a.monitor.Remove(ch.Name); err != nil {
			return err
		}
		delete(fed.Heartbeats, ch.Name)
		delete(fed.Watchdogs, ch.Name)
	}
	return a.addFed(ch, fed)
}

// closeAll closes the connections of the checkers made whose change was
// not applied (all, with done nil).
func closeAll(made map[string]built, done map[string]bool) {
	for name, b := range made {
		if !done[name] && b.closer != nil {
			b.closer.Close()
		}
	}
}

// applied is the checks that run once the changes of done (by name) were
// applied of a reload from old to next: next's checks whose change was
// applied or that did not change, in next's order, then old's that were to
// go and have not.
func applied(old, next []config.Check, done map[string]bool) []config.Check {
	was := map[string]config.Check{}
	for _, ch := range old {
		was[ch.Name] = ch
	}
	var out []config.Check
	kept := map[string]bool{}
	for _, ch := range next {
		before, ok := was[ch.Name]
		switch {
		case done[ch.Name] || (ok && sameCheck(before, ch)):
			out = append(out, ch)
			kept[ch.Name] = true
		case ok: // its change was not applied: it runs as it was
			out = append(out, before)
			kept[ch.Name] = true
		}
	}
	for _, ch := range old {
		if !kept[ch.Name] && !done[ch.Name] {
			out = append(out, ch)
		}
	}
	return out
}

// stoppedPartway is the error of a Monitor that refused a change of a plan
// it had been judged to take: it stopped, as vitals is stopping, or startup
// passed meanwhile.
func stoppedPartway(err error) error {
	return &RunError{fmt.Errorf("the reload was cut short, the changes before it applied: %w", err)}
}

// closeChecker closes the connection the check of that name kept, if any.
func (a *Agent) closeChecker(name string) {
	if c := a.closers[name]; c != nil {
		c.Close()
		delete(a.closers, name)
	}
}

// listenForReload reloads the file on SIGHUP, when there is one to read
// again; the services get the signal too, as before (supervise forwards
// it). Without a file, SIGHUP is the services' alone.
func (r *run) listenForReload() error {
	if r.opts.Reload == nil {
		return nil
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	r.stopReloads = func() {
		signal.Stop(hup)
		close(done)
	}
	go func() {
		for {
			select {
			case <-hup:
				r.Reload("SIGHUP")
			case <-done:
				return
			}
		}
	}()
	return nil
}
