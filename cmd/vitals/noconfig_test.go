package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// With no file (no -c, and no vitals.yaml where it runs), vitals run --
// COMMAND runs the command with no checks, serves the probe endpoints and
// the API on their defaults, and exits with the command's code. The
// defaults are a fixed port and a socket under /run, so the run gets a
// network and a /run of its own (user, network and mount namespaces).
func TestRunWithoutAFileSupervisesTheCommandOnTheDefaults(t *testing.T) {
	if err := exec.Command("unshare", "-rnm", "true").Run(); err != nil {
		testenv.Missing(t, "no user, network and mount namespaces here (unshare: %v), and the defaults are the machine's", err)
	}
	dir := t.TempDir()
	inside := `mount -t tmpfs none /run && ip link set lo up && cd "$2" && export V="$1" && exec "$1" run -- sh -c "$3"`
	workload := `curl -s -o /dev/null -w "readyz %{http_code}\n" http://127.0.0.1:8558/readyz; "$V" checks >/dev/null && echo the API answers; exit 3`
	r := binaryRun(t, "unshare", "-rnm", "sh", "-c", inside, "sh", vitals, dir, workload)
	r.expect(t, 3, "readyz 200\nthe API answers\n", "msg=\"vitals running\" component=vitals listen=[::]:8558 api=/run/vitals/vitals.sock checks=0")
	if strings.Contains(r.stderr, "config=") {
		t.Errorf("the log names a file:\n%s", r.stderr)
	}
	// Asked for by name, the file must be there; and with no command there
	// is nothing to run without it.
	r = binaryRun(t, "sh", "-c", `cd "$1" && exec "$2" run -c vitals.yaml -- true`, "sh", dir, vitals)
	r.expect(t, 2, "", "read configuration: open vitals.yaml: no such file or directory")
	r = binaryRun(t, "sh", "-c", `cd "$1" && exec "$2" run`, "sh", dir, vitals)
	r.expect(t, 2, "", "read configuration: open vitals.yaml: no such file or directory")
}
