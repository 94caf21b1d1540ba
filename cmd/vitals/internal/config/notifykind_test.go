package config_test

import (
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

func TestBadNotifyChecksAndNotificationFDsSayWhatAndWhere(t *testing.T) {
	expectRefused(t, []refusal{
		{"a zero watchdog", y(
			"checks:",
			"  alive:",
			"    notify: {watchdog: 0s}",
		), []string{
			`vitals.yaml:3:24: checks.alive.notify.watchdog: more than 0, or left out for none`,
		}},
		{"a negative watchdog, a watchdog without a unit, an unknown field", y(
			"checks:",
			"  alive:",
			"    notify: {watchdog: -5s}",
			"  quick:",
			"    notify: {watchdog: 10}",
			"  up:",
			"    notify: {ready: true}",
		), []string{
			`vitals.yaml:3:24: checks.alive.notify.watchdog: -5s is negative`,
			`vitals.yaml:5:24: checks.quick.notify.watchdog: "10" has no unit: write 10s (or ms, m, h)`,
			`vitals.yaml:7:14: checks.up.notify.ready: unknown field "ready" (want watchdog)`,
		}},
		{"not a mapping", y(
			"checks:",
			"  up:",
			"    notify: READY=1",
		), []string{
			`vitals.yaml:3:13: checks.up.notify: want a mapping of watchdog, got "READY=1"`,
		}},
		{"a notification-fd of the standard streams", y(
			"service:",
			"  command: [app]",
			"  notification-fd: 2",
		), []string{
			`vitals.yaml:3:20: service.notification-fd: 2 is the workload's standard error: give 3 or more`,
		}},
		{"a negative notification-fd", y(
			"service:",
			"  command: [app]",
			"  notification-fd: -3",
		), []string{
			`vitals.yaml:3:20: service.notification-fd: -3 is no descriptor: give 3 to 1023`,
		}},
		{"a notification-fd past the usual limit", y(
			"service:",
			"  command: [app]",
			"  notification-fd: 1024",
		), []string{
			`vitals.yaml:3:20: service.notification-fd: 1024 is past 1023: a descriptor at or past the usual limit on open files (1024) cannot be made`,
		}},
		{"a notification-fd that is no number", y(
			"service:",
			"  command: [app]",
			"  notification-fd: three",
		), []string{
			`vitals.yaml:3:20: service.notification-fd: want a descriptor's number, got "three"`,
		}},
		{"a notification-fd written otherwise than a number is", y(
			"service:",
			"  command: [app]",
			"  notification-fd: \"03\"",
		), []string{
			`vitals.yaml:3:20: service.notification-fd: want a descriptor's number, got "03"`,
		}},
	})
}

func TestTheSpecsOfNotifyChecksAndTheNotificationFD(t *testing.T) {
	c := mustParse(t, y(
		"service:",
		"  command: [app]",
		"  notification-fd: 3",
		"checks:",
		"  up:",
		"    level: startup",
		"    notify: {}",
		"  alive:",
		"    level: live",
		"    notify: {watchdog: 10s}",
		"    failure-threshold: 2",
	))
	if c.Services[0].NotificationFD != 3 {
		t.Errorf("notification-fd %d, want 3", c.Services[0].NotificationFD)
	}
	want := []kinds.NotifySpec{{}, {Watchdog: 10 * time.Second}}
	for i, ch := range c.Checks {
		if ch.Kind != "notify" || ch.Spec != want[i] || ch.ComponentType != "component" || ch.Fed.Feed != 0 {
			t.Errorf("check %s: kind %s, spec %+v, component type %s; want notify, %+v, component", ch.Name, ch.Kind, ch.Spec, ch.ComponentType, want[i])
		}
	}
	if ch := c.Checks[1]; ch.FailureThreshold != 2 || ch.Period != 10*time.Second {
		t.Errorf("a notify check's timing: %+v; want it to take a check's timing", ch)
	}
	// A check that waits for READY=1 fails until it comes, as a
	// startupProbe does: the kubelet's threshold, not a failure at its
	// first run. A watchdog that runs out, and WATCHDOG=trigger, fail a
	// watchdog check at that moment: 1.
	if ch := c.Checks[0]; ch.FailureThreshold != 3 {
		t.Errorf("a notify check's failure-threshold is %d by default, want 3", ch.FailureThreshold)
	}
	watchdog := mustParse(t, "service: {command: [app]}\nchecks:\n  alive: {level: live, notify: {watchdog: 10s}}\n")
	if ch := watchdog.Checks[0]; ch.FailureThreshold != 1 {
		t.Errorf("a notify watchdog check's failure-threshold is %d by default, want 1", ch.FailureThreshold)
	}
}
