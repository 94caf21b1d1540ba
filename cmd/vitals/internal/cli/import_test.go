//go:build !vitals_probe

package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/importer"
)

// runImport runs vitals import with args as the command line would, and
// says what Main's mapping of its error exits with.
func runImport(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newImport(&out, &errOut)
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	var bad configError
	switch {
	case err == nil:
		code = exitPass
	case errors.As(err, &bad):
		errOut.WriteString(bad.Error() + "\n") // as Main writes it
		code = exitUsage
	case errors.As(err, new(failed)):
		code = exitFail
	default:
		errOut.WriteString("vitals: " + err.Error() + "\n")
		code = exitUsage
	}
	return out.String(), errOut.String(), code
}

func TestImportPebbleWritesTheFileOnStdoutAndWarningsOnStderr(t *testing.T) {
	stdout, stderr, code := runImport(t, "", "pebble", "../importer/testdata/synapse-layer.yaml")
	want, err := os.ReadFile("../importer/testdata/synapse-layer.vitals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if code != exitPass || stdout != string(want) {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s", code, stdout, want)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 5 {
		t.Errorf("stderr has %d lines, want 5 warnings:\n%s", len(lines), stderr)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "vitals import: warning: ") {
			t.Errorf("stderr line %q is not a warning", l)
		}
	}
	if !strings.Contains(stderr, `vitals import: warning: service "synapse" runs as user "synapse" in Pebble`) {
		t.Errorf("stderr does not note the service's user:\n%s", stderr)
	}
}

// --layer FILE writes the Pebble layer that runs this vitals to FILE, and
// the file says where it is; without it, the file ends with the layer as
// comments. --layer never overwrites the layer read.
func TestImportPebbleWritesTheLayerThatRunsVitalsWhereLayerSays(t *testing.T) {
	const source = "../importer/testdata/worker-layer.yaml"
	layer := filepath.Join(t.TempDir(), "002-vitals.yaml")
	stdout, stderr, code := runImport(t, "", "pebble", source, "--layer", layer)
	if code != exitPass || !strings.HasSuffix(stdout, "\n# Pebble runs this vitals with the layer in "+layer+".\n") {
		t.Fatalf("--layer: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	r, err := importer.Pebble("worker-layer.yaml", data, layer)
	if err != nil {
		t.Fatal(err)
	}
	if written, err := os.ReadFile(layer); err != nil || string(written) != string(r.Layer) {
		t.Errorf("--layer wrote %q (%v), want\n%s", written, err, r.Layer)
	}

	stdout, _, code = runImport(t, "", "pebble", source)
	if code != exitPass || !strings.Contains(stdout, "\n# or give --layer FILE to have it in a file.\n#\n# summary: ") ||
		!strings.HasSuffix(stdout, "\n#       url: http://localhost:8558/readyz\n") {
		t.Errorf("no --layer: exit %d, the file does not end with the layer:\n%s", code, stdout)
	}

	for _, tt := range []struct {
		layer, want string
	}{
		{source, "vitals import: --layer " + source + " is the layer read: give another file\n"},
		{filepath.Join(t.TempDir(), "no-such-dir", "l.yaml"), "vitals import: --layer: open "},
	} {
		stdout, stderr, code := runImport(t, "", "pebble", source, "--layer", tt.layer)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:], tt.want) {
			t.Errorf("--layer %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.layer, code, stdout, stderr, tt.want)
		}
	}
	if before, err := os.ReadFile(source); err != nil || string(before) != string(data) {
		t.Errorf("the layer read was overwritten (%v)", err)
	}
}

// The help of each import says what it carries over.
func TestImportHelpSaysWhatIsCarriedOver(t *testing.T) {
	for _, tt := range []struct {
		command string
		want    []string
	}{
		{"pebble", []string{"--layer FILE", "restart-rules:", "service: NAME", "startup: disabled", "vitals-alive", "vitals-ready"}},
		{"k8s", []string{"restartPolicyRules", "KEP-5307", "terminationGracePeriodSeconds", "stop-timeout"}},
	} {
		stdout, stderr, code := runImport(t, "", tt.command, "--help")
		help := stdout + stderr
		for _, w := range tt.want {
			if code != exitPass || !strings.Contains(strings.Join(strings.Fields(help), " "), w) {
				t.Errorf("vitals import %s --help (exit %d) does not say %q:\n%s", tt.command, code, w, help)
			}
		}
	}
}

func TestImportK8sReadsStdinAndChoosesTheContainer(t *testing.T) {
	pod, err := os.ReadFile("../importer/testdata/pod-two-containers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runImport(t, string(pod), "k8s", "-")
	if code != exitPass || !strings.HasPrefix(stdout, config.SchemaComment+"\n# Made by vitals import k8s from stdin: pod/api, containers api, envoy, migrate.\n") ||
		!strings.Contains(stderr, "vitals import: warning: pod/api has 3 containers (api, envoy, migrate), and vitals runs in one of them (each has an image of its own): ") {
		t.Fatalf("no --container: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runImport(t, string(pod), "k8s", "-", "--container", "envoy")
	if code != exitPass || !strings.HasPrefix(stdout, config.SchemaComment+"\n# Made by vitals import k8s from stdin: pod/api, container envoy.\n") || stderr != "" {
		t.Fatalf("--container envoy: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestImportBadInputExitsTwoSayingWhy(t *testing.T) {
	for _, tt := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"pebble", "no-such-layer.yaml"}, "vitals import: open no-such-layer.yaml: no such file or directory\n"},
		{"checks: [", []string{"pebble", "-"}, "vitals import: stdin:1:9: not YAML: sequence end token ']' not found\n"},
		{"kind: Pod\nspec: {containers: [{name: app}]}\n", []string{"k8s", "-"},
			`vitals import: stdin:2:22: spec.containers[0]: container "app" of pod has no startupProbe, livenessProbe or readinessProbe` + "\n"},
		{"kind: Pod\nspec:\n  containers:\n    - name: app\n      livenessProbe: {httpGet: {port: web}}\n", []string{"k8s", "-"},
			`vitals import: warning: app-live: left out: httpGet port "web" is not a port of container "app"` + "\n" +
				`vitals import: stdin: no probe of container "app" could be carried over` + "\n"},
		{strings.Repeat("[", 100000), []string{"k8s", "-"}, "vitals import: stdin:1:65: not a manifest or a layer: YAML nested deeper than 64 levels\n"},
		{strings.Repeat("#", config.MaxFileSize+1), []string{"pebble", "-"},
			"vitals import: stdin: larger than 4 MiB: is it a Pebble layer or a manifest? (it is read no further)\n"},
		{"", []string{"k8s"}, "vitals: accepts 1 arg(s), received 0\n"},
		{"", []string{"pebble", "a.yaml", "b.yaml"}, "vitals: accepts 1 arg(s), received 2\n"},
		{"", nil, "vitals: say what to import from: vitals import pebble FILE, or vitals import k8s FILE\n"},
		{"", []string{"docker", "compose.yaml"}, `vitals: unknown command "docker" for "import"` + "\n"},
	} {
		stdout, stderr, code := runImport(t, tt.stdin, tt.args...)
		if code != exitUsage || stdout != "" || stderr != tt.want {
			t.Errorf("vitals import %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}
