package importer

import (
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// section is the part of a file written that starts with the line first
// and runs to the next empty line or the end.
func section(t *testing.T, data []byte, first string) string {
	t.Helper()
	s := string(data)
	i := strings.Index(s, "\n"+first+"\n")
	if i < 0 {
		t.Fatalf("the file has no line %q:\n%s", first, data)
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j+1]
	}
	return s
}

func TestAPebbleLayerWithOneServiceBecomesTheWorkloadVitalsRuns(t *testing.T) {
	r, err := Pebble("testdata/worker-layer.yaml", read(t, "testdata/worker-layer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/worker-layer.vitals.yaml", r.YAML)
	sameLines(t, "warnings", r.Warnings, []string{
		`service "worker": on-check-failure spool-writable: success-shutdown is written as on-failure: exit, and vitals exits 1 where pebble exits 0`,
		`service "worker" runs as user "app" in Pebble; vitals runs the workload as its own user: left out`,
		`service "worker": requires, before and after are left out: vitals runs one workload`,
		`service "worker": Pebble started the backoff over once it ran backoff-limit (1m); vitals does once it ran 30s`,
	})
	c := loadConfig(t, r.YAML)
	want := &config.Service{
		Command:        []string{"/app/bin/worker", "--queue", "jobs", "--concurrency", "4"},
		Env:            map[string]string{"QUEUE_URL": "amqp://mq:5672/", "LOG_LEVEL": "info"},
		Dir:            "/app",
		Restart:        "on-failure",
		BackoffInitial: time.Second,
		BackoffMax:     time.Minute,
		StopSignal:     syscall.SIGTERM,
		StopTimeout:    20 * time.Second,
	}
	if !reflect.DeepEqual(c.Service, want) {
		t.Errorf("service %+v, want %+v", c.Service, want)
	}
	for name, want := range map[string]string{
		"worker-alive":    config.OnFailureRestart,
		"queue-reachable": config.OnFailureIgnore,
		"spool-writable":  config.OnFailureExit,
	} {
		if got := load(t, r.YAML)[name].OnFailure; got != want {
			t.Errorf("%s: on-failure %s, want %s", name, got, want)
		}
	}
}

func TestEachOnCheckFailureActionBecomesTheChecksOnFailure(t *testing.T) {
	const check = "  c:\n" +
		"    level: live\n" +
		"    tcp:\n" +
		"      address: localhost:8080\n" +
		"    period: 10s\n" +
		"    timeout: 3s\n" +
		"    failure-threshold: 3\n"
	for _, tt := range []struct {
		action   string
		want     string // the lines after the check's timing
		loaded   string
		warnings []string
	}{
		{"restart", "    on-failure: restart  # Pebble: service app, on-check-failure restart\n", config.OnFailureRestart, nil},
		{"shutdown", "    on-failure: exit  # Pebble: service app, on-check-failure shutdown: pebble exits 11, vitals exits 1\n", config.OnFailureExit, nil},
		{"success-shutdown", "    on-failure: exit  # Pebble: service app, on-check-failure success-shutdown: pebble exits 0, vitals exits 1\n",
			config.OnFailureExit, []string{`service "app": on-check-failure c: success-shutdown is written as on-failure: exit, and vitals exits 1 where pebble exits 0`}},
		{"ignore", "", config.OnFailureIgnore, nil},
	} {
		r, err := Pebble("layer.yaml", layer(
			"services:",
			"  app:",
			"    override: replace",
			"    command: /bin/app",
			"    on-check-failure: {c: "+tt.action+"}",
			"checks:",
			"  c:",
			"    override: replace",
			"    level: alive",
			"    tcp: {port: 8080}",
		))
		if err != nil {
			t.Fatalf("%s: %v", tt.action, err)
		}
		if got := section(t, r.YAML, "  c:"); got != check+tt.want {
			t.Errorf("%s: the check is written\n%s\nwant\n%s", tt.action, got, check+tt.want)
		}
		sameLines(t, tt.action+": warnings", r.Warnings, tt.warnings)
		if got := load(t, r.YAML)["c"].OnFailure; got != tt.loaded {
			t.Errorf("%s: loads as on-failure %s, want %s", tt.action, got, tt.loaded)
		}
	}
}

func TestACheckThatSeveralServicesActOnDoesTheStrongestAndTheServicesAreComments(t *testing.T) {
	r, err := Pebble("layer.yaml", layer(
		"services:",
		"  api:",
		"    override: replace",
		"    command: /bin/api --port 8080",
		"    on-check-failure:",
		"      api-up: success-shutdown",
		"      elsewhere: restart",
		"      merged: restart",
		"      db: ignore",
		"  worker:",
		"    override: merge",
		"    on-check-failure:",
		"      api-up: restart",
		"      db: restart",
		"  cron:",
		"    override: replace",
		"    command: /bin/cron",
		"    on-check-failure: {db: restart}",
		"checks:",
		"  api-up:",
		"    override: replace",
		"    level: alive",
		"    http: {url: 'http://localhost:8080/'}",
		"  db:",
		"    override: replace",
		"    level: ready",
		"    tcp: {port: 5432}",
		"  merged:",
		"    override: merge",
		"    threshold: 10",
	))
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`check "merged" has no http, tcp or exec (a check that merges into another layer's?): left out`,
		`service "api": on-check-failure api-up: success-shutdown is written as on-failure: exit, and vitals exits 1 where pebble exits 0`,
		`service "api": on-check-failure names check "elsewhere", which this layer does not define`,
		`service "api": on-check-failure names check "merged", which is left out`,
		`check "api-up": services act on its failure differently (api: success-shutdown, worker: restart): written as on-failure: exit, the strongest`,
		`check "db": services act on its failure differently (worker: restart, api: ignore): written as on-failure: restart, the strongest`,
		`services "api", "worker", "cron": vitals runs one workload, so they are written as comments: make one the service: (or give its command after --), and run one vitals for each of the others; on-failure: restart restarts that one workload`,
	})
	for _, want := range []string{
		"# vitals runs one workload, and this layer has 3 services: each is below,\n" +
			"# as comments. Make one the service: (or give its command after --), and run\n" +
			"# one vitals for each of the others.\n" +
			"# A check's on-failure: restart restarts that one workload.\n" +
			"#\n" +
			"# service:\n" +
			"#   # From Pebble's service api.\n" +
			"#   command: [/bin/api, --port, \"8080\"]\n",
		"# service:\n" +
			"#   # From Pebble's service worker.\n" +
			"#   # Pebble: no command in this layer: give it as command:, or after -- on the\n" +
			"#   # command line.\n" +
			"#   restart: always  # Pebble's default: restart after any exit\n",
		"    on-failure: exit  # Pebble: service api, on-check-failure success-shutdown: pebble exits 0, vitals exits 1\n" +
			"    # Pebble: service worker, on-check-failure restart too.\n" +
			"    # The services disagree, and vitals does the strongest: exit, then restart,\n" +
			"    # then ignore.\n",
		"    on-failure: restart  # Pebble: service worker, on-check-failure restart\n" +
			"    # Pebble: service api, on-check-failure ignore too.\n" +
			"    # Pebble: service cron, on-check-failure restart too.\n" +
			"    # The services disagree, and vitals does the strongest: exit, then restart,\n" +
			"    # then ignore.\n" +
			"    # It restarts the one workload vitals runs, not service worker alone.\n",
	} {
		if !strings.Contains(string(r.YAML), want) {
			t.Errorf("the file has no\n%s\nit is:\n%s", want, r.YAML)
		}
	}
	c := loadConfig(t, r.YAML)
	if c.Service != nil {
		t.Errorf("service %+v, want none: the layer has three", c.Service)
	}
	checks := load(t, r.YAML)
	if checks["api-up"].OnFailure != config.OnFailureExit || checks["db"].OnFailure != config.OnFailureRestart {
		t.Errorf("on-failure: api-up %s, db %s; want exit, restart", checks["api-up"].OnFailure, checks["db"].OnFailure)
	}
}

func TestOnSuccessAndOnFailureBecomeTheNearestRestartPolicyWithWhatDiffersSaid(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fields   []string // the service's
		notes    []string // the comment lines after the first
		restart  string   // the restart line
		warnings []string
	}{
		{"restart after any exit, Pebble's default", nil, nil,
			"restart: always  # Pebble's default: restart after any exit", nil},
		{"restart on both", []string{"on-success: restart", "on-failure: restart"}, nil,
			"restart: always  # Pebble: on-success restart, on-failure restart", nil},
		{"shutdown after exit 0, pebble exiting 0 as vitals does", []string{"on-success: shutdown"}, nil,
			"restart: on-failure  # Pebble: on-success shutdown, on-failure restart", nil},
		{"ignore after exit 0", []string{"on-success: ignore"},
			[]string{"Pebble: on-success ignore left it stopped after exit 0, and pebble running;", "vitals exits 0."},
			"restart: on-failure  # Pebble: on-success ignore, on-failure restart",
			[]string{`service "app": on-success ignore left it stopped after exit 0, and pebble running; vitals exits 0`}},
		{"failure-shutdown after exit 0", []string{"on-success: failure-shutdown"},
			[]string{"Pebble: on-success failure-shutdown made pebble exit 10 after exit 0; vitals", "exits 0."},
			"restart: on-failure  # Pebble: on-success failure-shutdown, on-failure restart",
			[]string{`service "app": on-success failure-shutdown made pebble exit 10 after exit 0; vitals exits 0`}},
		{"shutdown on both, only the failure's code differing", []string{"on-success: shutdown", "on-failure: shutdown"},
			[]string{"Pebble: on-failure shutdown made pebble exit 10; vitals exits with the", "workload's code."},
			"restart: never  # Pebble: on-success shutdown, on-failure shutdown", nil},
		{"success-shutdown after a failure", []string{"on-success: shutdown", "on-failure: success-shutdown"},
			[]string{"Pebble: on-failure success-shutdown made pebble exit 0; vitals exits with the", "workload's code."},
			"restart: never  # Pebble: on-success shutdown, on-failure success-shutdown",
			[]string{`service "app": on-failure success-shutdown made pebble exit 0; vitals exits with the workload's code`}},
		{"restart after exit 0 only", []string{"on-failure: ignore"},
			[]string{
				"Pebble: on-success restart restarted it after exit 0; vitals exits 0 then: only",
				"restart: always restarts after exit 0, and after a failure too.",
				"Pebble: on-failure ignore left it stopped, and pebble running; vitals exits",
				"with the workload's code.",
			},
			"restart: never  # Pebble: on-success restart, on-failure ignore",
			[]string{
				`service "app": on-success restart restarted it after exit 0; vitals exits 0 then: only restart: always restarts after exit 0, and after a failure too (on-failure ignore)`,
				`service "app": on-failure ignore left it stopped, and pebble running; vitals exits with the workload's code`,
			}},
	} {
		r, err := Pebble("layer.yaml", layer(append(append([]string{
			"services:",
			"  app:",
			"    override: replace",
			"    command: /bin/app",
		}, indent("    ", tt.fields)...),
			"checks:",
			"  c: {override: replace, level: alive, tcp: {port: 8080}}",
		)...))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		notes := ""
		for _, n := range tt.notes {
			notes += "  # " + n + "\n"
		}
		want := "service:\n" +
			"  # From Pebble's service app.\n" +
			notes +
			"  command: [/bin/app]\n" +
			"  " + tt.restart + "\n" +
			"  backoff: {initial: 500ms, max: 30s}\n" +
			"  stop-timeout: 5s  # Pebble's default kill-delay\n"
		if got := section(t, r.YAML, "service:"); got != want {
			t.Errorf("%s: the service is written\n%s\nwant\n%s", tt.name, got, want)
		}
		sameLines(t, tt.name+": warnings", r.Warnings, tt.warnings)
		policy, _, _ := strings.Cut(strings.TrimPrefix(tt.restart, "restart: "), " ")
		if got := loadConfig(t, r.YAML).Service.Restart; got != policy {
			t.Errorf("%s: loads as restart: %s, want %s", tt.name, got, policy)
		}
	}
}

// indent puts prefix before each line.
func indent(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

func TestWhatAPebbleServiceDoesThatVitalsDoesNotIsSaidInTheFileAndOnTheSide(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fields   []string // the service's, after override
		want     string   // the service block
		warnings []string
	}{
		{
			"who it runs as, when it starts, what it waits for, a field unknown",
			[]string{
				"summary: the app",
				"command: /bin/app --listen :8080 [ --verbose ]",
				"user-id: 1000",
				"group: staff",
				"startup: disabled",
				"requires: [db]",
				"before: [proxy]",
				"niceness: 5",
			},
			"service:\n" +
				"  # From Pebble's service app.\n" +
				"  # Pebble: [ --verbose ] are default arguments, which pebble run --args\n" +
				"  # replaces; here they are part of the command.\n" +
				"  # Pebble ran it as user 1000 and group staff; vitals runs it as its own user.\n" +
				"  # Pebble: startup: disabled, so it started only with pebble start; vitals starts\n" +
				"  # it at once.\n" +
				"  # Pebble: requires db; before proxy.\n" +
				"  # vitals runs one workload, with no other to wait for.\n" +
				"  command: [/bin/app, --listen, \":8080\", --verbose]\n" +
				"  restart: always  # Pebble's default: restart after any exit\n" +
				"  backoff: {initial: 500ms, max: 30s}\n" +
				"  stop-timeout: 5s  # Pebble's default kill-delay\n",
			[]string{
				`service "app": "niceness" is not a field vitals import knows: left out`,
				`service "app" runs as user "1000" and group "staff" in Pebble; vitals runs the workload as its own user: left out`,
				`service "app" has startup: disabled, which vitals has no equivalent of: the workload starts at once`,
				`service "app": requires, before and after are left out: vitals runs one workload`,
			},
		},
		{
			"a backoff that starts at once and grows by half",
			[]string{"command: /bin/app", "backoff-delay: 0s", "backoff-factor: 1.5", "kill-delay: 0s"},
			"service:\n" +
				"  # From Pebble's service app.\n" +
				"  # Pebble: backoff-factor 1.5; vitals doubles the delay each time.\n" +
				"  # Pebble: backoff-delay 0s restarted it at once; vitals waits 1ms.\n" +
				"  command: [/bin/app]\n" +
				"  restart: always  # Pebble's default: restart after any exit\n" +
				"  backoff: {initial: 1ms, max: 30s}\n" +
				"  stop-timeout: 0s  # Pebble: kill-delay\n",
			[]string{
				`service "app": backoff-factor 1.5 is left out: vitals doubles the delay each time`,
				`service "app": backoff-delay 0s is written as backoff.initial: 1ms, since vitals needs a delay`,
			},
		},
		{
			"a backoff limit below its delay",
			[]string{"command: /bin/app", "backoff-delay: 10s", "backoff-limit: 2s", "backoff-factor: 2.0"},
			"service:\n" +
				"  # From Pebble's service app.\n" +
				"  # Pebble: backoff-limit 2s is below backoff-delay 10s: it waited the delay first,\n" +
				"  # then the limit; vitals waits 10s each time.\n" +
				"  # Pebble started the backoff over once it ran backoff-limit (2s); vitals does\n" +
				"  # once it ran 30s.\n" +
				"  command: [/bin/app]\n" +
				"  restart: always  # Pebble's default: restart after any exit\n" +
				"  backoff: {initial: 10s, max: 10s}\n" +
				"  stop-timeout: 5s  # Pebble's default kill-delay\n",
			[]string{
				`service "app": backoff-limit 2s is below backoff-delay 10s, which vitals refuses: written as backoff.max: 10s`,
				`service "app": Pebble started the backoff over once it ran backoff-limit (2s); vitals does once it ran 30s`,
			},
		},
		{
			"no command, which another layer gives",
			[]string{"environment: {MODE: fast}", "working-dir: /srv"},
			"service:\n" +
				"  # From Pebble's service app.\n" +
				"  # Pebble: no command in this layer: give it as command:, or after -- on the\n" +
				"  # command line.\n" +
				"  env:\n" +
				"    MODE: fast\n" +
				"  dir: /srv\n" +
				"  restart: always  # Pebble's default: restart after any exit\n" +
				"  backoff: {initial: 500ms, max: 30s}\n" +
				"  stop-timeout: 5s  # Pebble's default kill-delay\n",
			[]string{
				`service "app" has no command in this layer (it takes it from another): give it as service.command, or after -- on the command line`,
			},
		},
	} {
		r, err := Pebble("layer.yaml", layer(append(append([]string{
			"services:",
			"  app:",
			"    override: replace",
		}, indent("    ", tt.fields)...),
			"checks:",
			"  c: {override: replace, level: alive, tcp: {port: 8080}}",
		)...))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := section(t, r.YAML, "service:"); got != tt.want {
			t.Errorf("%s: the service is written\n%s\nwant\n%s", tt.name, got, tt.want)
		}
		sameLines(t, tt.name+": warnings", r.Warnings, tt.warnings)
		loadConfig(t, r.YAML)
	}
}
