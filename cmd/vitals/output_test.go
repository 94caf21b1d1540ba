package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// outputCommands are the commands that print a result, each as far as its
// flags are read: the path that its help names, the arguments it needs,
// whether it prints a table (and so takes wide), and whether only the full
// build has it.
var outputCommands = []struct {
	path  string
	args  []string
	table bool
	full  bool
}{
	{"version", nil, false, false},
	{"checks", nil, true, false},
	{"check", []string{"db"}, false, false},
	{"health", nil, false, false},
	{"events", nil, false, false},
	{"restart", nil, false, false},
	{"notify", []string{"example.com/config-reloaded"}, false, false},
	{"stop", []string{"db"}, false, false},
	{"start", []string{"db"}, false, false},
	{"hooks", nil, true, false},
	{"probe", []string{"http://localhost:1/"}, false, false},
	{"wait", []string{"http://localhost:1/"}, false, false},
	{"validate", nil, false, true},
	{"import pebble", []string{"layer.yaml"}, false, true},
	{"import k8s", []string{"deploy.yaml"}, false, true},
}

// Every command that prints a result refuses a value outside the one set
// alike, in both builds, before it does anything: exit 2, the flag and the
// set named, the usage hint.
func TestEveryCommandRefusesAnOutputOutsideTheSetAlike(t *testing.T) {
	for _, c := range outputCommands {
		set, bad := "text, json or yaml", []string{"xml", "table", "wide"}
		if c.table {
			set, bad = "text, wide, json or yaml", []string{"xml", "table"}
		}
		binaries := []string{vitals, vitalsProbe}
		if c.full {
			binaries = binaries[:1]
		}
		for _, binary := range binaries {
			for _, value := range bad {
				args := append(append(strings.Fields(c.path), c.args...), "-o", value)
				r := binaryRun(t, binary, args...)
				want := fmt.Sprintf("vitals: invalid argument %q for \"-o, --output\" flag: use %s\nRun 'vitals %s --help' for usage.\n", value, set, c.path)
				if r.code != 2 || r.stdout != "" || r.stderr != want {
					t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want 2 and %q", binary, args, r.code, r.stdout, r.stderr, want)
				}
			}
		}
	}
}

// The commands that need no agent print the same document in JSON and in
// YAML; a file that a command makes is the same in text and in YAML.
func TestTheOneShotCommandsPrintTheSameDocumentInJSONAndYAML(t *testing.T) {
	up := server(t, 200)
	good := writeConfig(t, "service-info: {service-id: checkout, version: 1.10}\nchecks:\n  web: {http: {url: \"http://localhost:8080/\"}}\n")
	layer := filepath.Join("internal", "importer", "testdata", "synapse-layer.yaml")
	manifest := filepath.Join("internal", "importer", "testdata", "web-deployment.yaml")
	for _, args := range [][]string{
		{"version"},
		{"validate", "-c", good},
		{"validate", "-c", good, "--print"},
		{"import", "pebble", layer},
		{"import", "k8s", manifest},
	} {
		j := vitalsRun(t, append(args, "-o", "json")...)
		y := vitalsRun(t, append(args, "-o", "yaml")...)
		if j.code != 0 || y.code != 0 {
			t.Fatalf("%v: exit %d and %d\n%s\n%s", args, j.code, y.code, j.stderr, y.stderr)
		}
		if got, want := vitalstest.Document(t, []byte(y.stdout), true), vitalstest.Document(t, []byte(j.stdout), false); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: YAML and JSON differ:\n%s\n%s", args, y.stdout, j.stdout)
		}
		if args[0] == "import" || args[len(args)-1] == "--print" {
			if text := vitalsRun(t, args...); text.stdout != y.stdout {
				t.Errorf("%v: text and YAML differ:\n%s\n%s", args, text.stdout, y.stdout)
			}
		}
	}
	// Each run has its own time and latency: the documents have the same
	// shape. A failing probe prints its document too.
	for _, args := range [][]string{
		{"probe", up},
		{"probe", "tcp://" + closedPort(t)},
		{"wait", up, "tcp://localhost:1", "--timeout", "200ms"},
	} {
		j := vitalsRun(t, append(args, "-o", "json")...)
		y := vitalsRun(t, append(args, "-o", "yaml")...)
		if j.code != y.code {
			t.Errorf("%v: exit %d in JSON, %d in YAML", args, j.code, y.code)
		}
		if got, want := shape(vitalstest.Document(t, []byte(y.stdout), true)), shape(vitalstest.Document(t, []byte(j.stdout), false)); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: YAML and JSON differ in shape:\n%s\n%s", args, y.stdout, j.stdout)
		}
	}
}

// The commands over the API print the same documents in JSON and YAML, an
// event stream as JSON lines or YAML documents; checks adds columns in wide.
func TestTheAgentsCommandsPrintTheSameDocumentInJSONAndYAML(t *testing.T) {
	_, logs, addr, ready := supervised(t, "", "sleep")
	sock := filepath.Join(filepath.Dir(ready), "vitals.sock") // where supervised puts it
	waitReadyzIs(t, addr, 200, logs)
	pidIn(t, ready)
	cli := func(args ...string) run {
		t.Helper()
		r := vitalsRun(t, append(args, "--api", sock)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		return r
	}
	header := func(table string) string { return strings.Join(strings.Fields(strings.SplitN(table, "\n", 2)[0]), " ") }
	if r := cli("checks"); header(r.stdout) != "NAME LEVEL KIND STATUS FOR RUNS LAST" {
		t.Errorf("checks:\n%s", r.stdout)
	}
	if r := cli("checks", "-o", "wide"); header(r.stdout) != "NAME LEVEL KIND STATUS FOR RUNS PASSED FAILED PERIOD TIMEOUT LAST RUN TOOK LAST" {
		t.Errorf("checks -o wide:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"checks"}, {"check", "ok"}, {"health"}, {"restart"}, {"notify", "leader-elected", "node=a"},
		{"stop", "ok"}, {"start", "ok"}, {"hooks"}} {
		j, y := cli(append(args, "-o", "json")...), cli(append(args, "-o", "yaml")...)
		if got, want := shape(vitalstest.Document(t, []byte(y.stdout), true)), shape(vitalstest.Document(t, []byte(j.stdout), false)); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: YAML and JSON differ in shape:\n%s\n%s", args, y.stdout, j.stdout)
		}
	}
	// The events kept are the same in both, one JSON object a line, one
	// YAML document each; the later run may have more.
	j, y := cli("events", "-o", "json"), cli("events", "-o", "yaml")
	lines := strings.Split(strings.TrimSuffix(j.stdout, "\n"), "\n")
	docs := strings.Split(strings.TrimPrefix(y.stdout, "---\n"), "---\n")
	if len(lines) < 3 || len(docs) < len(lines) {
		t.Fatalf("%d JSON lines, %d YAML documents:\n%s\n%s", len(lines), len(docs), j.stdout, y.stdout)
	}
	for i, line := range lines {
		if got, want := vitalstest.Document(t, []byte(docs[i]), true), vitalstest.Document(t, []byte(line), false); !reflect.DeepEqual(got, want) {
			t.Errorf("event %d: YAML %s, JSON %s", i, docs[i], line)
		}
	}
}

// shape is a document without its scalars' values: its keys, its nesting,
// the shapes its lists hold, and the type of each scalar.
func shape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = shape(e)
		}
		return m
	case []any:
		// A list's shape is the shapes of its elements, each once: the
		// later of two runs may hold more results in a history.
		var l []any
		for _, e := range x {
			if s := shape(e); !slices.ContainsFunc(l, func(o any) bool { return reflect.DeepEqual(o, s) }) {
				l = append(l, s)
			}
		}
		return l
	}
	return fmt.Sprintf("%T", v)
}
