package config_test

import (
	"context"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/logwatch"
	"github.com/vitals-dev/vitals/health"
)

const logFields = "fail-pattern, pattern, stream, window"

func TestBadLogChecksSayWhatAndWhere(t *testing.T) {
	expectRefused(t, []refusal{
		{"no pattern", y(
			"checks:",
			"  started:",
			"    log: {stream: stdout}",
		), []string{
			`vitals.yaml:3:10: checks.started.log: give pattern, fail-pattern or both`,
		}},
		{"an empty block", y(
			"checks:",
			"  started:",
			"    log: {}",
		), []string{
			`vitals.yaml:3:10: checks.started.log: give pattern, fail-pattern or both`,
		}},
		{"not a mapping", y(
			"checks:",
			"  started:",
			"    log: Listening on",
		), []string{
			`vitals.yaml:3:10: checks.started.log: want a mapping of ` + logFields + `, got "Listening on"`,
		}},
		{"a bad pattern", y(
			"checks:",
			"  started:",
			"    log: {pattern: \"Listening (on\"}",
		), []string{
			"vitals.yaml:3:20: checks.started.log.pattern: \"Listening (on\": error parsing regexp: missing closing ): `Listening (on`",
		}},
		{"two bad patterns and a bad stream, all at once", y(
			"checks:",
			"  errors:",
			"    log:",
			"      pattern: \"a**\"",
			"      fail-pattern: \"[z-a]\"",
			"      stream: both",
		), []string{
			"vitals.yaml:4:16: checks.errors.log.pattern: \"a**\": error parsing regexp: invalid nested repetition operator: `**`",
			"vitals.yaml:5:21: checks.errors.log.fail-pattern: \"[z-a]\": error parsing regexp: invalid character class range: `z-a`",
			`vitals.yaml:6:15: checks.errors.log.stream: "both" is not stdout or stderr (leave it out for both)`,
		}},
		{"a window without a fail-pattern", y(
			"checks:",
			"  started:",
			"    log: {pattern: Listening, window: 30s}",
		), []string{
			`vitals.yaml:3:39: checks.started.log.window: applies only with fail-pattern`,
		}},
		{"a zero window without a fail-pattern", y(
			"checks:",
			"  started:",
			"    log: {pattern: Listening, window: 0s}",
		), []string{
			`vitals.yaml:3:39: checks.started.log.window: applies only with fail-pattern`,
		}},
		{"a zero window", y(
			"checks:",
			"  setup-errors:",
			"    log: {fail-pattern: failed, window: 0s}",
		), []string{
			`vitals.yaml:3:41: checks.setup-errors.log.window: more than 0, or left out for the default, 1m0s`,
		}},
		{"a window without a unit, an unknown field", y(
			"checks:",
			"  setup-errors:",
			"    log: {fail-pattern: failed, window: 30, regexp: x}",
		), []string{
			`vitals.yaml:3:41: checks.setup-errors.log.window: "30" has no unit: write 30s (or ms, m, h)`,
			`vitals.yaml:3:45: checks.setup-errors.log.regexp: unknown field "regexp" (want ` + logFields + `)`,
		}},
		{"an unset variable in a pattern", y(
			"checks:",
			"  started:",
			"    log: {pattern: \"Listening on ${NOPE}\"}",
		), []string{
			`vitals.yaml:3:20: checks.started.log.pattern: environment variable NOPE is not set`,
		}},
		{"a log check and a second kind", y(
			"checks:",
			"  started:",
			"    log: {pattern: Listening}",
			"    tcp: {address: \"x:1\"}",
		), []string{
			`vitals.yaml:4:10: checks.started.tcp: a check has one kind, and this one is log already`,
		}},
	})
}

func TestTheSpecsLogChecks(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  started:",
		"    level: startup",
		"    log: {pattern: \"Listening on\"}",
		"  setup-errors:",
		"    level: ready",
		"    log: {fail-pattern: \"OIDC provider setup failed\", window: 30s}",
		"  port:",
		"    log: {pattern: \"port ${PORT}$\", fail-pattern: \"(?i)error\", stream: stderr}",
	))
	wantSpecs := []logwatch.Spec{
		{Pattern: "Listening on"},
		{FailPattern: "OIDC provider setup failed", Window: 30 * time.Second},
		{Pattern: "port 8080$", FailPattern: "(?i)error", Window: logwatch.DefaultWindow, Stream: logwatch.Stderr},
	}
	wantLevels := []health.Level{health.Startup, health.Ready, health.Ready}
	for i, ch := range c.Checks {
		if ch.Kind != "log" || ch.Level != wantLevels[i] || ch.Spec != wantSpecs[i] {
			t.Errorf("check %s: kind %s, level %v, spec %+v; want log, %v, %+v", ch.Name, ch.Kind, ch.Level, ch.Spec, wantLevels[i], wantSpecs[i])
		}
		// Built for a workload, it registers with the workload's output.
		var registered []*logwatch.Check
		checker, err := kinds.All.Build(ch, kinds.Env{Output: func(lc *logwatch.Check) { registered = append(registered, lc) }})
		if err != nil || len(registered) != 1 || checker != health.Checker(registered[0]) {
			t.Fatalf("check %s: built %v, %v, registered %v: want the check, registered once", ch.Name, checker, err, registered)
		}
		if lc := registered[0]; lc.Name() != ch.Name || lc.Spec() != wantSpecs[i] {
			t.Errorf("check %s: built as %q with %+v", ch.Name, lc.Name(), lc.Spec())
		}
		// Built with no workload, it says what it needs, where it is.
		want := "vitals.yaml:" + map[int]string{0: "4:10", 1: "7:10", 2: "9:10"}[i] + ": checks." + ch.Name +
			".log: a log check reads the workload's output: give service: in the file, or the command after --"
		if _, err := kinds.All.Build(ch, kinds.Env{}); err == nil || err.Error() != want {
			t.Errorf("check %s built with no workload: %v, want %s", ch.Name, err, want)
		}
	}
	if got, want := c.Checks[0].Source, `{pattern: "Listening on"}`; got != want {
		t.Errorf("Source %q, want %q", got, want)
	}
	// Built, and waiting for its line.
	if err := build(c.Checks[0]).Check(context.Background()); err == nil || err.Error() != `no line matching "Listening on" yet` {
		t.Errorf("a new log check says %v", err)
	}
}

// A fail-pattern line is an event: a log check with a fail-pattern alone
// fails the moment one is printed (failure-threshold 1). A check with a
// pattern waits for its line, failing until it comes, as a startupProbe
// does: the kubelet's 3, not a failure at its first run (which, with
// on-failure: restart, would restart the workload before it could print
// the line). A threshold given is kept.
func TestALogChecksFailureThresholdIsOneForAFailPatternAlone(t *testing.T) {
	c := mustParse(t, y(
		"service: {command: [app]}",
		"checks:",
		"  errors: {log: {fail-pattern: ERROR}}",
		"  started: {level: startup, log: {pattern: ready}, on-failure: restart}",
		"  both: {log: {pattern: ready, fail-pattern: ERROR}}",
		"  given: {log: {fail-pattern: ERROR}, failure-threshold: 3}",
	))
	for i, want := range []int{1, 3, 3, 3} {
		if ch := c.Checks[i]; ch.FailureThreshold != want {
			t.Errorf("%s: failure-threshold %d, want %d", ch.Name, ch.FailureThreshold, want)
		}
	}
}
