package notify

import (
	"errors"
	"fmt"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// run is what one run of the workload has said of itself. Every run starts
// from nothing: a restarted workload says READY=1 again.
type run struct {
	number  int       // the supervisor's: how many restarts came before it
	pid     int       // its main process; 0 until it started, or when it could not
	started time.Time // when it started
	ready   bool      // READY=1, or the newline on the notification descriptor
	// reloading is RELOADING=1 since the latest READY=1, heard first at
	// reloaded: the workload reloads its configuration, and is not ready
	// until it says READY=1 again.
	reloading bool
	reloaded  time.Time
	// extended is when the time the run asked for to start up ends
	// (EXTEND_TIMEOUT_USEC=), the latest of what it asked; zero for none.
	extended time.Time
	// pinged is the latest READY=1 or WATCHDOG=1 (or the newline); zero
	// for none yet.
	pinged   time.Time
	trigger  bool // WATCHDOG=trigger since the latest ping
	stopping bool // STOPPING=1
	status   string
}

// apply records what m says, heard at now. An extension counts only while
// the run starts up: systemd extends the timeout of the state the service
// is in, and vitals has only one, the start's (a reload fails readiness
// however long it takes, and a watchdog is not extended, as systemd's is
// not). Like systemd's, it asks for time from now, and never shortens what
// an earlier one asked.
func (r *run) apply(m Message, now time.Time) {
	switch {
	case m.Ready:
		r.ready, r.reloading = true, false
	case m.Reloading && !r.reloading:
		r.reloading, r.reloaded = true, now
	}
	if m.Stopping {
		r.stopping = true
	}
	if m.Ready || m.Watchdog {
		r.pinged, r.trigger = now, false
	}
	if m.Trigger {
		r.trigger = true
	}
	if m.HasStatus {
		r.status = m.Status
	}
	if m.Extend > 0 && r.starting() && now.Add(m.Extend).After(r.extended) {
		r.extended = now.Add(m.Extend)
	}
}

// starting says whether the run is starting up: it has said neither
// READY=1 nor anything since that ends the start another way.
func (r run) starting() bool { return !r.ready && !r.reloading && !r.stopping }

// words are what the outputs call the ways the workload says it is ready
// ("READY=1", or with s6's notification descriptor "READY=1 or a newline on
// fd 3") and alive.
type words struct{ ready, pings string }

// wordsFor are the words for a workload with notification descriptor fd, 0
// for none.
func wordsFor(fd int) words {
	if fd == 0 {
		return words{"READY=1", "WATCHDOG=1 or READY=1"}
	}
	return words{fmt.Sprintf("READY=1 or a newline on fd %d", fd), fmt.Sprintf("WATCHDOG=1, READY=1 or a newline on fd %d", fd)}
}

// errNotStarted is the answer while no run of the workload has started.
var errNotStarted = errors.New("the workload has not started")

// judge is the answer at now of a check with watchdog (0: none) to what r
// said, w naming the ways it says it. Without a watchdog, the check passes
// once the run said it is ready, until it says it reloads or stops; while
// the time the run asked for to start up stands, it decides nothing
// (health.Undecided), so that a check that waits for READY=1 stays pending
// rather than running out of failures. With one, it fails when no ping came
// within watchdog of the start or of the latest one, and at once on
// WATCHDOG=trigger, until the next ping; it does not wait for READY=1, and
// once the run said STOPPING=1 its watchdog is off, as systemd's is. Its
// observed value is the seconds since the latest ping (or the start). What
// the run said in STATUS= is the output of a pass, and follows the reason
// of a failure.
func judge(r run, watchdog time.Duration, w words, now time.Time) (health.Observation, error) {
	if r.pid == 0 {
		return health.Observation{}, errNotStarted
	}
	reason := func(format string, args ...any) string {
		msg := fmt.Sprintf(format, args...)
		if r.status != "" {
			msg += "; status: " + r.status
		}
		return msg
	}
	fail := func(format string, args ...any) error { return errors.New(reason(format, args...)) }
	pass := func(o health.Observation, msg string) (health.Observation, error) {
		o.Message = msg
		if r.status != "" {
			o.Message = r.status
		}
		return o, nil
	}
	if watchdog == 0 {
		switch {
		case r.stopping:
			return health.Observation{}, fail("the workload said STOPPING=1")
		case r.reloading:
			return health.Observation{}, fail("reloading since %s, %v ago (RELOADING=1): waiting for READY=1",
				timeOfDay(r.reloaded), ago(now.Sub(r.reloaded)))
		case r.ready:
			return pass(health.Observation{}, "the workload said it is ready")
		case now.Before(r.extended):
			return health.Observation{}, health.Undecided(reason(
				"no %s since the workload started %v ago; it asked for time until %s, %v from now (EXTEND_TIMEOUT_USEC=)",
				w.ready, ago(now.Sub(r.started)), timeOfDay(r.extended), ago(r.extended.Sub(now))))
		case !r.extended.IsZero():
			return health.Observation{}, fail(
				"no %s since the workload started %v ago, nor in the time it asked for, until %s (EXTEND_TIMEOUT_USEC=)",
				w.ready, ago(now.Sub(r.started)), timeOfDay(r.extended))
		}
		return health.Observation{}, fail("no %s since the workload started %v ago", w.ready, ago(now.Sub(r.started)))
	}
	since := r.started
	if !r.pinged.IsZero() {
		since = r.pinged
	}
	age := max(now.Sub(since), 0)
	o := health.Observation{Value: age.Seconds(), Unit: "s"}
	switch {
	case r.stopping:
		return pass(o, "the workload said STOPPING=1: its watchdog is off")
	case r.trigger:
		return o, fail("the workload said WATCHDOG=trigger")
	case age >= watchdog && r.pinged.IsZero():
		return o, fail("no %s since the workload started %v ago (watchdog %v)", w.pings, ago(age), watchdog)
	case age >= watchdog:
		return o, fail("no %s for %v (watchdog %v)", w.pings, ago(age), watchdog)
	case r.pinged.IsZero():
		return pass(o, fmt.Sprintf("no %s yet, %v after the start (watchdog %v)", w.pings, ago(age), watchdog))
	}
	return pass(o, fmt.Sprintf("the latest %s %v ago (watchdog %v)", w.pings, ago(age), watchdog))
}

// changes is when the answer of a check with watchdog to what r said
// changes with time alone: its watchdog runs out then, or, without one, the
// time the run asked for to start up ends. Zero for never; a time past is
// one that has come.
func (r run) changes(watchdog time.Duration) time.Time {
	switch {
	case r.pid == 0 || r.stopping:
		return time.Time{}
	case watchdog == 0 && r.starting():
		return r.extended
	case watchdog == 0 || r.trigger:
		return time.Time{}
	case r.pinged.IsZero():
		return r.started.Add(watchdog)
	}
	return r.pinged.Add(watchdog)
}

// timeOfDay says when t was, or will be, as the time of day: an output that
// says "since" or "until" names a moment one can find in the logs.
func timeOfDay(t time.Time) string { return t.Format(time.TimeOnly) }

// ago says how long ago something was, to the millisecond under a second
// and to the tenth of a second under a minute: finer than timefmt.Coarse,
// since a watchdog's output compares it with the watchdog, and "10s ago
// (watchdog 10s)" would not say whether it has run out.
func ago(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
