package supervise

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// ended reads a run's end as the table spells it: "exit 3", "signal 9",
// "check", "hand", "stopped".
func ended(t *testing.T, s string) Ended {
	t.Helper()
	switch {
	case s == "check":
		return Ended{Cause: Check, Status: status(t, "signal 15")}
	case s == "hand":
		return Ended{Cause: Hand, Status: status(t, "signal 15")}
	case s == "stopped":
		return Ended{Cause: Stopped, Status: status(t, "signal 15")}
	case strings.HasPrefix(s, "exit "), strings.HasPrefix(s, "signal "):
		return Ended{Status: status(t, s)}
	}
	t.Fatalf("bad end %q", s)
	return Ended{}
}

// status is a wait status: "exit N" or "signal N", as wait(2) encodes it.
func status(t *testing.T, s string) syscall.WaitStatus {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(s, "exit %d", &n); err == nil {
		return syscall.WaitStatus(n << 8)
	}
	if _, err := fmt.Sscanf(s, "signal %d", &n); err == nil {
		return syscall.WaitStatus(n)
	}
	t.Fatalf("bad status %q", s)
	return 0
}

// rules reads restart rules as the table spells them: "restart in 42;
// exit not-in 0".
func rules(t *testing.T, s string) []config.RestartRule {
	t.Helper()
	var out []config.RestartRule
	for r := range strings.SplitSeq(s, ";") {
		f := strings.Fields(r)
		if len(f) == 0 {
			continue
		}
		rule := config.RestartRule{Action: f[0], In: f[1] == "in"}
		for _, c := range strings.Split(f[2], ",") {
			var n int
			fmt.Sscan(c, &n)
			rule.Codes = append(rule.Codes, n)
		}
		out = append(out, rule)
	}
	return out
}

// Every policy, under every set of rules, for every way a run ends: the
// rules come first (the first that is for the code decides), then the
// policy; a death by signal N is code 128+N; a check's restart and a
// restart by hand restart whatever the policy, and a stop stops.
func TestTheRestartDecision(t *testing.T) {
	for _, tc := range []struct {
		rules string
		ended string
		// want is the action under never, on-failure and always.
		want string
		code int
	}{
		// No rules: the policy alone.
		{"", "exit 0", "exit exit restart", 0},
		{"", "exit 3", "exit restart restart", 3},
		{"", "exit 42", "exit restart restart", 42},
		{"", "signal 15", "exit restart restart", 143},
		{"", "signal 9", "exit restart restart", 137},
		{"", "check", "restart restart restart", 143},
		{"", "hand", "restart restart restart", 143},
		{"", "stopped", "stop stop stop", 143},
		// A rule that restarts on 42: even under never.
		{"restart in 42", "exit 0", "exit exit restart", 0},
		{"restart in 42", "exit 3", "exit restart restart", 3},
		{"restart in 42", "exit 42", "restart restart restart", 42},
		{"restart in 42", "signal 15", "exit restart restart", 143},
		{"restart in 42", "check", "restart restart restart", 143},
		{"restart in 42", "hand", "restart restart restart", 143},
		{"restart in 42", "stopped", "stop stop stop", 143},
		// A rule that exits on 3: even under always.
		{"exit in 3", "exit 0", "exit exit restart", 0},
		{"exit in 3", "exit 3", "exit exit exit", 3},
		{"exit in 3", "exit 42", "exit restart restart", 42},
		{"exit in 3", "signal 9", "exit restart restart", 137},
		{"exit in 3", "check", "restart restart restart", 143},
		// Pebble's on-success: ignore: a clean exit leaves it down.
		{"ignore in 0", "exit 0", "ignore ignore ignore", 0},
		{"ignore in 0", "exit 3", "exit restart restart", 3},
		{"ignore in 0", "signal 15", "exit restart restart", 143},
		{"ignore in 0", "hand", "restart restart restart", 143},
		// not-in: every other code, signals' included; the first match wins.
		{"ignore in 0; restart not-in 0", "exit 0", "ignore ignore ignore", 0},
		{"ignore in 0; restart not-in 0", "exit 7", "restart restart restart", 7},
		{"ignore in 0; restart not-in 0", "signal 9", "restart restart restart", 137},
		{"exit not-in 0,143; restart in 143", "signal 15", "restart restart restart", 143},
		{"exit not-in 0,143; restart in 143", "signal 9", "exit exit exit", 137},
		{"exit not-in 0,143; restart in 143", "exit 0", "exit exit restart", 0},
		{"exit not-in 0,143; restart in 143", "stopped", "stop stop stop", 143},
	} {
		for i, policy := range []string{config.RestartNever, config.RestartOnFailure, config.RestartAlways} {
			want := strings.Fields(tc.want)[i]
			p := config.Service{Restart: policy, RestartRules: rules(t, tc.rules), BackoffInitial: time.Second, BackoffMax: 8 * time.Second}
			d := Decide(p, ended(t, tc.ended), 0, 0)
			if d.Action != want || d.Code != tc.code {
				t.Errorf("restart: %s, rules %q, %s: %s with code %d (%s); want %s with code %d",
					policy, tc.rules, tc.ended, d.Action, d.Code, d.Why, want, tc.code)
			}
		}
	}
}

// The backoff: the first restart waits backoff.initial, each next one
// twice the one before up to backoff.max; a run of ResetAfter or longer
// starts it over; a restart by hand waits nothing and leaves the backoff
// as it was; the jitter spreads a wait by a tenth at most.
func TestTheRestartBackoff(t *testing.T) {
	p := config.Service{Restart: config.RestartAlways, BackoffInitial: time.Second, BackoffMax: 5 * time.Second}
	crash := Ended{Status: status(t, "exit 1"), Ran: time.Second}
	for _, tc := range []struct {
		name         string
		e            Ended
		delay        time.Duration
		jitter       float64
		wait, delay2 time.Duration
	}{
		{"the first restart", crash, 0, 0, time.Second, 2 * time.Second},
		{"the second", crash, 2 * time.Second, 0, 2 * time.Second, 4 * time.Second},
		{"up to max", crash, 4 * time.Second, 0, 4 * time.Second, 5 * time.Second},
		{"at max", crash, 5 * time.Second, 0, 5 * time.Second, 5 * time.Second},
		{"after a long run", Ended{Status: status(t, "exit 1"), Ran: config.BackoffResetAfter}, 5 * time.Second, 0, time.Second, 2 * time.Second},
		{"just short of a long run", Ended{Status: status(t, "exit 1"), Ran: config.BackoffResetAfter - time.Millisecond}, 5 * time.Second, 0, 5 * time.Second, 5 * time.Second},
		{"a tenth more", crash, 2 * time.Second, 1, 2200 * time.Millisecond, 4 * time.Second},
		{"a tenth less", crash, 2 * time.Second, -1, 1800 * time.Millisecond, 4 * time.Second},
		{"a check's restart", Ended{Cause: Check, Status: status(t, "signal 15")}, 2 * time.Second, 0, 2 * time.Second, 4 * time.Second},
		{"by hand", Ended{Cause: Hand, Status: status(t, "signal 15")}, 4 * time.Second, 1, 0, 4 * time.Second},
	} {
		d := Decide(p, tc.e, tc.delay, tc.jitter)
		if d.Action != ActionRestart || d.Wait != tc.wait || d.Delay != tc.delay2 {
			t.Errorf("%s: %s in %v, next delay %v; want restart in %v, next %v", tc.name, d.Action, d.Wait, d.Delay, tc.wait, tc.delay2)
		}
	}
}

// What decided is said: the rule with its index, or the policy.
func TestTheDecisionSaysWhatDecided(t *testing.T) {
	p := config.Service{Restart: config.RestartNever, RestartRules: rules(t, "ignore in 0; restart in 42"), BackoffInitial: time.Second, BackoffMax: time.Second}
	for end, want := range map[string]string{
		"exit 42": "restart-rules[1]: restart if in [42]",
		"exit 0":  "restart-rules[0]: ignore if in [0]",
		"exit 1":  "restart: never",
	} {
		if got := Decide(p, ended(t, end), 0, 0).Why; got != want {
			t.Errorf("%s: %q, want %q", end, got, want)
		}
	}
}
