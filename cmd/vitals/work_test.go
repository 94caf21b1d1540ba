package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// fedAgent is vitals run with checks that its workload, a shell script,
// feeds through the management API: its vitals commands find vitals on
// PATH, and the API in $VITALS_API, as the test's do.
type fedAgent struct {
	addr string // the probe endpoints
	env  []string
	logs *vitalstest.Buffer
}

// startFed runs vitals run with checks (lines of the file's checks:) and
// the workload sh -c script, until the test ends.
func startFed(t *testing.T, checks, script string) *fedAgent {
	t.Helper()
	f := &fedAgent{addr: freeAddr(t)}
	sock := vitalstest.SocketPath(t)
	f.env = append(os.Environ(), "VITALS_API="+sock, "PATH="+filepath.Dir(vitals)+":"+os.Getenv("PATH"))
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n%s", f.addr, sock, checks))
	var cmd *exec.Cmd
	cmd, f.logs = runInBackground(t, f.env, vitals, "run", "-c", path, "--", "sh", "-c", script)
	t.Cleanup(func() { // before runInBackground's kill: vitals stops its workload
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	waitProbe(t, f.logs, f.addr, "/livez", 200, "ok")
	return f
}

// vitals runs a vitals command with the agent's environment.
func (f *fedAgent) vitals(t *testing.T, args ...string) run {
	t.Helper()
	cmd := exec.Command(vitals, args...)
	cmd.Env = f.env
	return runToEnd(t, cmd)
}

// A workload written in shell says through vitals beat what it finds: a
// failure fails its heartbeat at once, with its words, and a warning warns.
func TestAShellWorkloadSaysThroughVitalsBeatThatItFails(t *testing.T) {
	f := startFed(t, "  disk: {level: live, heartbeat: {ttl: 1h}}\n",
		`vitals beat disk --status fail --output "disk full: /data at 100%" && exec sleep 300`)
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 503, "[-]disk failed: disk full: /data at 100%")

	f.vitals(t, "beat", "disk", "--status", "warn", "--output", "disk at 85%", "--value", "85", "--unit", "percent").expect(t, 0, "", "")
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 200, "[+]disk warn: disk at 85%")
	waitProbe(t, f.logs, f.addr, "/livez?format=json", 200, `"status":"warn","time":`)
	if _, body := probe(f.addr, "/livez?format=json"); !strings.Contains(body, `"output":"disk at 85%","observedValue":85,"observedUnit":"percent"`) {
		t.Fatalf("health+json: %s", body)
	}
	f.vitals(t, "beat", "disk").expect(t, 0, "", "")
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 200, "[+]disk ok")

	f.vitals(t, "beat", "disk", "--status", "down").expect(t, 2, "", `vitals: --status "down": want pass, warn or fail`)
	f.vitals(t, "beat", "disk", "--value", "85").expect(t, 2, "", "vitals: --value needs its --unit")
}

// vitals work run makes a command a unit of work of a watchdog: the check
// fails while the command runs longer than the limit, naming the unit, and
// passes once it ends, however it ends; vitals work run exits with the
// command's code.
func TestWorkRunFailsAWatchdogWhileItsCommandOverrunsAndEndsItsUnitHoweverItEnds(t *testing.T) {
	f := startFed(t, "  jobs: {level: live, watchdog: {limit: 1s}}\n", "exec sleep 300")

	hung := exec.Command(vitals, "work", "run", "jobs", "--", "sleep", "300")
	hung.Env = f.env
	if err := hung.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hung.Process.Kill(); hung.Wait() })
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 503,
		"[-]jobs failed: 1 of 1 units of work have run longer than 1s; the oldest, unit 1, began ")
	// SIGTERM to vitals work run reaches the command, and the unit ends
	// with it.
	hung.Process.Signal(syscall.SIGTERM)
	if code := exited(t, hung); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("vitals work run exited %d, want sleep's 143", code)
	}
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 200, "[+]jobs ok")

	f.vitals(t, "work", "run", "jobs", "--", "sh", "-c", "echo done; exit 3").expect(t, 3, "done\n", "")
	f.vitals(t, "work", "end", "jobs", "2").expect(t, 1, "",
		`vitals work end: no unit of work 2 is running on check "jobs": it has ended, or the workload has restarted since it began`)

	// Nothing runs when no unit can begin.
	f.vitals(t, "work", "run", "nope", "--", "sh", "-c", "echo ran").expect(t, 2, "", `vitals: no such check "nope"`)
	if r := f.vitals(t, "work", "run", "nope", "--", "sh", "-c", "echo ran"); r.stdout != "" {
		t.Fatalf("the command ran with no unit of work: %q", r.stdout)
	}
	f.vitals(t, "work", "run", "jobs", "--", "no-such-command").expect(t, 127, "", `vitals work run: exec: "no-such-command": executable file not found in $PATH`)
	f.vitals(t, "work", "run", "jobs", "sleep", "1").expect(t, 2, "", "want NAME, then the command after --")
}

// The units of work of a watchdog belong to the workload's run: a restart
// ends them, as its checks start over.
func TestARestartOfTheWorkloadEndsItsUnitsOfWork(t *testing.T) {
	f := startFed(t, "  jobs: {level: live, watchdog: {limit: 1s}}\n", "exec sleep 300")
	f.vitals(t, "work", "begin", "jobs").expect(t, 0, "1\n", "")
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 503, "the oldest, unit 1, began")
	f.vitals(t, "restart").expect(t, 0, "restarted sh: pid ", "")
	waitProbe(t, f.logs, f.addr, "/livez?verbose", 200, "[+]jobs ok")
	f.vitals(t, "work", "end", "jobs", "1").expect(t, 1, "", "no unit of work 1 is running on check \"jobs\"")
	f.vitals(t, "work", "begin", "jobs").expect(t, 0, "2\n", "") // an id is never given twice
	f.vitals(t, "work", "end", "jobs", "2").expect(t, 0, "", "")
	f.vitals(t, "work", "begin", "peer").expect(t, 2, "", `vitals: no such check "peer"`)
}
