package config_test

import (
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/health"
)

func TestBadWatchdogChecksSayWhatAndWhere(t *testing.T) {
	expectRefused(t, []refusal{
		{"no limit", y(
			"checks:",
			"  jobs:",
			"    watchdog: {}",
		), []string{
			`vitals.yaml:3:15: checks.jobs.watchdog.limit: required, and more than 0`,
		}},
		{"a limit of 0, and one without a unit", y(
			"checks:",
			"  jobs:",
			"    watchdog: {limit: 0}",
			"  more:",
			"    watchdog: {limit: 5}",
		), []string{
			`vitals.yaml:3:15: checks.jobs.watchdog.limit: required, and more than 0`,
			`vitals.yaml:5:23: checks.more.watchdog.limit: "5" has no unit: write 5s (or ms, m, h)`,
		}},
		{"a startup watchdog, which would pass before any work", y(
			"checks:",
			"  jobs:",
			"    level: startup",
			"    watchdog: {limit: 5m}",
		), []string{
			`vitals.yaml:3:12: checks.jobs.level: a watchdog cannot be a startup check: it passes while idle, so startup would pass before any work`,
		}},
		{"timing fields, each at its key, and another component type", y(
			"checks:",
			"  jobs:",
			"    watchdog: {limit: 5m}",
			"    period: 5s",
			"    success-threshold: 2",
			"    component-type: system",
		), []string{
			`vitals.yaml:4:13: checks.jobs.period: does not apply to a watchdog: its limit decides, the moment a unit of work reaches it`,
			`vitals.yaml:5:24: checks.jobs.success-threshold: does not apply to a watchdog: its limit decides, the moment a unit of work reaches it`,
			`vitals.yaml:6:21: checks.jobs.component-type: a watchdog is fed by the workload with its own units of work: its component type is component`,
		}},
	})
}

func TestAWatchdogIsFedByItsLimitWithTheTimingOfMonitorWatchdog(t *testing.T) {
	c := mustParse(t, y(
		"checks:",
		"  jobs:",
		"    level: live",
		"    watchdog: {limit: 5m}",
		"    stable-for: 30s",
	))
	ch := c.Checks[0]
	if ch.Fed != (config.Fed{Feed: config.Units, Deadline: 5 * time.Minute}) || ch.Spec != (kinds.WatchdogSpec{Limit: 5 * time.Minute}) ||
		ch.Level != health.Live || ch.ComponentType != health.ComponentTypeComponent || ch.StableFor != 30*time.Second {
		t.Fatalf("check %+v", ch)
	}
	if ch.Period != 10*time.Second || ch.Timeout != 0 || ch.InitialDelay != 0 || ch.SuccessThreshold != 1 || ch.FailureThreshold != 1 {
		t.Errorf("timing: period %v, timeout %v, initial delay %v, thresholds %d and %d; want Monitor.Watchdog's: 10s, none, none, 1 and 1",
			ch.Period, ch.Timeout, ch.InitialDelay, ch.SuccessThreshold, ch.FailureThreshold)
	}
}
