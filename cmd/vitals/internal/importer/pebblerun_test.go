package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// runLayer is what the layer that runs vitals says, in the fields of
// Pebble's layer specification.
type runLayer struct {
	Summary  string                `yaml:"summary"`
	Services map[string]runService `yaml:"services"`
	Checks   map[string]runCheck   `yaml:"checks"`
}

type runService struct {
	Override       string            `yaml:"override"`
	Command        string            `yaml:"command"`
	Startup        string            `yaml:"startup"`
	KillDelay      string            `yaml:"kill-delay"`
	OnSuccess      string            `yaml:"on-success"`
	OnFailure      string            `yaml:"on-failure"`
	OnCheckFailure map[string]string `yaml:"on-check-failure"`
}

type runCheck struct {
	Override  string `yaml:"override"`
	Level     string `yaml:"level"`
	Period    string `yaml:"period"`
	Timeout   string `yaml:"timeout"`
	Threshold int    `yaml:"threshold"`
	HTTP      struct {
		URL string `yaml:"url"`
	} `yaml:"http"`
}

// vitalsChecks are the checks on vitals that every layer that runs it has,
// as docs/pebble.md shows them.
func vitalsChecks() map[string]runCheck {
	alive := runCheck{Override: "replace", Level: "alive", Period: "10s", Timeout: "3s", Threshold: 3}
	alive.HTTP.URL = "http://localhost:8558/livez"
	ready := runCheck{Override: "replace", Level: "ready", Period: "5s", Timeout: "3s", Threshold: 1}
	ready.HTTP.URL = "http://localhost:8558/readyz"
	return map[string]runCheck{"vitals-alive": alive, "vitals-ready": ready}
}

// vitalsService is vitals as a Pebble service, restarted when /livez fails.
func vitalsService(killDelay, onSuccess, onFailure string) runService {
	return runService{Override: "replace", Command: "vitals run -c vitals.yaml", Startup: "enabled", KillDelay: killDelay,
		OnSuccess: onSuccess, OnFailure: onFailure, OnCheckFailure: map[string]string{"vitals-alive": "restart"}}
}

// The layer that runs vitals takes the place of the layer imported: its one
// service's name, or vitals; a kill-delay past vitals.yaml's stop-timeouts,
// one after another at worst; a shutdown where the layer shut Pebble down.
// Without --layer, the file ends with it as comments, which read back as
// the layer.
func TestTheLayerThatRunsVitalsTakesTheImportedLayersPlace(t *testing.T) {
	for _, tt := range []struct {
		name  string
		layer []byte
		want  runLayer
	}{
		{"checks only", layer("checks:", "  c: {override: replace, level: alive, tcp: {port: 8080}}"),
			runLayer{Summary: "vitals with the services and checks of layer.yaml",
				Services: map[string]runService{"vitals": vitalsService("5s", "", "")}, Checks: vitalsChecks()}},
		{"one service, which shuts pebble down after a failure", layer(
			"services:",
			"  app: {override: replace, command: /bin/app, kill-delay: 8s, on-failure: shutdown}",
			"checks:",
			"  c: {override: replace, level: alive, tcp: {port: 8080}}"),
			runLayer{Summary: "vitals with the services and checks of layer.yaml",
				Services: map[string]runService{"app": vitalsService("13s", "", "shutdown")}, Checks: vitalsChecks()}},
		{"one service, which shuts pebble down after exit 0", layer(
			"services:",
			"  app: {override: replace, command: /bin/app, on-success: failure-shutdown}",
			"checks:",
			"  c: {override: replace, level: alive, tcp: {port: 8080}}"),
			runLayer{Summary: "vitals with the services and checks of layer.yaml",
				Services: map[string]runService{"app": vitalsService("10s", "shutdown", "")}, Checks: vitalsChecks()}},
		{"two services, a check shutting pebble down", read(t, "testdata/synapse-layer.yaml"),
			runLayer{Summary: "vitals with the services and checks of layer.yaml",
				Services: map[string]runService{"vitals": vitalsService("15s", "", "shutdown")}, Checks: vitalsChecks()}},
	} {
		r, err := Pebble("layer.yaml", tt.layer, "")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got runLayer
		if err := yaml.UnmarshalWithOptions(r.Layer, &got, yaml.DisallowUnknownField()); err != nil {
			t.Fatalf("%s: the layer does not read as one: %v\n%s", tt.name, err, r.Layer)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: the layer is\n%+v\nwant\n%+v", tt.name, got, tt.want)
		}

		// The file's end, without its "# ", is the layer without its
		// comment at the top.
		_, end, ok := strings.Cut(string(r.YAML), "\n# or give --layer FILE to have it in a file.\n#\n")
		if !ok {
			t.Fatalf("%s: the file does not end with the layer:\n%s", tt.name, r.YAML)
		}
		var uncommented strings.Builder
		for l := range strings.Lines(end) {
			uncommented.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
		}
		if want := string(r.Layer[strings.Index(string(r.Layer), "\nsummary:")+1:]); uncommented.String() != want {
			t.Errorf("%s: the file ends with\n%s\nwant the layer\n%s", tt.name, uncommented.String(), want)
		}
	}

	r, err := Pebble("layer.yaml", layer("checks:", "  c: {override: replace, level: alive, tcp: {port: 8080}}"), "layers/002-vitals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "\n\n# Pebble runs this vitals with the layer in layers/002-vitals.yaml.\n"; !strings.HasSuffix(string(r.YAML), want) || len(r.Layer) == 0 {
		t.Errorf("with a layer file, the file does not end with\n%s\nit is\n%s", want, r.YAML)
	}
}

// Pebble takes the layer that runs vitals, added over the layer imported:
// vitals's service takes the place of the layer's one, and the checks on
// vitals join the plan, as `pebble add` and `pebble plan` show.
func TestPebbleTakesTheLayerThatRunsVitals(t *testing.T) {
	imported := "summary: an app\n" +
		"services:\n" +
		"  app:\n" +
		"    override: replace\n" +
		"    command: /bin/sleep 1000\n" +
		"    kill-delay: 2s\n" +
		"    on-check-failure: {app-up: restart}\n" +
		"checks:\n" +
		"  app-up: {override: replace, level: alive, startup: disabled, tcp: {port: 1}}\n"
	p := vitalstest.StartPebble(t, imported)
	r, err := Pebble("001-app.yaml", []byte(imported), "")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "002-vitals.yaml")
	if err := os.WriteFile(file, r.Layer, 0o644); err != nil {
		t.Fatal(err)
	}
	p.CLI(t, "add", "vitals", file)
	var plan runLayer
	if err := yaml.Unmarshal([]byte(p.CLI(t, "plan")), &plan); err != nil {
		t.Fatal(err)
	}
	if want := vitalsService("7s", "", ""); !reflect.DeepEqual(plan.Services, map[string]runService{"app": want}) {
		t.Errorf("the plan's services are\n%+v\nwant app as vitals\n%+v", plan.Services, want)
	}
	for name, want := range vitalsChecks() {
		if got := plan.Checks[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("the plan's check %s is\n%+v\nwant\n%+v", name, got, want)
		}
	}
}
