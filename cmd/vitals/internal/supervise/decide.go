package supervise

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/signals"
)

// What becomes of a service once a run of it has ended: a restart rule's
// actions, in the file's words, and a stop.
const (
	ActionRestart = config.RuleRestart // start it again; its checks start over
	ActionExit    = config.RuleExit    // stop every service, and vitals exits with its code
	ActionIgnore  = config.RuleIgnore  // it stays down; vitals and the other services go on
	// ActionStop: it was stopped for good (vitals is stopping, or was asked
	// to stop it): nothing more is done.
	ActionStop = "stop"
)

// matches reports whether r, one of a service's restart rules (the
// kubelet's ContainerRestartRule, KEP-5307), is for code.
func matches(r config.RestartRule, code int) bool { return slices.Contains(r.Codes, code) == r.In }

// ruleString is r as a decision's Why says it: "exit if in [3]".
func ruleString(r config.RestartRule) string {
	op := "in"
	if !r.In {
		op = "not-in"
	}
	codes := make([]string, len(r.Codes))
	for i, c := range r.Codes {
		codes[i] = strconv.Itoa(c)
	}
	return fmt.Sprintf("%s if %s [%s]", r.Action, op, strings.Join(codes, ", "))
}

// Cause is why a run of a service ended.
type Cause int

const (
	// Itself: the run exited, or was killed, of its own accord or by
	// someone else than vitals.
	Itself Cause = iota
	// Check: a check's on-failure restart stopped it.
	Check
	// Hand: a restart by hand (vitals restart, the API) stopped it.
	Hand
	// Stopped: vitals stopped it for good (vitals is stopping, or a check's
	// on-failure exit).
	Stopped
)

// Ended is how a run ended, as the decision reads it.
type Ended struct {
	Cause Cause
	// Status is the run's wait status: its code, or the signal that
	// killed it.
	Status syscall.WaitStatus
	// Ran is how long the run ran: one that ran config.BackoffResetAfter
	// or longer is not crash-looping, and its restart's backoff starts
	// over.
	Ran time.Duration
}

// Code is the shell's code of a run's end: its exit status, or 128 plus
// the number of the signal that killed it, as the kubelet reports it too.
func (e Ended) Code() int { return exitCode(e.Status) }

// Decision is what becomes of a service once a run of it has ended.
type Decision struct {
	// Action is ActionRestart, ActionExit (every service stops, and vitals
	// exits with Code), ActionIgnore (it stays down) or ActionStop.
	Action string
	// Wait is how long to wait before the restart.
	Wait time.Duration
	// Delay is the backoff's delay for the restart after this one.
	Delay time.Duration
	// Code is the run's code (Ended.Code).
	Code int
	// Why says what decided, for the logs and events: "restart-rules[0]:
	// restart if in [42]", "restart: on-failure", "check failed".
	Why string
}

// Decide is what becomes of service s, its defaults filled in, whose run
// ended as e: a stop for good is a stop; a restart by hand is at once, and
// a check's after the backoff's delay, whatever the policy (the run was
// stopped to be restarted); otherwise the first of s's restart rules that
// is for the code decides, or else its restart policy: a restart after the
// backoff's delay, or an exit. delay is the backoff's delay for this
// restart (0: the first, which is BackoffInitial); jitter, from -1 to 1,
// spreads it by up to a tenth, so that services that failed together do
// not come back in step. The next restart's delay is twice this one's, up
// to BackoffMax, and starts over from BackoffInitial after a run of
// config.BackoffResetAfter or longer.
func Decide(s config.Service, e Ended, delay time.Duration, jitter float64) Decision {
	d := Decision{Code: e.Code()}
	if delay <= 0 || e.Ran >= config.BackoffResetAfter {
		delay = s.BackoffInitial
	}
	restart := func(why string) Decision {
		d.Action, d.Why = ActionRestart, why
		d.Wait = delay + time.Duration(jitter*0.1*float64(delay))
		d.Delay = min(2*delay, max(s.BackoffMax, s.BackoffInitial))
		return d
	}
	switch e.Cause {
	case Stopped:
		d.Action, d.Why = ActionStop, "stopped"
		return d
	case Hand:
		d.Action, d.Why, d.Delay = ActionRestart, "restart requested", delay
		return d
	case Check:
		return restart("a check failed")
	}
	for i, r := range s.RestartRules {
		if matches(r, d.Code) {
			why := fmt.Sprintf("restart-rules[%d]: %s", i, ruleString(r))
			if r.Action == ActionRestart {
				return restart(why)
			}
			d.Action, d.Why = r.Action, why
			return d
		}
	}
	failed := e.Status.Signaled() || e.Status.ExitStatus() != 0
	if s.Restart == config.RestartAlways || s.Restart == config.RestartOnFailure && failed {
		return restart("restart: " + s.Restart)
	}
	d.Action, d.Why = ActionExit, "restart: "+s.Restart
	return d
}

// describe says how a run ended, for the logs: "exit code 3", "killed by
// SIGKILL".
func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + signals.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit code %d", ws.ExitStatus())
}
