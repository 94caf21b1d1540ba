package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// Services start in the order of after, before and requires, by name where
// those leave a choice (Pebble's order), whatever the file's order.
func TestServicesStartInTheirOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want string
	}{
		{"b requires a, c after b", y(
			"services:",
			"  c: {command: [c], after: [b]}",
			"  b: {command: [b], requires: [a]}",
			"  a: {command: [a]}",
		), "a b c"},
		{"before", y(
			"services:",
			"  a: {command: [a]}",
			"  z: {command: [z], before: [a]}",
		), "z a"},
		{"by name where nothing orders them", y(
			"services:",
			"  worker: {command: [w]}",
			"  broker: {command: [b]}",
			"  api: {command: [a], after: [worker]}",
		), "broker worker api"},
		{"a diamond", y(
			"services:",
			"  d: {command: [d], after: [b, c]}",
			"  c: {command: [c], requires: [a]}",
			"  b: {command: [b], after: [a]}",
			"  a: {command: [a]}",
		), "a b c d"},
	} {
		c := mustParse(t, tc.yaml)
		var got []string
		for _, s := range c.Services {
			got = append(got, s.Name)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
}

// The service: block is one service, named by its command, and the same
// as services: with that one entry; each check is that service's.
func TestTheServiceBlockIsOneService(t *testing.T) {
	c := mustParse(t, y(
		"service: {command: [/usr/bin/nginx, -g, daemon off;]}",
		"checks:",
		"  up: {tcp: {address: localhost:80}, on-failure: restart}",
	))
	if len(c.Services) != 1 || c.Services[0].Name != "nginx" || !c.Shorthand {
		t.Fatalf("services %+v, want one named nginx", c.Services)
	}
	if c.Checks[0].Service != "nginx" {
		t.Errorf("the check's service %q, want nginx", c.Checks[0].Service)
	}
	c = mustParse(t, y("services:", "  web: {command: [nginx]}", "checks:", "  up: {tcp: {address: localhost:80}}"))
	if c.Checks[0].Service != "web" || c.Shorthand {
		t.Errorf("one service of services:: the check's service %q, want web", c.Checks[0].Service)
	}
}

// A service's restart rules, and a check's service, stop-timeout and
// startup, as the file says them.
func TestRestartRulesAndTheChecksFieldsOfServices(t *testing.T) {
	c := mustParse(t, y(
		"services:",
		"  app:",
		"    command: [app]",
		"    restart: never",
		"    restart-rules:",
		"      - {action: restart, exit-codes: {operator: in, values: [42]}}",
		"      - action: exit",
		"        exit-codes: {operator: not-in, values: [0, 143]}",
		"      - {action: ignore, exit-codes: {operator: in, values: [0]}}",
		"  helper: {command: [helper]}",
		"checks:",
		"  up:",
		"    tcp: {address: localhost:80}",
		"    service: app",
		"    on-failure: restart",
		"    stop-timeout: 30s",
		"  later:",
		"    tcp: {address: localhost:81}",
		"    startup: disabled",
	))
	want := []config.RestartRule{{config.RuleRestart, true, []int{42}}, {config.RuleExit, false, []int{0, 143}}, {config.RuleIgnore, true, []int{0}}}
	if got := c.Services[0].RestartRules; !reflect.DeepEqual(got, want) {
		t.Errorf("rules %+v, want %+v", got, want)
	}
	up, later := c.Checks[0], c.Checks[1]
	if up.Service != "app" || up.StopTimeout != 30*time.Second || up.Disabled {
		t.Errorf("up: service %q, stop-timeout %v, disabled %v", up.Service, up.StopTimeout, up.Disabled)
	}
	if later.Service != "" || !later.Disabled {
		t.Errorf("later: service %q (want none of two), disabled %v", later.Service, later.Disabled)
	}
}

// What is wrong with services is said where it is.
func TestBadServicesSayWhatAndWhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string
	}{
		{"a cycle", y(
			"services:",
			"  a: {command: [a], after: [c]}",
			"  b: {command: [b], requires: [a]}",
			"  c: {command: [c], after: [b]}",
		), []string{
			`vitals.yaml:2:29: services.a.after[0]: a cycle: a after c, c after b, b requires a; no service could start first`,
		}},
		{"a cycle of before and after", y(
			"services:",
			"  a: {command: [a], before: [b]}",
			"  b: {command: [b], before: [a]}",
		), []string{
			`vitals.yaml:3:30: services.b.before[0]: a cycle: b before a, a before b; no service could start first`,
		}},
		{"a missing name", y(
			"services:",
			"  a: {command: [a], requires: [db]}",
			"  b: {command: [b], after: [a, a]}",
		), []string{
			`vitals.yaml:2:32: services.a.requires[0]: "db" is no service of this file (services: a, b)`,
		}},
		{"itself", y(
			"services:",
			"  a: {command: [a], after: [a]}",
		), []string{
			`vitals.yaml:2:29: services.a.after[0]: a names itself`,
		}},
		{"no command", y(
			"services:",
			"  a: {dir: /}",
		), []string{
			`vitals.yaml:2:6: services.a: no command: give the command and its arguments as a list (only the one service of service: may take it from the command line)`,
		}},
		{"a bad name", y(
			"services:",
			"  A: {command: [a]}",
		), []string{
			`vitals.yaml:2:3: services.A: a service name is lower case letters, digits and - _ . inside, at most 63 characters`,
		}},
		{"a bad name that orders another", y(
			"services:",
			"  Web: {command: [a], before: [db]}",
			"  db: {command: [b]}",
		), []string{
			`vitals.yaml:2:3: services.Web: a service name is lower case letters, digits and - _ . inside, at most 63 characters`,
		}},
		{"an order in the one service's block", y(
			"service: {command: [a], after: [db]}",
		), []string{
			`vitals.yaml:1:33: service.after[0]: the one service of service: has no other to be ordered by: give services: for several`,
		}},
		{"both blocks", y(
			"service: {command: [a]}",
			"services:",
			"  b: {command: [b]}",
		), []string{
			`vitals.yaml:3:4: services: give service: (one workload) or services:, not both`,
		}},
		{"no services", y(
			"services: {}",
			"checks:",
			"  a: {tcp: {address: localhost:80}}",
		), []string{
			`vitals.yaml:1:11: services: no services: give at least one, or leave services: out`,
		}},
		{"bad rules", y(
			"service:",
			"  command: [a]",
			"  restart-rules:",
			"    - {action: restart}",
			"    - {action: stop, exit-codes: {operator: in, values: [42]}}",
			"    - {action: exit, exit-codes: {operator: is, values: [256, x]}}",
			"    - {action: exit, exit-codes: {values: []}}",
		), []string{
			`vitals.yaml:4:7: service.restart-rules[0]: no exit-codes: give {operator: in, values: [CODE...]}`,
			`vitals.yaml:5:16: service.restart-rules[1].action: want restart, exit or ignore, got "stop"`,
			`vitals.yaml:6:45: service.restart-rules[2].exit-codes.operator: want in or not-in, got "is"`,
			`vitals.yaml:6:58: service.restart-rules[2].exit-codes.values[0]: "256" is not an exit code: give 0 to 255 (a death by signal N is 128+N)`,
			`vitals.yaml:6:63: service.restart-rules[2].exit-codes.values[1]: "x" is not an exit code: give 0 to 255 (a death by signal N is 128+N)`,
			`vitals.yaml:7:34: service.restart-rules[3].exit-codes: no operator: exit-codes has an operator (in or not-in) and values`,
			`vitals.yaml:7:43: service.restart-rules[3].exit-codes.values: an empty list: give exit codes, 0 to 255, such as [42]`,
		}},
		{"a check of several that restarts", y(
			"services:",
			"  a: {command: [a]}",
			"  b: {command: [b]}",
			"checks:",
			"  up: {tcp: {address: localhost:80}, on-failure: restart}",
			"  down: {tcp: {address: localhost:80}, service: c}",
		), []string{
			`vitals.yaml:5:50: checks.up.on-failure: restart: which service? give service: one of a, b`,
			`vitals.yaml:6:49: checks.down.service: "c" is no service of this file (services: a, b)`,
		}},
		{"a check's service with none", y(
			"checks:",
			"  up: {tcp: {address: localhost:80}, service: web}",
		), []string{
			`vitals.yaml:2:47: checks.up.service: "web" is no service of this file: the file has no services: (a workload given after -- is the one service, and every check's)`,
		}},
		{"a stop-timeout that nothing uses", y(
			"service: {command: [a]}",
			"checks:",
			"  up: {tcp: {address: localhost:80}, stop-timeout: 5s}",
			"  on: {tcp: {address: localhost:80}, startup: maybe}",
		), []string{
			`vitals.yaml:3:52: checks.up.stop-timeout: applies when the check's on-failure restarts or exits a service, and its on-failure is ignore`,
			`vitals.yaml:4:47: checks.on.startup: want enabled or disabled, got "maybe"`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.yaml)
			if err == nil {
				t.Fatalf("Parse succeeded, want:\n%s", strings.Join(tc.want, "\n"))
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("Parse error:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
