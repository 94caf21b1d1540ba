//go:build !vitals_probe

package schematest_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/agent"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/schematest"
)

// root is the repository's top directory.
var root = filepath.Join(filepath.Dir(schematest.Path), "..", "..")

func noEnv(string) (string, bool) { return "", false }

// The published schema is a draft 2020-12 schema: the validator checks it
// against the draft's metaschema, which refuses one that is not.
func TestTheSchemaIsADraft202012Schema(t *testing.T) {
	if err := schematest.Validate("vitals.yaml", []byte("checks:\n  up: {heartbeat: {ttl: 1m}}\n")); err != nil {
		t.Fatal(err)
	}
	broken := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "mapping"}`
	if _, err := schematest.Compile([]byte(broken)); err == nil {
		t.Fatalf("a schema with type mapping compiled")
	}
}

// Every vitals.yaml of the repository that a user may copy names the
// schema on its first line, for editors, and follows it: the examples, the
// files vitals import writes (its tests' golden files), and those of the
// deploy examples' ConfigMaps.
func TestEveryExampleFollowsTheSchema(t *testing.T) {
	var files []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && e.Name() == ".git":
			return filepath.SkipDir
		case !e.IsDir() && (e.Name() == "vitals.yaml" || strings.HasSuffix(e.Name(), ".vitals.yaml")):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d vitals.yaml files under %s: %v", len(files), root, files)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(data), "\n"); first != config.SchemaComment {
			t.Errorf("%s: the first line is %q, not the schema's for editors:\n%s", path, first, config.SchemaComment)
		}
		if err := schematest.Validate(path, data); err != nil {
			t.Error(err)
		}
	}

	manifests, err := filepath.Glob(filepath.Join(root, "deploy", "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, path := range manifests {
		for name, data := range configMapFiles(t, path) {
			found++
			if err := schematest.Validate(path+": "+name, []byte(data)); err != nil {
				t.Error(err)
			}
		}
	}
	if found == 0 {
		t.Errorf("no ConfigMap of %v has a vitals.yaml", manifests)
	}
}

// configMapFiles are the files named *vitals.yaml of the ConfigMaps of a
// manifest, by the ConfigMap's name and the file's.
func configMapFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			Kind     string
			Metadata struct{ Name string }
			Data     map[string]string
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if doc.Kind != "ConfigMap" {
			continue
		}
		for name, text := range doc.Data {
			if strings.HasSuffix(name, "vitals.yaml") {
				out[doc.Metadata.Name+"/"+name] = text
			}
		}
	}
}

// Files that vitals validate accepts, written every way the loader reads
// them: the schema accepts each.
var good = []struct{ name, yaml string }{
	{"every top-level key", `
listen: 127.0.0.1:8558
grpc-listen: 127.0.0.1:8559
api: /tmp/vitals-schema-test.sock
details: false
drain: 5s
checks:
  up: {heartbeat: {ttl: 1m}}
`},
	{"a service alone", `
service:
  command: [sleep, 10]
  env: {PORT: 8080, MODE: fast}
  dir: /
  restart: on-failure
  backoff: {initial: 1s, max: 1m}
  stop-signal: TERM
  stop-timeout: 20s
checks: {}
`},
	{"every timing field, and the forms YAML gives them", `
checks:
  db.primary_1:
    level: alive
    tcp: {address: "localhost:5432", send: PING, expect: PONG}
    period: 1m30s
    timeout: 500ms
    initial-delay: 0
    success-threshold: 2
    failure-threshold: 10
    on-failure: exit
`},
	{"numbers and booleans where the loader wants text", `
checks:
  web:
    http:
      url: http://localhost:8080/
      status: 200
      headers: {X-Count: 3, Accept: [text/plain, application/json]}
      body: true
`},
	{"booleans and whole numbers quoted, as Helm's quote writes them", `
details: "true"
kubernetes: {events: "true"}
checks:
  web:
    http: {url: http://localhost:8080/, insecure: "false"}
    success-threshold: "2"
    failure-threshold: "3"
hooks:
  - on: check-failed
    webhook: {url: https://example.com/hook, retries: "1"}
`},
	{"${VAR} in values of every type", `
details: ${DETAILS}
drain: ${DRAIN}
checks:
  web:
    level: ${LEVEL}
    http: {url: "${URL}", insecure: "${INSECURE}"}
    period: ${PERIOD}
    failure-threshold: ${THRESHOLD}
    on-failure: ${ON_FAILURE}
hooks:
  - name: ${HOOK}
    on: ${EVENT}
    exec: [true]
`},
	{"hooks of every form", `
checks:
  up: {heartbeat: {ttl: 1m}}
hooks:
  - on: check-failed
    exec: [true]
  - name: notify
    on: [check-failed, check-passed, service-exited]
    exec: {command: [true, --now], timeout: 3s}
  - on: [stopping]
    webhook:
      url: https://example.com/hook
      method: PUT
      headers: {Authorization: Bearer x}
      timeout: 2s
      retries: 0
      backoff: {initial: 100ms, max: 2s}
  - pebble-notice: {}
  - on: [check-failed, service-exited]
    pebble-notice:
      socket: /charm/container/pebble.socket
      repeat-after: 1h
      timeout: 2s
      retries: 5
      backoff: {max: 5s}
`},
	{"service-info and component types", `
service-info: {service-id: web-1, version: 2, release-id: 1.4.2}
checks:
  db: {tcp: {address: "localhost:5432"}, component-type: datastore}
  api: {http: {url: http://localhost/}, component-type: "https://schema.org/WebAPI"}
`},
	{"kubernetes", `
kubernetes: {events: true, condition: vitals.dev/ready}
checks:
  up: {heartbeat: {ttl: 1m}}
`},
	{"a log check with its fail-pattern", `
service: {command: [sleep, "10"]}
checks:
  errors: {log: {fail-pattern: ERROR, window: 30s, stream: stderr}}
`},
	{"notify checks and s6's notification-fd", `
service: {command: [sleep, "10"], notification-fd: 3}
checks:
  up: {notify: {}, level: startup}
  alive: {notify: {watchdog: 10s}, level: live}
`},
}

// The schema refuses nothing that the loader accepts: every file of good,
// a check of every kind's example, and what vitals validate --print writes
// of them, under the line that names the schema.
func TestTheSchemaAcceptsWhatTheLoaderAccepts(t *testing.T) {
	env := func(name string) (string, bool) {
		v, ok := map[string]string{"DETAILS": "true", "DRAIN": "1s", "LEVEL": "live", "URL": "http://localhost/",
			"INSECURE": "false", "PERIOD": "5s", "THRESHOLD": "2", "ON_FAILURE": "ignore", "HOOK": "h",
			"EVENT": "check-failed"}[name]
		return v, ok
	}
	files := good
	for _, k := range kinds.All {
		files = append(files, struct{ name, yaml string }{k.Name + "'s example",
			"service: {command: [sleep, \"10\"]}\nchecks:\n  a:\n    " + k.Name + ": " + k.Example + "\n"})
	}
	for _, f := range files {
		c, err := config.Parse("vitals.yaml", []byte(f.yaml), env, kinds.All)
		if err != nil {
			t.Errorf("%s: the loader refuses it: %v", f.name, err)
			continue
		}
		if err := schematest.Validate(f.name, []byte(f.yaml)); err != nil {
			t.Error(err)
		}
		printed := agent.Render(c)
		if !strings.HasPrefix(printed, config.SchemaComment+"\n") {
			t.Errorf("%s: --print does not name the schema first:\n%s", f.name, printed)
		}
		if err := schematest.Validate(f.name+" as --print writes it", []byte(printed)); err != nil {
			t.Error(err)
		}
	}
}

// Files that the loader refuses, each for something the schema says too:
// the schema refuses each for that. (Its errors' locations are not always
// right: the validator's slices of them share their arrays, so that a
// sibling's overwrites one. What the error says is.)
var bad = []struct {
	name, yaml string
	at         string // where the loader finds what is wrong, as a JSON pointer
	says       string // what the schema's error says
}{
	{"an empty file", "", "", "got null, want object"},
	{"no checks and no service", "checks: {}\n", "", "missing property 'service'"},
	{"an unknown key", "listn: :8558\nchecks:\n  up: {heartbeat: {ttl: 1m}}\n", "", "additional properties 'listn' not allowed"},
	{"an unknown key of a check", "checks:\n  up: {heartbeat: {ttl: 1m}, perod: 1s}\n", "/checks/up", "additional properties 'perod' not allowed"},
	{"an unknown key of a kind", "checks:\n  web: {http: {url: http://localhost/, methd: GET}}\n", "/checks/web/http", "additional properties 'methd' not allowed"},
	{"two kinds in one check", "checks:\n  web: {http: {url: http://localhost/}, tcp: {address: \"localhost:80\"}}\n", "/checks/web", "'oneOf' failed, subschemas 0, 1 matched"},
	{"no kind", "checks:\n  web: {level: ready}\n", "/checks/web", "'oneOf' failed, none matched"},
	{"a check with no value", "checks:\n  web:\n", "/checks/web", "got null, want object"},
	{"a kind's required field left out", "checks:\n  web: {http: {method: GET}}\n", "/checks/web/http", "missing property 'url'"},
	{"a heartbeat without its ttl", "checks:\n  up: {heartbeat: {}}\n", "/checks/up/heartbeat", "missing property 'ttl'"},
	{"a bad level", "checks:\n  up: {heartbeat: {ttl: 1m}, level: liveness}\n", "/checks/up/level", "value must be one of 'startup', 'live', 'ready', 'alive'"},
	{"a bad on-failure", "checks:\n  up: {heartbeat: {ttl: 1m}, on-failure: reboot}\n", "/checks/up/on-failure", "value must be one of 'restart', 'exit', 'ignore'"},
	{"a check name in capitals", "checks:\n  Web: {heartbeat: {ttl: 1m}}\n", "/checks", "invalid propertyName 'Web'"},
	{"a check name that starts with -", "checks:\n  -web: {heartbeat: {ttl: 1m}}\n", "/checks", "invalid propertyName '-web'"},
	{"a check name of 64 characters", "checks:\n  " + strings.Repeat("a", 64) + ": {heartbeat: {ttl: 1m}}\n", "/checks", "maxLength: got 64, want 63"},
	{"a duration without a unit", "checks:\n  web: {tcp: {address: \"localhost:80\"}, period: 10}\n", "/checks/web/period", "got number, want string"},
	{"a duration in words", "checks:\n  web: {tcp: {address: \"localhost:80\"}, timeout: 10 seconds}\n", "/checks/web/timeout", "'10 seconds' does not match pattern '^"},
	{"a negative duration", "drain: -1s\nchecks:\n  up: {heartbeat: {ttl: 1m}}\n", "/drain", "'-1s' does not match pattern '^"},
	{"a threshold in words", "checks:\n  web: {tcp: {address: \"localhost:80\"}, failure-threshold: three}\n", "/checks/web/failure-threshold", "got string, want integer"},
	{"a threshold of 0", "checks:\n  web: {tcp: {address: \"localhost:80\"}, success-threshold: 0}\n", "/checks/web/success-threshold", "minimum: got 0, want 1"},
	{"a bool in words", "details: sure\nchecks:\n  up: {heartbeat: {ttl: 1m}}\n", "/details", "got string, want boolean"},
	{"a command as one string", "checks:\n  ls: {exec: {command: ls -l}}\n", "/checks/ls/exec/command", "got string, want array"},
	{"a header name with a space", "checks:\n  web: {http: {url: http://localhost/, headers: {X Probe: a}}}\n", "/checks/web/http/headers", "invalid propertyName 'X Probe'"},
	{"a variable name with a dash", "checks:\n  t: {exec: {command: [true], env: {MY-VAR: a}}}\n", "/checks/t/exec/env", "invalid propertyName 'MY-VAR'"},
	{"a connection check that names its processes twice", "checks:\n  mq: {connection: {remote: \"rabbitmq:5672\", pid-file: /run/st2.pid, process: st2rulesengine}}\n", "/checks/mq/connection", "'not' failed"},
	{"a listening check on port 0", "checks:\n  web: {listening: {port: 0, any-process: true}}\n", "/checks/web/listening/port", "minimum: got 0, want 1"},
	{"a log check with neither pattern", "service: {command: [sleep, \"1\"]}\nchecks:\n  l: {log: {stream: stdout}}\n", "/checks/l/log", "missing property 'fail-pattern'"},
	{"a mapping where a list goes", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks: {on: stopping}\n", "/hooks", "got object, want array"},
	{"a hook without on", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - exec: [true]\n", "/hooks/0", "missing property 'on'"},
	{"a hook with exec and webhook", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - {on: stopping, exec: [true], webhook: {url: http://localhost/}}\n", "/hooks/0", "'oneOf' failed, subschemas 0, 1 matched"},
	{"a hook with exec and pebble-notice", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - {on: stopping, exec: [true], pebble-notice: {}}\n", "/hooks/0", "'oneOf' failed, subschemas 0, 2 matched"},
	{"a pebble-notice with a key", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - pebble-notice: {key: example.com/x}\n", "/hooks/0/pebble-notice", "additional properties 'key' not allowed"},
	{"a pebble-notice's socket as a list", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - pebble-notice: {socket: [/run/pebble.socket]}\n", "/hooks/0/pebble-notice/socket", "got array, want boolean or number or string"},
	{"a hook on an unknown event", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - {on: [check-flapped], exec: [true]}\n", "/hooks/0/on", "'check-flapped' does not match"},
	{"a webhook without its url", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - {on: stopping, webhook: {method: PUT}}\n", "/hooks/0/webhook", "missing property 'url'"},
	{"a webhook that retries 11 times", "checks:\n  up: {heartbeat: {ttl: 1m}}\nhooks:\n  - {on: stopping, webhook: {url: http://localhost/, retries: 11}}\n", "/hooks/0/webhook/retries", "maximum: got 11, want 10"},
	{"a bad restart", "service: {command: [sleep, \"1\"], restart: sometimes}\n", "/service/restart", "value must be one of 'never', 'on-failure', 'always'"},
	{"an unknown stop-signal", "service: {command: [sleep, \"1\"], stop-signal: SIGFOO}\n", "/service/stop-signal", "'SIGFOO' does not match"},
	{"a notification-fd of standard error", "service: {command: [sleep, \"1\"], notification-fd: 2}\n", "/service/notification-fd", "minimum: got 2, want 3"},
	{"an unknown key of a backoff", "service: {command: [sleep, \"1\"], backoff: {first: 1s}}\n", "/service/backoff", "additional properties 'first' not allowed"},
	{"a misspelt component type", "checks:\n  db: {tcp: {address: \"localhost:5432\"}, component-type: databse}\n", "/checks/db/component-type", "'databse' does not match"},
	{"an unknown key of service-info", "service-info: {name: web}\nchecks:\n  up: {heartbeat: {ttl: 1m}}\n", "/service-info", "additional properties 'name' not allowed"},
	{"nothing to tell Kubernetes", "kubernetes: {events: false}\nchecks:\n  up: {heartbeat: {ttl: 1m}}\n", "/kubernetes", "'not' failed"},
}

// The schema refuses every file of bad, and so does the loader, where the
// case says: each is a rule that both say.
func TestTheSchemaRefusesWhatItSays(t *testing.T) {
	for _, tc := range bad {
		_, err := config.Parse("vitals.yaml", []byte(tc.yaml), noEnv, kinds.All)
		var errs config.Errors
		if !errors.As(err, &errs) {
			t.Errorf("%s: the loader accepts it (%v):\n%s", tc.name, err, tc.yaml)
			continue
		}
		if path := loaderPath(tc.at); !strings.HasPrefix(errs[0].Path, path) {
			t.Errorf("%s: the loader's error is not at %s: %v", tc.name, path, err)
		}
		err = schematest.Validate(tc.name, []byte(tc.yaml))
		if err == nil {
			t.Errorf("%s: the schema accepts it:\n%s", tc.name, tc.yaml)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: the schema's error does not say %q: %v", tc.name, tc.says, err)
		}
	}
}

// An editor checks a layer as a file of its own: the entries that merge
// over an earlier layer's, or remove one, follow the schema, though the
// loader takes them only over an earlier layer that gives the names; an
// entry that is neither a check nor one of those does not.
func TestTheSchemaTakesALayersEntries(t *testing.T) {
	layer := `checks:
  a: {override: merge, period: 5s}
  b: {override: replace}
  c: {override: replace, tcp: {address: "localhost:1"}}
  d: {tcp: {address: "localhost:1"}}
services:
  web: {override: merge, env: {A: "1"}}
  old: {override: replace}
`
	base := "checks:\n  a: {tcp: {address: \"localhost:1\"}}\n  b: {tcp: {address: \"localhost:1\"}}\n  c: {heartbeat: {ttl: 1m}}\n" +
		"services:\n  web: {command: [web]}\n  old: {command: [old]}\n"
	if _, err := config.ParseLayers([]config.Layer{{File: "001.yaml", Data: []byte(base)}, {File: "002.yaml", Data: []byte(layer)}}, noEnv, kinds.All); err != nil {
		t.Fatalf("the loader refuses the layer: %v", err)
	}
	if err := schematest.Validate("a layer", []byte(layer)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{
		"checks:\n  a: {override: replace, period: 5s}\n",
		"checks:\n  a: {override: merged, period: 5s}\n",
		"checks:\n  a: {period: 5s}\n",
	} {
		if schematest.Validate("a bad entry", []byte(bad)) == nil {
			t.Errorf("the schema accepts\n%s", bad)
		}
	}
}

// loaderPath is a JSON pointer as the loader writes the path: /hooks/0/on
// is hooks[0].on.
func loaderPath(pointer string) string {
	items := regexp.MustCompile(`/([0-9]+)`).ReplaceAllString(strings.TrimPrefix(pointer, "/"), "[$1]")
	return strings.ReplaceAll(items, "/", ".")
}
