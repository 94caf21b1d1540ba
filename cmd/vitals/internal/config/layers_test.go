package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	. "github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// layers parses files as layers, named a.yaml, b.yaml, ... in order.
func layers(t *testing.T, files ...string) (*Config, error) {
	t.Helper()
	var ls []Layer
	for i, f := range files {
		ls = append(ls, Layer{File: string(rune('a'+i)) + ".yaml", Data: []byte(f)})
	}
	return ParseLayers(ls, lookup, kinds.All)
}

// checksOf is the checks of c as NAME KIND SOURCE period=PERIOD level=LEVEL, one a line.
func checksOf(c *Config) string {
	var lines []string
	for _, ch := range c.Checks {
		lines = append(lines, ch.Name+" "+ch.Kind+" "+ch.Source+" period="+ch.Period.String()+" level="+ch.Level.String())
	}
	return strings.Join(lines, "\n")
}

const base = `listen: 127.0.0.1:9001
checks:
  web:
    period: 10s
    http: {url: "http://localhost:8080/", headers: {X-A: "1"}}
  db: {tcp: {address: "localhost:5432"}, level: live}
  cache: {tcp: {address: "localhost:6379"}}
`

func TestLayersMergeAndReplaceChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		later string
		want  string
	}{
		{"a later layer adds a check after the earlier ones", "checks:\n  new: {tcp: {address: \"localhost:1\"}}\n",
			`web http {url: "http://localhost:8080/", headers: {X-A: "1"}} period=10s level=ready
db tcp {address: "localhost:5432"} period=10s level=live
cache tcp {address: "localhost:6379"} period=10s level=ready
new tcp {address: "localhost:1"} period=10s level=ready`},
		{"merge: the fields given change, the others stay, and the kind's mappings merge key by key", `checks:
  web:
    override: merge
    period: 5s
    http: {headers: {X-B: "2"}, method: HEAD}
`,
			`web http {url: "http://localhost:8080/", headers: {X-A: "1", X-B: "2"}, method: HEAD} period=5s level=ready
db tcp {address: "localhost:5432"} period=10s level=live
cache tcp {address: "localhost:6379"} period=10s level=ready`},
		{"replace: the entry is the whole check, its defaults its own, in the earlier one's place", `checks:
  db: {override: replace, exec: {command: [pg_isready]}}
`,
			`web http {url: "http://localhost:8080/", headers: {X-A: "1"}} period=10s level=ready
db exec {command: [pg_isready]} period=10s level=ready
cache tcp {address: "localhost:6379"} period=10s level=ready`},
		{"override: replace alone removes the check", `checks:
  db: {override: replace}
`,
			`web http {url: "http://localhost:8080/", headers: {X-A: "1"}} period=10s level=ready
cache tcp {address: "localhost:6379"} period=10s level=ready`},
		{"several checks merged by one layer", `checks:
  web: {override: merge, http: {url: "http://localhost:8081/"}}
  cache: {override: merge, period: 1s}
`,
			`web http {url: "http://localhost:8081/", headers: {X-A: "1"}} period=10s level=ready
db tcp {address: "localhost:5432"} period=10s level=live
cache tcp {address: "localhost:6379"} period=1s level=ready`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := layers(t, base, tc.later)
			if err != nil {
				t.Fatal(err)
			}
			if got := checksOf(c); got != tc.want {
				t.Errorf("checks\n%s\nwant\n%s", got, tc.want)
			}
			if c.Listen != "127.0.0.1:9001" {
				t.Errorf("listen %q: a layer that does not give it keeps the earlier one's", c.Listen)
			}
		})
	}
}

// Three layers, each over the merge of those before it: the last word is
// the last layer's.
func TestLayersApplyInOrder(t *testing.T) {
	c, err := layers(t, base,
		"listen: 127.0.0.1:9002\nchecks:\n  db: {override: replace}\n",
		"listen: 127.0.0.1:9003\nchecks:\n  db: {tcp: {address: \"localhost:5433\"}}\n  web: {override: merge, period: 2s}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := `web http {url: "http://localhost:8080/", headers: {X-A: "1"}} period=2s level=ready
cache tcp {address: "localhost:6379"} period=10s level=ready
db tcp {address: "localhost:5433"} period=10s level=ready`
	if got := checksOf(c); got != want || c.Listen != "127.0.0.1:9003" {
		t.Errorf("listen %s, checks\n%s\nwant listen 127.0.0.1:9003, checks\n%s", c.Listen, got, want)
	}
	if want := []string{"a.yaml", "b.yaml", "c.yaml"}; !reflect.DeepEqual(c.Files, want) || c.File != "a.yaml, b.yaml, c.yaml" {
		t.Errorf("Files %q, File %q: want %q", c.Files, c.File, want)
	}
}

const services = `services:
  api:
    command: [api, --port, "8080"]
    env: {A: "1", B: "1"}
    after: [db]
    restart: always
  db:
    command: [postgres]
  cache:
    command: [redis-server]
checks:
  up: {tcp: {address: "localhost:8080"}, service: api}
`

func TestLayersMergeAndReplaceServices(t *testing.T) {
	c, err := layers(t, services, `services:
  api:
    override: merge
    command: [api, --port, "9090"]
    env: {B: "2", C: "2"}
    after: [cache]
  db:
    override: replace
    command: [postgres, -D, /data]
  cache: {override: replace}
`)
	if err == nil || !strings.Contains(err.Error(), `b.yaml:6:13: services.api.after[1]: "cache" is no service of this file (services: api, db)`) {
		t.Fatalf("an after that names a removed service: %v", err)
	}

	c, err = layers(t, services, `services:
  api:
    override: merge
    command: [api, --port, "9090"]
    env: {B: "2", C: "2"}
    after: [cache]
  db:
    override: replace
    command: [postgres, -D, /data]
`)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Service{}
	var order []string
	for _, s := range c.Services {
		byName[s.Name], order = s, append(order, s.Name)
	}
	api, db := byName["api"], byName["db"]
	if want := []string{"api", "--port", "9090"}; !reflect.DeepEqual(api.Command, want) {
		t.Errorf("api's command %q: a list replaces, want %q", api.Command, want)
	}
	if want := map[string]string{"A": "1", "B": "2", "C": "2"}; !reflect.DeepEqual(api.Env, want) {
		t.Errorf("api's env %v: a mapping merges key by key, want %v", api.Env, want)
	}
	if want := []string{"db", "cache"}; !reflect.DeepEqual(api.After, want) {
		t.Errorf("api's after %q: after adds up, as Pebble's, want %q", api.After, want)
	}
	if api.Restart != RestartAlways {
		t.Errorf("api's restart %q: a merge keeps what it does not give", api.Restart)
	}
	if want := []string{"postgres", "-D", "/data"}; !reflect.DeepEqual(db.Command, want) || db.Restart != RestartNever {
		t.Errorf("db: %q restart %s: replace is the whole service", db.Command, db.Restart)
	}
	if want := []string{"cache", "db", "api"}; !reflect.DeepEqual(order, want) {
		t.Errorf("services in the order %q, want %q", order, want)
	}
	if c.Checks[0].Service != "api" {
		t.Errorf("check up's service %q", c.Checks[0].Service)
	}
}

// The one service of service: is an entry too.
func TestLayersMergeTheServiceBlock(t *testing.T) {
	c, err := layers(t, "service: {command: [app], restart: always}\nchecks:\n  up: {heartbeat: {ttl: 1m}}\n",
		"service: {override: merge, stop-timeout: 3s}\n")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Services[0]; s.Name != "app" || s.Restart != RestartAlways || s.StopTimeout.String() != "3s" || !c.Shorthand {
		t.Errorf("service %+v", s)
	}
}

// A service's env merges key by key, whatever its keys are called: one
// named after is no ordering list.
func TestLayersMergeAServicesEnvWhateverItsKeys(t *testing.T) {
	c, err := layers(t, "service: {command: [app], env: {after: x, A: \"1\"}}\n",
		"service: {override: merge, env: {after: y, B: \"2\"}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if env := c.Services[0].Env; env["after"] != "y" || env["A"] != "1" || env["B"] != "2" {
		t.Errorf("env %v: want after=y, A=1, B=2", env)
	}
}

// What refers to what is judged on the merge: a check names a service of
// another layer.
func TestLayersReferToEachOther(t *testing.T) {
	c, err := layers(t, "services:\n  a: {command: [a]}\n  b: {command: [b]}\n",
		"checks:\n  up: {tcp: {address: \"localhost:1\"}, service: b, on-failure: restart}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Checks[0].Service != "b" {
		t.Errorf("service %q", c.Checks[0].Service)
	}
}

// The top level's other keys are the later layer's whole.
func TestLayersTopLevelKeysAreTheLaterOnes(t *testing.T) {
	c, err := layers(t, base+"drain: 5s\nservice-info: {version: \"1\", release-id: r1}\nhooks:\n  - {on: check-failed, exec: [true]}\n  - {on: check-passed, exec: [true]}\n",
		"service-info: {version: \"2\"}\nhooks:\n  - {name: only, on: check-failed, exec: [true]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Drain.String() != "5s" || c.ServiceInfo.Version != "2" || c.ServiceInfo.ReleaseID != "" {
		t.Errorf("drain %v, service-info %+v: want 5s, version 2 and no release-id", c.Drain, c.ServiceInfo)
	}
	if len(c.Hooks) != 1 || c.Hooks[0].Name != "only" {
		t.Errorf("hooks %+v: want the later layer's one", c.Hooks)
	}
}

func TestLayersSayWhatIsWrongInTheLayersFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []string
		want   []string
	}{
		{"a removal where no earlier layer gives checks:", []string{"service: {command: [app]}\n", y(
			"checks:",
			"  ghost: {override: replace}",
		)}, []string{
			"b.yaml:2:3: checks.ghost: override: replace alone removes a check of an earlier layer, and none has ghost",
		}},
		{"a name an earlier layer gives, without override", []string{base, y(
			"checks:",
			"  db: {tcp: {address: \"localhost:5433\"}}",
		)}, []string{
			"b.yaml:2:3: checks.db: an earlier layer gives it too (a.yaml:6): say override: merge (this layer gives what changes) or override: replace (this layer gives it whole)",
		}},
		{"a service an earlier layer gives, without override", []string{services, y(
			"services:",
			"  db: {command: [postgres]}",
		)}, []string{
			"b.yaml:2:3: services.db: an earlier layer gives it too (a.yaml:7): say override: merge (this layer gives what changes) or override: replace (this layer gives it whole)",
		}},
		{"every layer's errors at once, in the layers' order", []string{base + "drain: 5\n", y(
			"ui: maybe",
			"checks:",
			"  web: {override: merge, period: 1}",
			"  new: {tcp: {address: localhost}}",
		)}, []string{
			`a.yaml:8:8: drain: "5" has no unit: write 5s (or ms, m, h)`,
			`b.yaml:1:5: ui: want true or false, got "maybe"`,
			`b.yaml:3:34: checks.web.period: "1" has no unit: write 1s (or ms, m, h)`,
			`b.yaml:4:14: checks.new.tcp: address "localhost": missing port in address`,
		}},
		{"a merge that gives another kind", []string{base, y(
			"checks:",
			"  db: {override: merge, exec: {command: [pg_isready]}}",
		)}, []string{
			"b.yaml:2:25: checks.db.exec: override: merge keeps the check's kind (tcp): give override: replace for a check of another kind",
		}},
		{"a removal of what no earlier layer gives", []string{base, y(
			"checks:",
			"  dbb: {override: replace}",
		)}, []string{
			"b.yaml:2:3: checks.dbb: override: replace alone removes a check of an earlier layer, and none has dbb",
		}},
		{"an override that is no word of Pebble's", []string{base, y(
			"checks:",
			"  db: {override: merged, period: 1s}",
		)}, []string{
			`b.yaml:2:18: checks.db.override: want merge or replace, got "merged"`,
		}},
		{"what a later layer makes wrong is said where the earlier one writes it", []string{services, y(
			"services:",
			"  db: {override: replace}",
		)}, []string{
			`a.yaml:5:13: services.api.after[0]: "db" is no service of this file (services: api, cache)`,
		}},
		{"a layer's syntax error, with the others'", []string{"checks: [\n", base, "listen: :1\n  bad: indent\n"}, []string{
			"a.yaml:1:9: YAML: sequence end token ']' not found",
			"c.yaml:1:9: YAML: mapping value is not allowed in this context",
		}},
		{"the last check removed", []string{"checks:\n  a: {heartbeat: {ttl: 1m}}\n", "checks:\n  a: {override: replace}\n"}, []string{
			"a.yaml:2:4: checks: no checks: give at least one, or a service: to supervise",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layers(t, tc.layers...)
			if err == nil {
				t.Fatalf("the layers load, want\n%s", strings.Join(tc.want, "\n"))
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// A file read alone needs no override, and may give one.
func TestASingleFileNeedsNoOverride(t *testing.T) {
	c, err := parse(t, "checks:\n  a: {override: merge, heartbeat: {ttl: 1m}}\n  b: {heartbeat: {ttl: 1m}}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Checks) != 2 || c.Origins != nil || !reflect.DeepEqual(c.Files, []string{file}) {
		t.Errorf("checks %d, origins %v, files %q", len(c.Checks), c.Origins, c.Files)
	}
}

// Where each value comes from, for vitals validate --print.
func TestLayersSayWhereEachValueComesFrom(t *testing.T) {
	c, err := layers(t, base, "checks:\n  web:\n    override: merge\n    period: 5s\n")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"listen":              "[a.yaml:1]",
		"checks":              "[a.yaml:2 b.yaml:1]",
		"checks.web":          "[a.yaml:3 b.yaml:2]",
		"checks.web.period":   "[b.yaml:4]",
		"checks.web.http":     "[a.yaml:5]",
		"checks.web.http.url": "[a.yaml:5]",
		"checks.db.level":     "[a.yaml:6]",
	} {
		if got := fmtPositions(c.Origins[path]); got != want {
			t.Errorf("%s comes from %s, want %s", path, got, want)
		}
	}
}

func fmtPositions(ps []Position) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return "[" + strings.Join(s, " ") + "]"
}

// A directory is its .yaml and .yml files, in name order: not those whose
// names start with a dot (a ConfigMap's ..data), nor its directories, nor
// its other files.
func TestADirectoryIsItsFilesInNameOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("010-prod.yml", "listen: 127.0.0.1:9010\nchecks:\n  db: {override: merge, period: 3s}\n")
	write("001-base.yaml", base)
	write(".001-base.yaml.swp", "not yaml: [")
	write("README.md", "not yaml: [")
	write("002-more.yaml", "listen: 127.0.0.1:9002\nchecks:\n  more: {heartbeat: {ttl: 1m}}\n")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir, kinds.All, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "001-base.yaml"), filepath.Join(dir, "002-more.yaml"), filepath.Join(dir, "010-prod.yml")}
	if !reflect.DeepEqual(c.Files, want) || c.Listen != "127.0.0.1:9010" || !reflect.DeepEqual(c.Paths, []string{dir}) {
		t.Errorf("files %q, listen %s, paths %q: want %q, the last one's listen, and the directory", c.Files, c.Listen, c.Paths, want)
	}
	if len(c.Checks) != 4 || c.Checks[1].Name != "db" || c.Checks[1].Period.String() != "3s" {
		t.Errorf("checks\n%s", checksOf(c))
	}

	// A file after the directory is a layer over it.
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	if err := os.WriteFile(extra, []byte("checks:\n  db: {override: replace}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := LoadLayers([]string{dir, extra}, kinds.All, Options{}); err != nil || len(c.Checks) != 3 || len(c.Files) != 4 {
		t.Errorf("the directory and a file: %v, %d checks", err, len(c.Checks))
	}

	// An error is said in the file of the layer that has it.
	write("003-bad.yaml", "checks:\n  more: {heartbeat: {ttl: 1m}}\n")
	_, err = Load(dir, kinds.All, Options{})
	if want := filepath.Join(dir, "003-bad.yaml") + ":2:3: checks.more: an earlier layer gives it too (" + filepath.Join(dir, "002-more.yaml") + ":3)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v\nwant %s…", err, want)
	}

	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(empty, kinds.All, Options{}); err == nil || err.Error() != "read configuration: "+empty+" has no .yaml or .yml file to read" {
		t.Errorf("an empty directory: %v", err)
	}
}
