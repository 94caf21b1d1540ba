package importer

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

func TestAPebbleLayerWithTwoServicesRunsBothAndActsOnItsChecks(t *testing.T) {
	r, err := Pebble("testdata/synapse-layer.yaml", read(t, "testdata/synapse-layer.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/synapse-layer.vitals.yaml", r.YAML)
	sameLines(t, "warnings", r.Warnings, []string{
		`check "synapse-alive": Pebble did not send its Host header (Go's client takes the host from the URL); vitals sends it, as the virtual host`,
		`check "db-ready": exec runs as user "synapse" in Pebble; vitals runs the command as its own user: left out`,
		`check "Media_Store" is written as "media_store": a vitals check name is lower case letters, digits and - _ . inside, at most 63 characters`,
		`check "Media_Store" has no level: written as ready, whose failure fails /readyz (Pebble counted it only in /v1/health without ?level)`,
		`service "synapse" runs as user "synapse" in Pebble; vitals runs its services as its own user: left out`,
	})

	c := loadConfig(t, r.YAML)
	var names []string
	for _, s := range c.Services {
		names = append(names, s.Name)
		if s.Restart != config.RestartAlways || len(s.RestartRules) != 0 || s.StopTimeout != 5*time.Second {
			t.Errorf("service %s: restart %s, rules %+v, stop-timeout %v; want always, none, 5s", s.Name, s.Restart, s.RestartRules, s.StopTimeout)
		}
	}
	if want := []string{"nginx", "synapse"}; !reflect.DeepEqual(names, want) { // by name, where no order is given
		t.Errorf("services %q, want %q", names, want)
	}
	checks := load(t, r.YAML)
	for name, want := range map[string]struct {
		timing    timing
		spec      any
		onFailure string
		service   string
		disabled  bool
	}{
		"synapse-alive": {
			timing{health.Live, time.Minute, 20 * time.Second, 0, 1, 5},
			kinds.HTTPSpec{HTTPSpec: probe.HTTPSpec{URL: "http://localhost:8008/health", Status: "200-299",
				Header: http.Header{"Host": {"matrix.example.com"}, "X-Forwarded-Proto": {"https"}}}},
			config.OnFailureRestart, "synapse", false,
		},
		"synapse-ready": {
			timing{health.Ready, 30 * time.Second, 3 * time.Second, 0, 1, 3},
			probe.TCPSpec{Address: "localhost:8008"},
			config.OnFailureIgnore, "", false,
		},
		"db-ready": {
			timing{health.Ready, 10 * time.Second, 5 * time.Second, 0, 1, 3},
			probe.ExecSpec{
				Command: []string{"/bin/sh", "-c", `pg_isready --host "$POSTGRES_HOST" --quiet`},
				Env:     []string{"PGCONNECT_TIMEOUT=2", "POSTGRES_HOST=db.internal", "SYNAPSE_CONFIG_DIR=/data"},
			},
			config.OnFailureExit, "synapse", false,
		},
		"media_store": {
			timing{health.Ready, 5 * time.Minute, 3 * time.Second, 0, 1, 3},
			probe.ExecSpec{Command: []string{"test", "-w", "/data/media store"}},
			config.OnFailureIgnore, "", true,
		},
	} {
		c, ok := checks[name]
		if !ok {
			t.Errorf("no check %q", name)
			continue
		}
		if got := timingOf(c); got != want.timing {
			t.Errorf("%s: timing %+v, want %+v", name, got, want.timing)
		}
		if !reflect.DeepEqual(c.Spec, want.spec) {
			t.Errorf("%s: spec %#v, want %#v", name, c.Spec, want.spec)
		}
		if c.OnFailure != want.onFailure || c.Service != want.service || c.Disabled != want.disabled {
			t.Errorf("%s: on-failure %s of service %q, disabled %v; want %s of %q, %v", name, c.OnFailure, c.Service, c.Disabled,
				want.onFailure, want.service, want.disabled)
		}
	}
	if len(checks) != 4 {
		t.Errorf("%d checks, want 4", len(checks))
	}
}

// layer is a Pebble layer given line by line.
func layer(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

func TestPebbleTimingIsKeptAsPebbleAppliesIt(t *testing.T) {
	r, err := Pebble("layer.yaml", layer(
		"checks:",
		"  defaults:",
		"    override: replace",
		"    level: alive",
		"    tcp: {port: 5432, host: db}",
		"  capped:",
		"    override: replace",
		"    level: ready",
		"    period: 2s",
		"    timeout: 5s",
		"    threshold: -1",
		"    http: {url: 'https://[::1]:8443/ready'}",
		"  zero-threshold:",
		"    override: replace",
		"    level: ready",
		"    threshold: 0",
		"    period: 1m30s",
		"    tcp: {port: 80, host: '::1'}",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`check "capped": timeout 5s is longer than period 2s, which Pebble cuts to the period without a word and vitals refuses: written as timeout: 2s`,
		`check "capped": threshold -1 is below 1, so Pebble acts on the first failure: written as failure-threshold: 1`,
	})
	checks := load(t, r.YAML)
	for name, want := range map[string]timing{
		"defaults":       {health.Live, 10 * time.Second, 3 * time.Second, 0, 1, 3},
		"capped":         {health.Ready, 2 * time.Second, 2 * time.Second, 0, 1, 1},
		"zero-threshold": {health.Ready, 90 * time.Second, 3 * time.Second, 0, 1, 3},
	} {
		if got := timingOf(checks[name]); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	if a := checks["zero-threshold"].Spec.(probe.TCPSpec).Address; a != "[::1]:80" {
		t.Errorf("address %q, want [::1]:80", a)
	}
	if !strings.Contains(string(r.YAML), "    period: 1m30s\n") {
		t.Errorf("1m30s is not written as the layer writes it:\n%s", r.YAML)
	}
}

func TestPebbleExecContextAndUnknownFieldsAreSaid(t *testing.T) {
	r, err := Pebble("layer.yaml", layer(
		"checks:",
		"  job:",
		"    override: replace",
		"    level: ready",
		"    frequency: often",
		"    exec:",
		"      command: /bin/true",
		"      service-context: gone",
		"      user-id: 1000",
		"      group: staff",
		"      working-dir: /",
		"      environment: {A: '1', B: $x}",
		"      niceness: 5",
		"    ",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`check "job": "frequency" is not a field vitals import knows: left out`,
		`check "job": exec: "niceness" is not a field vitals import knows: left out`,
		`check "job": service-context "gone" is a service this layer does not define: its environment, working-dir, user and group are not carried over`,
		`check "job": exec runs as user "1000" and group "staff" in Pebble; vitals runs the command as its own user: left out`,
	})
	spec := load(t, r.YAML)["job"].Spec.(probe.ExecSpec)
	want := probe.ExecSpec{Command: []string{"/bin/true"}, Env: []string{"A=1", "B=$x"}, Dir: "/"}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("spec %#v, want %#v", spec, want)
	}
}

func TestBadPebbleLayersSayWhatAndWhere(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"not YAML", layer("checks: [a, b"), "layer.yaml:1:9: not YAML: sequence end token ']' not found"},
		{"not a layer", layer("just some text"), `not a Pebble layer: layer.yaml:1:1: want a mapping, got "just some text"`},
		{"empty", layer(""), "layer.yaml: the file is empty: a Pebble layer has checks:"},
		{"two documents", layer("checks: {}", "---", "checks: {}"), "layer.yaml:3:1: a Pebble layer is one YAML document, not 2"},
		{"no checks", layer("services:", "  a: {command: x}"), "layer.yaml:1:1: no checks: a Pebble layer to import has checks:"},
		{"checks not a mapping", layer("checks: [a]"), "layer.yaml:1:9: checks: want a mapping, got a list"},
		{"unterminated quote", layer("checks:", "  c:", "    exec:", `      command: sh -c "echo hi`),
			`layer.yaml:4:16: checks.c.exec.command: "sh -c \"echo hi": unterminated " quote`},
		{"empty command", layer("checks:", "  c:", "    exec: {command: '  '}"), "layer.yaml:3:21: checks.c.exec.command: required"},
		{"two kinds", layer("checks:", "  c:", "    tcp: {port: 1}", "    exec: {command: x}"),
			"layer.yaml:3:5: checks.c: a check has one of http, tcp and exec, not tcp and exec"},
		{"bad level", layer("checks:", "  c:", "    level: live", "    tcp: {port: 1}"), `layer.yaml:3:12: checks.c.level: "live": want alive or ready`},
		{"bad startup", layer("checks:", "  c:", "    startup: off", "    tcp: {port: 1}"), `layer.yaml:3:14: checks.c.startup: "off": want enabled or disabled`},
		{"bad period", layer("checks:", "  c:", "    period: 10", "    tcp: {port: 1}"),
			`layer.yaml:3:13: checks.c.period: "10" is not a duration such as 10s, 500ms or 1m30s`},
		{"zero timeout", layer("checks:", "  c:", "    timeout: 0s", "    tcp: {port: 1}"), "layer.yaml:3:14: checks.c.timeout: 0s: must be more than 0"},
		{"no port", layer("checks:", "  c:", "    tcp: {host: db}"), "layer.yaml:3:11: checks.c.tcp.port: required"},
		{"bad port", layer("checks:", "  c:", "    tcp: {port: 70000}"), "layer.yaml:3:17: checks.c.tcp.port: 70000 is not a port (1 to 65535)"},
		{"no url", layer("checks:", "  c:", "    http: {headers: {A: b}}"), "layer.yaml:3:12: checks.c.http.url: required"},
		{"url without a scheme", layer("checks:", "  c:", "    http: {url: 'localhost:8080/health'}"),
			`layer.yaml:3:12: checks.c.http: URL "localhost:8080/health": scheme must be http or https`},
		{"bad action", layer("services:", "  s:", "    on-check-failure: {c: reboot}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:3:27: services.s.on-check-failure.c: "reboot": want restart, shutdown, success-shutdown or ignore`},
		{"only checks that merge", layer("checks:", "  c: {override: merge, period: 1s}"), "layer.yaml: no check could be carried over"},
		{"bad on-success", layer("services:", "  s: {command: x, on-success: success-shutdown}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:31: services.s.on-success: "success-shutdown": want restart, shutdown, failure-shutdown or ignore`},
		{"bad on-failure", layer("services:", "  s: {command: x, on-failure: failure-shutdown}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:31: services.s.on-failure: "failure-shutdown": want restart, shutdown, success-shutdown or ignore`},
		{"bad service startup", layer("services:", "  s: {command: x, startup: later}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:28: services.s.startup: "later": want enabled or disabled`},
		{"backoff-factor below 1", layer("services:", "  s: {command: x, backoff-factor: 0.5}", "checks:", "  c: {tcp: {port: 1}}"),
			"layer.yaml:2:35: services.s.backoff-factor: 0.5: must be 1 or more"},
		{"backoff-factor not a number", layer("services:", "  s: {command: x, backoff-factor: fast}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:35: services.s.backoff-factor: "fast" is not a number`},
		{"negative kill-delay", layer("services:", "  s: {command: x, kill-delay: -1s}", "checks:", "  c: {tcp: {port: 1}}"),
			"layer.yaml:2:31: services.s.kill-delay: -1s: must not be negative"},
		{"bad backoff-delay", layer("services:", "  s: {command: x, backoff-delay: 1}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:34: services.s.backoff-delay: "1" is not a duration such as 10s, 500ms or 1m30s`},
		{"command starting with its default arguments", layer("services:", "  s: {command: '[ a ]'}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:16: services.s.command: "[ a ]": the command cannot start with the [ ] group`},
		{"words after the default arguments", layer("services:", "  s: {command: 'a [ b ] c'}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:16: services.s.command: "a [ b ] c": nothing may follow the [ ] group`},
		{"default arguments inside others", layer("services:", "  s: {command: 'a [ b [ c ] ]'}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:16: services.s.command: "a [ b [ c ] ]": a [ ] group inside another`},
		{"a ] alone", layer("services:", "  s: {command: 'a ] b'}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:16: services.s.command: "a ] b": a ] with no [ before it`},
		{"service command unterminated", layer("services:", "  s: {command: 'a \"b'}", "checks:", "  c: {tcp: {port: 1}}"),
			`layer.yaml:2:16: services.s.command: "a \"b": unterminated " quote`},
	} {
		_, err := Pebble("layer.yaml", tt.data, "")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
