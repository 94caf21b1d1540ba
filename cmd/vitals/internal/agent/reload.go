package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
)

// A reload reads the file again (vitals reload, POST /v1/reload, SIGHUP)
// and applies what changed of its checks, as a difference: a check whose
// definition did not change is not touched (its status, history, counters
// and schedule go on); a check whose timing or thresholds alone changed
// keeps its status and history (health.Monitor.Update); a check that
// tests something else starts over, pending (Replace); a removed check
// leaves the endpoints, the page, /metrics and gRPC; an added one appears
// pending. The file is judged whole first: a file that does not load, or
// that changes what a reload does not apply, is refused with every reason,
// and nothing changes.
//
// What a reload does not apply, in this version, and says so: every part
// of the file but checks: (listen, api, hooks, services, kubernetes…), and
// the checks that are bound to more than the Monitor — heartbeats and
// watchdogs (the API feeds them), checks with on-failure: restart or exit
// (the actions hold them), and checks that read a service's output,
// processes or messages (its streams and receivers hold them).

// The results of a reload, as vitals_config_reloads_total counts them.
const (
	reloadApplied  = "applied"
	reloadRejected = "rejected"
)

// plan is what a reload does to the checks, in the new file's order.
type plan struct {
	added, changed, retimed []config.Check
	removed                 []string
}

// empty says that the reload changes nothing.
func (p plan) empty() bool {
	return len(p.added)+len(p.changed)+len(p.retimed)+len(p.removed) == 0
}

// planReload compares the file running, old, with next, read again, and
// says what a reload does to the checks, or every reason it is refused:
// a part of the file other than checks: that changed, or a check that
// changed, came or went where fixed (the reason a check cannot be changed
// by a reload, "" when it can) says it cannot. startupPassed refuses a new
// startup check, which latches. It is pure: the agent applies the plan.
func planReload(old, next *config.Config, startupPassed bool, fixed func(config.Check) string) (plan, error) {
	var errs config.Errors
	for _, s := range sections(old, next) {
		if !s.same {
			errs = append(errs, config.Error{File: next.File, Path: s.key,
				Msg: "changed: a reload applies a change of checks: only; restart vitals to apply this one"})
		}
	}
	was := map[string]config.Check{}
	for _, ch := range old.Checks {
		was[ch.Name] = ch
	}
	var p plan
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
		case ch.Level == health.Startup && startupPassed && !(ok && sameCheck(untimed(before), untimed(ch))):
			errs = append(errs, ch.Errorf("a startup check cannot start anew once startup has passed: it latches until vitals restarts"))
		case !ok:
			p.added = append(p.added, ch)
		case sameCheck(untimed(before), untimed(ch)):
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
			errs = append(errs, config.Error{File: next.File, Path: "checks." + ch.Name,
				Msg: fmt.Sprintf("removed: %s, which a reload does not remove; restart vitals to apply it", why)})
			continue
		}
		p.removed = append(p.removed, ch.Name)
	}
	if len(errs) > 0 {
		return plan{}, errs
	}
	return p, nil
}

// section is one part of the file besides its checks, and whether it is
// the same in two files.
type section struct {
	key  string
	same bool
}

func sections(a, b *config.Config) []section {
	same := func(x, y any) bool { return reflect.DeepEqual(x, y) }
	return []section{
		{"listen", a.Listen == b.Listen},
		{"grpc-listen", a.GRPCListen == b.GRPCListen},
		{"api", a.API == b.API},
		{"api-token-file", a.APITokenFile == b.APITokenFile},
		{"details", a.Details == b.Details},
		{"ui", a.UI == b.UI},
		{"tls", same(a.TLS, b.TLS)},
		{"auth", same(a.Auth, b.Auth)},
		{"service-info", a.ServiceInfo == b.ServiceInfo},
		{"services", a.Shorthand == b.Shorthand && same(a.Services, b.Services)},
		{"drain", a.Drain == b.Drain},
		{"hooks", same(a.Hooks, b.Hooks)},
		{"kubernetes", same(a.Kubernetes, b.Kubernetes)},
	}
}

// sameCheck says whether two checks are defined alike: every field the
// file gives, the kind's block as the file writes it (${VAR} unexpanded:
// vitals's environment does not change while it runs) included, and not
// where the file gives them.
func sameCheck(a, b config.Check) bool {
	return a.Name == b.Name && a.Level == b.Level && a.Kind == b.Kind && a.Source == b.Source && a.Fed == b.Fed &&
		a.Period == b.Period && a.Timeout == b.Timeout && a.InitialDelay == b.InitialDelay &&
		a.SuccessThreshold == b.SuccessThreshold && a.FailureThreshold == b.FailureThreshold && a.StableFor == b.StableFor &&
		a.OnFailure == b.OnFailure && a.Service == b.Service && a.StopTimeout == b.StopTimeout &&
		a.Disabled == b.Disabled && a.ComponentType == b.ComponentType
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
	case ch.Fed.Feed == config.Beats:
		return "a heartbeat, which the management API feeds"
	case ch.Fed.Feed == config.Units:
		return "a watchdog, which the management API feeds"
	case ch.OnFailure != "" && ch.OnFailure != config.OnFailureIgnore:
		return "a check with on-failure: " + ch.OnFailure
	case a.needs[ch.Name] != nil && a.isRunning(ch.Name):
		return "a check that reads its service's output, processes or messages"
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
	check  health.Check
	closer io.Closer // nil when it keeps no connection
}

// errReadsWorkload is what building a check that reads a service says:
// the reload refuses it (fixed).
var errReadsWorkload = errors.New("a check that reads its service's output, processes or messages")

// build makes the checkers of the plan's new and changed checks; a check
// that would read a service is refused at its position, and what was made
// is closed again.
func (a *Agent) build(p plan) (map[string]built, error) {
	out := map[string]built{}
	var errs config.Errors
	for _, ch := range append(append(append([]config.Check{}, p.added...), p.changed...), p.retimed...) {
		reads := false
		env := kinds.Env{
			Output:   func(*logwatch.Check) { reads = true },
			Workload: func(string) func() int { reads = true; return func() int { return 0 } },
			Notify: func(string, time.Duration) health.Checker {
				reads = true
				return health.CheckerFunc(func(context.Context) error { return errReadsWorkload })
			},
		}
		checker, err := kinds.All.Build(ch, env)
		if err == nil && reads {
			err = errReadsWorkload
		}
		if err != nil {
			if c, ok := checker.(io.Closer); ok {
				c.Close()
			}
			errs = append(errs, ch.Errorf("%v, which a reload does not add or change; restart vitals to apply it", err))
			continue
		}
		hc := ch.Health(checker)
		hc.Disabled = ch.Disabled
		b := built{check: hc}
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

// Reload reads the file again and applies what changed of its checks (see
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
		"retimed", out.Retimed, "removed", out.Removed)
	a.monitor.Emit(health.Event{Type: health.EventConfigReloaded, Output: out.String(), Reason: why})
	return out, nil
}

func (a *Agent) reload() (client.Reloaded, error) {
	if a.opts.Reload == nil {
		return client.Reloaded{}, &ConfigError{errors.New("there is no file to read again: vitals run was given none, or read it from stdin")}
	}
	if a.opts.Watch {
		// Read as the load reads it: a change the watch sees later is
		// compared with this.
		a.sums.Store(configSum(a.cfg.Paths))
	}
	next, err := a.opts.Reload()
	if err != nil {
		return client.Reloaded{}, &ConfigError{err}
	}
	p, err := planReload(a.cfg, next, !a.monitor.Snapshot().StartupPassed.IsZero(), a.fixed)
	if err != nil {
		return client.Reloaded{}, &ConfigError{errors.New(next.Redact(err.Error()))}
	}
	made, err := a.build(p)
	if err != nil {
		return client.Reloaded{}, &ConfigError{errors.New(next.Redact(err.Error()))}
	}
	// The new file's secrets are hidden from its first output on, and
	// the old file's still: the checks' histories may hold them.
	a.secrets.Store(a.secrets.Load().With(next.Redactor()))
	done := map[string]bool{} // the names whose change was applied
	var out client.Reloaded
	defer func() {
		// The checks as they now run, whether every change was applied
		// or the Monitor refused one: what the next reload compares with,
		// and what each service starts over with.
		a.cfg.Checks = applied(a.cfg.Checks, next.Checks, done)
		setChecks(a.services, a.cfg.Checks)
		for name, b := range made {
			if !done[name] && b.closer != nil {
				b.closer.Close()
			}
		}
	}()
	for _, name := range p.removed {
		if err := a.monitor.Remove(name); err != nil {
			return out, stoppedPartway(err)
		}
		done[name] = true
		a.closeChecker(name)
		out.Removed = append(out.Removed, name)
	}
	apply := func(chs []config.Check, do func(health.Check) error, into *[]string) error {
		for _, ch := range chs {
			b := made[ch.Name]
			if err := do(b.check); err != nil {
				return stoppedPartway(err)
			}
			done[ch.Name] = true
			a.closeChecker(ch.Name)
			if b.closer != nil {
				a.closers[ch.Name] = b.closer
			}
			*into = append(*into, ch.Name)
		}
		return nil
	}
	if err := apply(p.retimed, a.monitor.Update, &out.Retimed); err != nil {
		return out, err
	}
	if err := apply(p.changed, a.monitor.Replace, &out.Changed); err != nil {
		return out, err
	}
	if err := apply(p.added, a.monitor.Add, &out.Added); err != nil {
		return out, err
	}
	return out, nil
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
