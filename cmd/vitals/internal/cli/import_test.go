//go:build !vitals_probe

package cli

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
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
	if len(lines) != 6 {
		t.Errorf("stderr has %d lines, want 6 warnings:\n%s", len(lines), stderr)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "vitals import: warning: ") {
			t.Errorf("stderr line %q is not a warning", l)
		}
	}
	if !strings.Contains(stderr, `vitals import: warning: check "Media_Store" has startup: disabled`) {
		t.Errorf("stderr does not note startup: disabled:\n%s", stderr)
	}
}

func TestImportK8sReadsStdinAndChoosesTheContainer(t *testing.T) {
	pod, err := os.ReadFile("../importer/testdata/pod-two-containers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runImport(t, string(pod), "k8s", "-")
	if code != exitPass || !strings.HasPrefix(stdout, config.SchemaComment+"\n# Made by vitals import k8s from stdin: pod/api, containers api, envoy, migrate.\n") ||
		!strings.Contains(stderr, "vitals import: warning: pod/api has 3 containers (api, envoy, migrate), and vitals supervises one workload: ") {
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
