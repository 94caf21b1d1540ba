package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// checksListed is the agent's checks as vitals checks -o json lists them:
// each name with its period.
func (a *agent) checksListed(t *testing.T) string {
	t.Helper()
	r := a.vitals(t, "checks", "-o", "json")
	if r.code != 0 {
		t.Fatalf("vitals checks: exit %d: %s", r.code, r.stderr)
	}
	var list []client.Check
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("vitals checks -o json: %v\n%s", err, r.stdout)
	}
	var out []string
	for _, ch := range list {
		out = append(out, fmt.Sprintf("%s %v", ch.Name, time.Duration(ch.Period)))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// vitals run -c DIR runs the merge of the directory's files, in name order:
// vitals checks lists it. With --watch, a layer changed, a layer added and a
// layer removed are each applied, and a layer that does not merge is refused
// in its own file. vitals validate --print shows the merge, each value with
// where a layer gives it; -c given twice reads the same as the directory.
func TestADirectoryOfLayersRunsAsTheirMergeAndReloadsEachLayer(t *testing.T) {
	a := &agent{addr: freeAddr(t), dir: t.TempDir(), logs: &vitalstest.Buffer{}, stdout: &vitalstest.Buffer{}}
	a.sock = filepath.Join(a.dir, "vitals.sock")
	layers := t.TempDir()
	exists := os.Args[0] // a file that is there
	base, prod, more := filepath.Join(layers, "001-base.yaml"), filepath.Join(layers, "002-prod.yaml"), filepath.Join(layers, "003-more.yml")
	a.writeIn(t, base, a.header()+fmt.Sprintf(`checks:
  a: {file: {path: %s}, period: 1s}
  b: {file: {path: %s}, period: 50ms}
`, exists, exists))
	a.writeIn(t, prod, fmt.Sprintf(`checks:
  a: {override: merge, period: 50ms}
  b: {override: replace}
  c: {file: {path: %s}, period: 50ms}
`, exists))
	a.cmd = exec.Command(vitals, "run", "-c", layers, "--watch")
	a.cmd.Stderr, a.cmd.Stdout = a.logs, a.stdout
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
	waitFor(t, "the API", a.logs, func() bool { _, err := os.Stat(a.sock); return err == nil })
	if got, want := a.checksListed(t), "a 50ms, c 50ms"; got != want {
		t.Errorf("checks %q, want the merge: %q", got, want)
	}

	r := vitalsRun(t, "validate", "-c", layers, "--print")
	for _, want := range []string{
		"\n  a:  # " + base + ":4, " + prod + ":2\n",
		"\n    file: {path: " + exists + "}  # " + base + ":4\n",
		"\n    period: 50ms  # " + prod + ":2\n",
		"\n    initial-delay: 0s\n",
		"\n  c:  # " + prod + ":4\n",
	} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("vitals validate --print: exit %d, no %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "\n  b:") {
		t.Errorf("vitals validate --print shows b, which 002-prod.yaml removes:\n%s", r.stdout)
	}
	vitalsRun(t, "validate", "-c", base, "-c", prod).expect(t, 0, "ok: "+base+", "+prod+": 2 checks\n", "")

	// A layer changed: its check comes back, the other retimed.
	a.writeIn(t, prod, "checks:\n  a: {override: merge, period: 100ms}\n")
	waitFor(t, "002-prod.yaml's change", a.logs, func() bool { return a.checksListed(t) == "a 100ms, b 50ms" })

	// A layer added, then removed.
	a.writeIn(t, more, fmt.Sprintf("checks:\n  d: {file: {path: %s}, period: 50ms}\n", exists))
	waitFor(t, "003-more.yml's check", a.logs, func() bool { return a.checksListed(t) == "a 100ms, b 50ms, d 50ms" })
	if err := os.Remove(more); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "003-more.yml's removal", a.logs, func() bool { return a.checksListed(t) == "a 100ms, b 50ms" })

	// A layer that gives a check again without override: refused, said in
	// its file, and nothing changes.
	a.writeIn(t, more, fmt.Sprintf("checks:\n  b: {file: {path: %s}, period: 1s}\n", exists))
	want := more + ":2:3: checks.b: an earlier layer gives it too (" + base + ":5): say override: merge"
	a.waitEvent(t, "config-rejected", func(e health.Event) bool {
		return e.Type == health.EventConfigRejected && strings.Contains(e.Output, want)
	})
	if got := a.checksListed(t); got != "a 100ms, b 50ms" {
		t.Errorf("checks %q after a refused layer", got)
	}
	r = vitalsRun(t, "validate", "-c", layers)
	if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("vitals validate of the refused layer: exit %d, %q; want 2 and %q…", r.code, r.stderr, want)
	}
}
