package health

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/internal/timefmt"
)

// endpoint is one of the probe endpoints.
type endpoint struct {
	name  string // the path's first segment, which also names the verbose trailer
	level Level
}

var (
	livez    = endpoint{"livez", Live}
	readyz   = endpoint{"readyz", Ready}
	startupz = endpoint{"startupz", Startup}
	healthz  = endpoint{"healthz", Live} // controller-runtime's liveness path
)

// counts reports whether checks of level l are listed on the endpoint: the
// endpoint's own, and for /readyz the startup and live checks too, since
// readiness needs startup passed and no live check failing.
func (ep endpoint) counts(l Level) bool { return l == ep.level || ep.level == Ready }

// line is one check as an endpoint sees it: a line of the verbose text format
// or a member of the JSON format's checks.
type line struct {
	name     string
	e        *entry     // nil for the synthetic shutdown line
	v        *checkView // nil for the synthetic shutdown line
	ok       bool       // does not fail the endpoint
	word     string     // ok, warn, pending, failed
	reason   string     // why, for every word but ok
	excluded bool
}

// report is one endpoint's verdict with the lines behind it, computed from one
// view so that the status code and the body always agree.
type report struct {
	endpoint endpoint
	lines    []line
	unknown  []string // excluded names that match no check on the endpoint
	ok       bool
	details  bool        // show observed values (reasons are withheld per line)
	service  ServiceInfo // the JSON format's top: serviceId, version, releaseId
}

// The lines the endpoints add of their own; their names are reserved.
const (
	// shutdownLine ends /readyz, as the kube-apiserver's shutdown check: ok,
	// or failed once Drain was called.
	shutdownLine = "shutdown"
	// monitorLine says, on /startupz and /readyz, that the Monitor has not
	// started, has stopped, or is paused, so that nothing it shows can be
	// vouched for: paused by Pause, or, on /readyz only, by some owner's
	// PauseChecks (a startup check it holds fails /startupz on its own line).
	monitorLine = "monitor"
)

// report is the endpoint's answer at now, which says how long a check has
// to wait to be stable.
func (v *monitorView) report(ep endpoint, exclude []string, details bool, now time.Time) report {
	rep := report{endpoint: ep, ok: true, details: details}
	lines := make([]line, 0, len(v.entries)+2)
	for _, e := range v.entries {
		if ep.counts(e.check.Level) {
			lines = append(lines, v.line(e, details, now))
		}
	}
	if ep != livez && ep != healthz {
		switch {
		case !v.levels.started:
			lines = append(lines, line{name: monitorLine, word: "pending", reason: "the monitor has not started"})
		case v.levels.stopped && ep == readyz:
			lines = append(lines, line{name: monitorLine, word: "failed", reason: stoppedReason})
		case v.levels.pausedAll || v.levels.paused && ep == readyz:
			lines = append(lines, line{name: monitorLine, word: "pending", reason: "paused: " + v.paused})
		}
	}
	if ep == readyz {
		ln := line{name: shutdownLine, ok: true, word: "ok"}
		if v.levels.draining {
			ln = line{name: shutdownLine, word: "failed", reason: drainReason}
		}
		lines = append(lines, ln)
	}
	// Excluded names are a set, as in the kube-apiserver: repeats are harmless.
	for _, name := range exclude {
		found := false
		for i := range lines {
			if lines[i].name == name {
				lines[i].excluded, lines[i].ok, found = true, true, true
			}
		}
		if !found && !slices.Contains(rep.unknown, name) {
			rep.unknown = append(rep.unknown, name)
		}
	}
	for _, ln := range lines {
		rep.ok = rep.ok && ln.ok
	}
	rep.lines = lines
	return rep
}

// line judges one check for one endpoint at now.
func (v *monitorView) line(e *entry, details bool, now time.Time) line {
	cv := e.view.Load()
	ln := line{name: e.check.Name, e: e, v: cv}
	if cv.stopped {
		ln.ok, ln.word, ln.reason = true, "stopped", "left out until started again"
		return ln
	}
	withheld := func(s string) string {
		if !details {
			return "reason withheld"
		}
		return oneLine(s)
	}
	switch cv.status {
	case Pass:
		ln.ok, ln.word = true, "ok"
	case Warn:
		ln.ok, ln.word, ln.reason = true, "warn", withheld(cv.reason)
	case Fail:
		ln.word, ln.reason = "failed", withheld(cv.reason)
		if cv.waiting {
			ln.reason = stableIn(cv, e, now)
		}
	case Pending:
		// A pending live check does not fail liveness, nor readiness: the
		// kubelet starts liveness as Success.
		ln.ok, ln.word = e.check.Level == Live, "pending"
		switch {
		case !cv.ran && !v.levels.started:
			ln.reason = "the monitor has not started"
		case cv.pause != nil:
			ln.reason = "paused: " + cv.pause.String()
		case !cv.ran && e.check.Level != Startup && !v.levels.latched:
			ln.reason = "waiting for startup checks"
		case !cv.ran && e.check.Kind == "heartbeat":
			ln.reason = "waiting for the first beat"
		case !cv.ran:
			ln.reason = "no result yet"
		case cv.waiting:
			ln.reason = stableIn(cv, e, now)
		case cv.undecided:
			ln.reason = withheld(cv.reason)
		case cv.lastOK:
			ln.reason = fmt.Sprintf("%d of %d passes needed", cv.successes, e.check.SuccessThreshold)
		default:
			ln.reason = fmt.Sprintf("%d of %d failures: %s", cv.failures, e.check.FailureThreshold, withheld(cv.reason))
		}
	}
	return ln
}

// stableIn is the reason of a check whose runs pass, waiting to be stable:
// "pass, stable in 12s" (to the second; to the millisecond under one).
func stableIn(v *checkView, e *entry, now time.Time) string {
	at, _ := v.stableAt(e)
	return "pass, stable in " + timefmt.Coarse(max(at.Sub(now), 0))
}

// oneLine keeps a check's output from breaking the line-based text format.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// err is the report as an error, or nil when it passes.
func (rep report) err() error {
	if rep.ok {
		return nil
	}
	var failed []string
	for _, ln := range rep.lines {
		if !ln.ok {
			failed = append(failed, fmt.Sprintf("%s %s: %s", ln.name, ln.word, ln.reason))
		}
	}
	return fmt.Errorf("%s check failed: %s", rep.endpoint.name, strings.Join(failed, "; "))
}

// Checker returns a function that reports the level's verdict as an error, nil
// when its endpoint would answer 200. It has the type of controller-runtime's
// healthz.Checker, without importing it:
//
//	mgr.AddReadyzCheck("vitals", m.Checker(health.Ready))
//	mgr.AddHealthzCheck("vitals", m.Checker(health.Live))
//
// It reads state only and never runs a check. The error names every failing
// check with its reason.
func (m *Monitor) Checker(level Level) func(*http.Request) error {
	ep, ok := endpointOf(level)
	return func(*http.Request) error {
		if !ok {
			return fmt.Errorf("invalid level %v", level)
		}
		v := m.view.Load()
		if v.passing[level] {
			return nil
		}
		return v.report(ep, nil, m.details.Load(), m.clock.Now()).err()
	}
}

func endpointOf(l Level) (endpoint, bool) {
	switch l {
	case Startup:
		return startupz, true
	case Live:
		return livez, true
	case Ready:
		return readyz, true
	}
	return endpoint{}, false
}
