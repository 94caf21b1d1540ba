package importer

import (
	"fmt"
	"reflect"
	"slices"
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

// service is the loaded service named name.
func service(t *testing.T, c *config.Config, name string) config.Service {
	t.Helper()
	i := slices.IndexFunc(c.Services, func(s config.Service) bool { return s.Name == name })
	if i < 0 {
		t.Fatalf("no service %q among %+v", name, c.Services)
	}
	return c.Services[i]
}

func TestAPebbleLayerWithOneServiceBecomesAServiceVitalsRuns(t *testing.T) {
	r, err := Pebble("testdata/worker-layer.yaml", read(t, "testdata/worker-layer.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/worker-layer.vitals.yaml", r.YAML)
	sameLines(t, "warnings", r.Warnings, []string{
		`service "worker": on-check-failure spool-writable: success-shutdown is written as on-failure: exit, and vitals exits 1 where pebble exits 0`,
		`service "worker" runs as user "app" in Pebble; vitals runs its services as its own user: left out`,
		`service "worker": after mq-proxy, which this layer does not define: left out`,
		`service "worker": requires mq-proxy, which this layer does not define: left out`,
		`service "worker": Pebble started the backoff over once it ran backoff-limit (1m); vitals does once it ran 30s`,
	})
	c := loadConfig(t, r.YAML)
	want := []config.Service{{
		Name:           "worker",
		Command:        []string{"/app/bin/worker", "--queue", "jobs", "--concurrency", "4"},
		Env:            map[string]string{"QUEUE_URL": "amqp://mq:5672/", "LOG_LEVEL": "info"},
		Dir:            "/app",
		Restart:        "on-failure",
		BackoffInitial: time.Second,
		BackoffMax:     time.Minute,
		StopSignal:     syscall.SIGTERM,
		StopTimeout:    20 * time.Second,
	}}
	if !reflect.DeepEqual(c.Services, want) {
		t.Errorf("services %+v, want %+v", c.Services, want)
	}
	for name, want := range map[string]string{
		"worker-alive":    config.OnFailureRestart,
		"queue-reachable": config.OnFailureIgnore,
		"spool-writable":  config.OnFailureExit,
	} {
		if got := load(t, r.YAML)[name]; got.OnFailure != want || got.Service != "worker" {
			t.Errorf("%s: on-failure %s of service %q, want %s of worker", name, got.OnFailure, got.Service, want)
		}
	}
}

func TestEachOnCheckFailureActionBecomesTheChecksOnFailureOfItsService(t *testing.T) {
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
		{"restart", "    service: app\n    on-failure: restart  # Pebble: service app, on-check-failure restart\n", config.OnFailureRestart, nil},
		{"shutdown", "    service: app\n    on-failure: exit  # Pebble: service app, on-check-failure shutdown: pebble exits 11, vitals exits 1\n", config.OnFailureExit, nil},
		{"success-shutdown", "    service: app\n    on-failure: exit  # Pebble: service app, on-check-failure success-shutdown: pebble exits 0, vitals exits 1\n",
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
		), "")
		if err != nil {
			t.Fatalf("%s: %v", tt.action, err)
		}
		if got := section(t, r.YAML, "  c:"); got != check+tt.want {
			t.Errorf("%s: the check is written\n%s\nwant\n%s", tt.action, got, check+tt.want)
		}
		sameLines(t, tt.action+": warnings", r.Warnings, tt.warnings)
		if got := load(t, r.YAML)["c"]; got.OnFailure != tt.loaded || got.Service != "app" {
			t.Errorf("%s: loads as on-failure %s of service %q, want %s of app", tt.action, got.OnFailure, got.Service, tt.loaded)
		}
	}
}

func TestACheckThatSeveralServicesActOnDoesTheStrongestNamingItsService(t *testing.T) {
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
		"    command: /bin/worker",
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
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`check "merged" has no http, tcp or exec (a check that merges into another layer's?): left out`,
		`service "api": on-check-failure api-up: success-shutdown is written as on-failure: exit, and vitals exits 1 where pebble exits 0`,
		`service "api": on-check-failure names check "elsewhere", which this layer does not define`,
		`service "api": on-check-failure names check "merged", which is left out`,
		`check "api-up": services act on its failure differently (api: success-shutdown, worker: restart): written as on-failure: exit, the strongest, of service api`,
		`check "db": services act on its failure differently (worker: restart, api: ignore): written as on-failure: restart, the strongest, of service worker`,
		`check "db": services worker and cron restart on its failure, and vitals restarts one service: written as service: worker`,
	})
	for _, want := range []string{
		"services:\n" +
			"  api:\n" +
			"    command: [/bin/api, --port, \"8080\"]\n",
		"  worker:\n" +
			"    command: [/bin/worker]\n" +
			"    restart: always  # Pebble's default: restart after any exit\n",
		"    service: api\n" +
			"    on-failure: exit  # Pebble: service api, on-check-failure success-shutdown: pebble exits 0, vitals exits 1\n" +
			"    # Pebble: service worker, on-check-failure restart too.\n" +
			"    # The services disagree, and vitals does the strongest: exit, then restart,\n" +
			"    # then ignore.\n",
		"    service: worker\n" +
			"    on-failure: restart  # Pebble: service worker, on-check-failure restart\n" +
			"    # Pebble: service api, on-check-failure ignore too.\n" +
			"    # Pebble: service cron, on-check-failure restart too.\n" +
			"    # The services disagree, and vitals does the strongest: exit, then restart,\n" +
			"    # then ignore.\n" +
			"    # vitals restarts service worker alone, not cron.\n",
	} {
		if !strings.Contains(string(r.YAML), want) {
			t.Errorf("the file has no\n%s\nit is:\n%s", want, r.YAML)
		}
	}
	if c := loadConfig(t, r.YAML); len(c.Services) != 3 {
		t.Errorf("services %+v, want the layer's three", c.Services)
	}
	checks := load(t, r.YAML)
	if c := checks["api-up"]; c.OnFailure != config.OnFailureExit || c.Service != "api" {
		t.Errorf("api-up: on-failure %s of %q, want exit of api", c.OnFailure, c.Service)
	}
	if c := checks["db"]; c.OnFailure != config.OnFailureRestart || c.Service != "worker" {
		t.Errorf("db: on-failure %s of %q, want restart of worker", c.OnFailure, c.Service)
	}
}

// ruleText spells an exit rule as a test says it: "ignore in [0]".
func ruleText(r exitRule) string {
	return fmt.Sprintf("%s %s %v", r.action, r.operator, r.codes)
}

// Every pair of Pebble's on-success and on-failure is a restart policy, and
// rules for what it does not do: exit 0 is on-success's, any other code or
// a signal on-failure's.
func TestPebblesOnSuccessAndOnFailureAreARestartPolicyAndRules(t *testing.T) {
	for _, tt := range []struct {
		onSuccess, onFailure string
		policy               string
		rules                []string
	}{
		{"restart", "restart", "always", nil},
		{"restart", "shutdown", "always", []string{"exit not-in [0]"}},
		{"restart", "success-shutdown", "always", []string{"exit not-in [0]"}},
		{"restart", "ignore", "always", []string{"ignore not-in [0]"}},
		{"shutdown", "restart", "on-failure", nil},
		{"shutdown", "shutdown", "never", nil},
		{"shutdown", "success-shutdown", "never", nil},
		{"shutdown", "ignore", "never", []string{"ignore not-in [0]"}},
		{"failure-shutdown", "restart", "on-failure", nil},
		{"failure-shutdown", "shutdown", "never", nil},
		{"failure-shutdown", "success-shutdown", "never", nil},
		{"failure-shutdown", "ignore", "never", []string{"ignore not-in [0]"}},
		{"ignore", "restart", "on-failure", []string{"ignore in [0]"}},
		{"ignore", "shutdown", "never", []string{"ignore in [0]"}},
		{"ignore", "success-shutdown", "never", []string{"ignore in [0]"}},
		{"ignore", "ignore", "never", []string{"ignore in [0]", "ignore not-in [0]"}},
	} {
		policy, rules := pebbleExit(tt.onSuccess, tt.onFailure)
		var got []string
		for _, r := range rules {
			got = append(got, ruleText(r))
		}
		if policy != tt.policy || !slices.Equal(got, tt.rules) {
			t.Errorf("on-success %s, on-failure %s: restart %s, rules %q; want %s, %q", tt.onSuccess, tt.onFailure, policy, got, tt.policy, tt.rules)
		}
	}
}

func TestOnSuccessAndOnFailureAreWrittenWithWhereTheExitCodeDiffers(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fields   []string // the service's
		notes    []string // the comment lines above the fields
		restart  []string // the restart lines
		rules    []config.RestartRule
		warnings []string
	}{
		{"restart after any exit, Pebble's default", nil, nil,
			[]string{"restart: always  # Pebble's default: restart after any exit"}, nil, nil},
		{"shutdown after exit 0, pebble exiting 0 as vitals does", []string{"on-success: shutdown"}, nil,
			[]string{"restart: on-failure  # Pebble: on-success shutdown, on-failure restart"}, nil, nil},
		{"ignore after exit 0", []string{"on-success: ignore"}, nil,
			[]string{
				"restart: on-failure  # Pebble: on-success ignore, on-failure restart",
				"restart-rules:",
				"  - {action: ignore, exit-codes: {operator: in, values: [0]}}  # Pebble: on-success ignore",
			},
			[]config.RestartRule{{Action: "ignore", In: true, Codes: []int{0}}}, nil},
		{"failure-shutdown after exit 0", []string{"on-success: failure-shutdown"},
			[]string{"Pebble: on-success failure-shutdown made pebble exit 10 after exit 0; vitals", "exits 0."},
			[]string{"restart: on-failure  # Pebble: on-success failure-shutdown, on-failure restart"}, nil,
			[]string{`service "app": on-success failure-shutdown made pebble exit 10 after exit 0; vitals exits 0`}},
		{"shutdown on both, only the failure's code differing", []string{"on-success: shutdown", "on-failure: shutdown"},
			[]string{"Pebble: on-failure shutdown made pebble exit 10; vitals exits with the", "service's code."},
			[]string{"restart: never  # Pebble: on-success shutdown, on-failure shutdown"}, nil, nil},
		{"success-shutdown after a failure", []string{"on-success: shutdown", "on-failure: success-shutdown"},
			[]string{"Pebble: on-failure success-shutdown made pebble exit 0; vitals exits with the", "service's code."},
			[]string{"restart: never  # Pebble: on-success shutdown, on-failure success-shutdown"}, nil,
			[]string{`service "app": on-failure success-shutdown made pebble exit 0; vitals exits with the service's code`}},
		{"restart after exit 0 only, a failure shutting down", []string{"on-failure: shutdown"},
			[]string{"Pebble: on-failure shutdown made pebble exit 10; vitals exits with the", "service's code."},
			[]string{
				"restart: always  # Pebble: on-success restart, on-failure shutdown",
				"restart-rules:",
				"  - {action: exit, exit-codes: {operator: not-in, values: [0]}}  # Pebble: on-failure shutdown",
			},
			[]config.RestartRule{{Action: "exit", In: false, Codes: []int{0}}}, nil},
		{"ignored whatever the code", []string{"on-success: ignore", "on-failure: ignore"}, nil,
			[]string{
				"restart: never  # Pebble: on-success ignore, on-failure ignore",
				"restart-rules:",
				"  - {action: ignore, exit-codes: {operator: in, values: [0]}}  # Pebble: on-success ignore",
				"  - {action: ignore, exit-codes: {operator: not-in, values: [0]}}  # Pebble: on-failure ignore",
			},
			[]config.RestartRule{{Action: "ignore", In: true, Codes: []int{0}}, {Action: "ignore", In: false, Codes: []int{0}}}, nil},
	} {
		r, err := Pebble("layer.yaml", layer(append(append([]string{
			"services:",
			"  app:",
			"    override: replace",
			"    command: /bin/app",
		}, indent("    ", tt.fields)...),
			"checks:",
			"  c: {override: replace, level: alive, tcp: {port: 8080}}",
		)...), "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want := "services:\n" +
			"  app:\n" +
			strings.Join(indent("    # ", tt.notes), "\n") + strings.Repeat("\n", min(len(tt.notes), 1)) +
			"    command: [/bin/app]\n" +
			strings.Join(indent("    ", tt.restart), "\n") + "\n" +
			"    backoff: {initial: 500ms, max: 30s}\n" +
			"    stop-timeout: 5s  # Pebble's default kill-delay\n"
		if got := section(t, r.YAML, "services:"); got != want {
			t.Errorf("%s: the service is written\n%s\nwant\n%s", tt.name, got, want)
		}
		sameLines(t, tt.name+": warnings", r.Warnings, tt.warnings)
		policy, _, _ := strings.Cut(strings.TrimPrefix(tt.restart[0], "restart: "), " ")
		if s := service(t, loadConfig(t, r.YAML), "app"); s.Restart != policy || !reflect.DeepEqual(s.RestartRules, tt.rules) {
			t.Errorf("%s: loads as restart: %s, rules %+v; want %s, %+v", tt.name, s.Restart, s.RestartRules, policy, tt.rules)
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

// Every service of a layer is an entry of services:, ordered as Pebble
// orders it; a name vitals spells otherwise is written so where the others
// name it too.
func TestEveryServiceOfALayerIsAnEntryWithItsOrder(t *testing.T) {
	r, err := Pebble("layer.yaml", layer(
		"services:",
		"  web:",
		"    override: replace",
		"    command: /bin/web",
		"    after: [db]",
		"    requires: [cache]",
		"    before: [Log_Shipper]",
		"  db: {override: replace, command: /bin/db, before: [web]}",
		"  cache: {override: replace, command: /bin/cache}",
		"  Log_Shipper: {override: replace, command: /bin/ship, after: [web]}",
		"checks:",
		"  web-up: {override: replace, level: alive, tcp: {port: 8080}}",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	sameLines(t, "warnings", r.Warnings, []string{
		`service "Log_Shipper" is written as "log_shipper": a vitals service name is lower case letters, digits and - _ . inside, at most 63 characters`,
	})
	for _, want := range []string{
		"  web:\n" +
			"    # Pebble: requires gave no order; vitals starts it after what it requires.\n" +
			"    command: [/bin/web]\n" +
			"    after: [db]\n" +
			"    before: [log_shipper]\n" +
			"    requires: [cache]\n",
		"  log_shipper:\n" +
			"    # Pebble's service Log_Shipper.\n" +
			"    command: [/bin/ship]\n" +
			"    after: [web]\n",
	} {
		if !strings.Contains(string(r.YAML), want) {
			t.Errorf("the file has no\n%s\nit is:\n%s", want, r.YAML)
		}
	}
	c := loadConfig(t, r.YAML)
	var names []string
	for _, s := range c.Services {
		names = append(names, s.Name)
	}
	if want := []string{"cache", "db", "web", "log_shipper"}; !slices.Equal(names, want) {
		t.Errorf("services start in the order %q, want %q", names, want)
	}
	if web := service(t, c, "web"); !slices.Equal(web.After, []string{"db"}) || !slices.Equal(web.Before, []string{"log_shipper"}) ||
		!slices.Equal(web.Requires, []string{"cache"}) {
		t.Errorf("web: after %q, before %q, requires %q", web.After, web.Before, web.Requires)
	}
}

func TestWhatAPebbleServiceDoesThatVitalsDoesNotIsSaidInTheFileAndOnTheSide(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fields   []string // the service's, after override
		want     string   // the service's entry
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
			"services:\n" +
				"  app:\n" +
				"    # Pebble: [ --verbose ] are default arguments, which pebble run --args\n" +
				"    # replaces; here they are part of the command.\n" +
				"    # Pebble ran it as user 1000 and group staff; vitals runs it as its own user.\n" +
				"    # Pebble: startup: disabled, so it started only with pebble start; vitals starts\n" +
				"    # it with the others.\n" +
				"    # Pebble: before proxy, of another layer: left out.\n" +
				"    # Pebble: requires db, of another layer: left out.\n" +
				"    command: [/bin/app, --listen, \":8080\", --verbose]\n" +
				"    restart: always  # Pebble's default: restart after any exit\n" +
				"    backoff: {initial: 500ms, max: 30s}\n" +
				"    stop-timeout: 5s  # Pebble's default kill-delay\n",
			[]string{
				`service "app": "niceness" is not a field vitals import knows: left out`,
				`service "app" runs as user "1000" and group "staff" in Pebble; vitals runs its services as its own user: left out`,
				`service "app" has startup: disabled, which vitals has no equivalent of for a service: it starts with the others`,
				`service "app": before proxy, which this layer does not define: left out`,
				`service "app": requires db, which this layer does not define: left out`,
			},
		},
		{
			"a backoff that starts at once and grows by half",
			[]string{"command: /bin/app", "backoff-delay: 0s", "backoff-factor: 1.5", "kill-delay: 0s"},
			"services:\n" +
				"  app:\n" +
				"    # Pebble: backoff-factor 1.5; vitals doubles the delay each time.\n" +
				"    # Pebble: backoff-delay 0s restarted it at once; vitals waits 1ms.\n" +
				"    command: [/bin/app]\n" +
				"    restart: always  # Pebble's default: restart after any exit\n" +
				"    backoff: {initial: 1ms, max: 30s}\n" +
				"    stop-timeout: 0s  # Pebble: kill-delay\n",
			[]string{
				`service "app": backoff-factor 1.5 is left out: vitals doubles the delay each time`,
				`service "app": backoff-delay 0s is written as backoff.initial: 1ms, since vitals needs a delay`,
			},
		},
		{
			"a backoff limit below its delay",
			[]string{"command: /bin/app", "backoff-delay: 10s", "backoff-limit: 2s", "backoff-factor: 2.0"},
			"services:\n" +
				"  app:\n" +
				"    # Pebble: backoff-limit 2s is below backoff-delay 10s: it waited the delay first,\n" +
				"    # then the limit; vitals waits 10s each time.\n" +
				"    # Pebble started the backoff over once it ran backoff-limit (2s); vitals does\n" +
				"    # once it ran 30s.\n" +
				"    command: [/bin/app]\n" +
				"    restart: always  # Pebble's default: restart after any exit\n" +
				"    backoff: {initial: 10s, max: 10s}\n" +
				"    stop-timeout: 5s  # Pebble's default kill-delay\n",
			[]string{
				`service "app": backoff-limit 2s is below backoff-delay 10s, which vitals refuses: written as backoff.max: 10s`,
				`service "app": Pebble started the backoff over once it ran backoff-limit (2s); vitals does once it ran 30s`,
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
		)...), "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := section(t, r.YAML, "services:"); got != tt.want {
			t.Errorf("%s: the service is written\n%s\nwant\n%s", tt.name, got, tt.want)
		}
		sameLines(t, tt.name+": warnings", r.Warnings, tt.warnings)
		loadConfig(t, r.YAML)
	}
}

// A service whose command another layer gives is written without one, and
// said: an entry of services: needs its command, so the file does not load
// until it is given.
func TestAServiceWithNoCommandInTheLayerIsSaidToNeedOne(t *testing.T) {
	r, err := Pebble("layer.yaml", layer(
		"services:",
		"  app: {override: merge, environment: {MODE: fast}, working-dir: /srv}",
		"checks:",
		"  c: {override: replace, level: alive, tcp: {port: 8080}}",
	), "")
	if err != nil {
		t.Fatal(err)
	}
	want := "services:\n" +
		"  app:\n" +
		"    # Pebble: no command in this layer: give it as command:.\n" +
		"    env:\n" +
		"      MODE: fast\n" +
		"    dir: /srv\n" +
		"    restart: always  # Pebble's default: restart after any exit\n" +
		"    backoff: {initial: 500ms, max: 30s}\n" +
		"    stop-timeout: 5s  # Pebble's default kill-delay\n"
	if got := section(t, r.YAML, "services:"); got != want {
		t.Errorf("the service is written\n%s\nwant\n%s", got, want)
	}
	if len(r.Warnings) != 2 || r.Warnings[0] != `service "app" has no command in this layer (it takes it from another): give it as services.app.command` ||
		!strings.HasPrefix(r.Warnings[1], "the file does not load on this machine: vitals.yaml:") || !strings.Contains(r.Warnings[1], "services.app") {
		t.Errorf("warnings %q, want the missing command said, and the file not loading for it", r.Warnings)
	}
}
