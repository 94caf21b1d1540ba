package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// nobody is the uid (and gid) the non-root runs take: distroless's and
// Debian's nobody.
const nobody = 65534

// nonRootPlace is a directory that uid nobody can reach, with a copy of the
// binary in it (the tests' build is in a directory only root can enter), and
// a temp directory anyone can write, as /tmp is (mode 1777). It is removed
// when the test ends.
func nonRootPlace(t *testing.T) (dir, binary, tmp string) {
	t.Helper()
	testenv.NeedRoot(t, "running as another user")
	dir, err := os.MkdirTemp("", "vitals-nonroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	b, err := os.ReadFile(vitals)
	must(t, err)
	binary, tmp = filepath.Join(dir, "vitals"), filepath.Join(dir, "tmp")
	must(t, os.WriteFile(binary, b, 0o755))
	must(t, os.Mkdir(tmp, 0o777))
	must(t, os.Chmod(tmp, 0o1777))
	return dir, binary, tmp
}

// nobodyArgs are setpriv's arguments that run binary with args as uid and
// gid nobody, with no other group.
func nobodyArgs(binary string, args ...string) []string {
	id := fmt.Sprint(nobody)
	return append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", binary}, args...)
}

// asNobody is a command that runs binary as nobody, in dir, with an
// environment of PATH and TMPDIR only (no XDG_RUNTIME_DIR: as in a
// container).
func asNobody(dir, tmp, binary string, args ...string) *exec.Cmd {
	cmd := exec.Command("setpriv", nobodyArgs(binary, args...)...)
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}
	return cmd
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// vitals run as uid 65534, in a working directory it cannot write and with
// no api: in its file, starts, serves /livez, and vitals checks as the same
// user finds its API with no flag (vitals validate --print says where): the socket is in the user's own 0700
// directory of the temp directory, nothing under /run.
func TestRunAsANonRootUserInAReadOnlyDirectoryServesItsAPIWhereChecksFindsIt(t *testing.T) {
	dir, binary, tmp := nonRootPlace(t)
	work := filepath.Join(dir, "work")
	must(t, os.Mkdir(work, 0o755))
	addr := freeAddr(t)
	must(t, os.WriteFile(filepath.Join(work, "vitals.yaml"), fmt.Appendf(nil, "listen: %s\nchecks:\n  hb: {heartbeat: {ttl: 1h}}\n", addr), 0o644))
	must(t, os.Chmod(work, 0o555)) // root's, read-only to nobody

	cmd := asNobody(work, tmp, binary, "run")
	logs := &vitalstest.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "/livez to answer 200", logs, func() bool {
		res, err := http.Get("http://" + addr + "/livez")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	// vitals's log is written by a queue of its own, which may not have
	// written the line yet when the endpoints answer.
	sock := filepath.Join(tmp, fmt.Sprintf("vitals-%d", nobody), "vitals.sock")
	waitFor(t, "the log to say the API is on "+sock, logs, func() bool { return strings.Contains(logs.String(), "api="+sock) })
	fi, err := os.Lstat(filepath.Dir(sock))
	must(t, err)
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != 0o700 || st.Uid != nobody {
		t.Errorf("%s: mode %v, uid %d; want 0700, uid %d", filepath.Dir(sock), fi.Mode(), st.Uid, nobody)
	}

	validate := asNobody(work, tmp, binary, "validate", "--print")
	if out, err := validate.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("api: %q\n", sock)) {
		t.Errorf("vitals validate --print as uid %d: %v\n%s\nwant api: %q", nobody, err, out, sock)
	}
	checks := asNobody(work, tmp, binary, "checks")
	out, err := checks.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "hb") {
		t.Fatalf("vitals checks as uid %d: %v\n%s\nvitals run's output:\n%s", nobody, err, out, logs)
	}
	beat := asNobody(work, tmp, binary, "beat", "hb")
	if out, err := beat.CombinedOutput(); err != nil {
		t.Fatalf("vitals beat as uid %d: %v\n%s", nobody, err, out)
	}

	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if code := exited(t, cmd); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0:\n%s", code, logs)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left after SIGTERM: %v", err)
	}
}

// An api: whose directory cannot be made is the file's fault: exit 2, with
// the file and the field, nothing started (the probe port stays free).
func TestRunSaysWhichFieldWhenTheAPISocketsDirectoryCannotBeMade(t *testing.T) {
	dir, binary, _ := nonRootPlace(t)
	rootOnly := filepath.Join(dir, "root-only")
	must(t, os.Mkdir(rootOnly, 0o755))
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		who, api string
		asNobody bool
		err      string
	}{
		{"uid 65534", filepath.Join(rootOnly, "vitals", "vitals.sock"), true, "permission denied"},
		{"uid 65534, the directory there", filepath.Join(rootOnly, "vitals.sock"), true, "permission denied"},
		{"root", filepath.Join(file, "vitals", "vitals.sock"), false, "not a directory"},
	} {
		addr := freeAddr(t)
		conf := filepath.Join(dir, "vitals.yaml")
		must(t, os.WriteFile(conf, fmt.Appendf(nil, "listen: %s\napi: %s\nchecks:\n  hb: {heartbeat: {ttl: 1h}}\n", addr, tc.api), 0o644))
		var r run
		if tc.asNobody {
			r = binaryRun(t, "setpriv", nobodyArgs(binary, "run", "-c", conf)...)
		} else {
			r = vitalsRun(t, "run", "-c", conf)
		}
		r.expect(t, 2, "", fmt.Sprintf("%s:2:6: api: %s: the socket's directory %s: ", conf, tc.api, filepath.Dir(tc.api)))
		if !strings.Contains(r.stderr, tc.err) || strings.Contains(r.stderr, "vitals running") {
			t.Errorf("%s: stderr %q: want %q, and nothing started", tc.who, r.stderr, tc.err)
		}
	}
}

// An api: where no socket can be made (in /proc, which takes no files,
// whether the directory given is missing or there) validates, as the file
// is right for another machine; vitals run finds it, and it is the file's
// fault all the same: exit 2, where the file gives api:, nothing started.
func TestRunSaysWhereTheFileGivesAnAPIWhereNoSocketCanBeMade(t *testing.T) {
	for _, api := range []string{"/proc/vitals-test/x.sock", "/proc/x.sock"} {
		conf := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  hb: {heartbeat: {ttl: 1h}}\n", freeAddr(t), api))
		vitalsRun(t, "validate", "-c", conf).expect(t, 0, "ok: ", "")
		r := vitalsRun(t, "run", "-c", conf)
		r.expect(t, 2, "", fmt.Sprintf("%s:2:6: api: %s: the socket's directory ", conf, api))
		if strings.Contains(r.stderr, "vitals running") {
			t.Errorf("stderr %q: want nothing started", r.stderr)
		}
	}
}

// A user who can write nowhere (a read-only root, no writable temp
// directory, no XDG_RUNTIME_DIR) and whose file gives no api: still gets the
// checks and the endpoints: the API is off, and vitals says so, while nothing
// needs it. A heartbeat check is beaten through the API, so a file with one
// is exit 2 naming the check and api:, nothing started.
func TestRunWithNowhereToPutTheSocketTurnsTheAPIOffUnlessAHeartbeatNeedsIt(t *testing.T) {
	dir, binary, _ := nonRootPlace(t)
	readOnlyTmp := filepath.Join(dir, "ro-tmp")
	must(t, os.Mkdir(readOnlyTmp, 0o755)) // root's: nobody cannot make its directory there
	addr := freeAddr(t)
	conf := filepath.Join(dir, "vitals.yaml")
	must(t, os.WriteFile(conf, fmt.Appendf(nil, "listen: %s\nchecks:\n  root: {file: {path: /}}\n", addr), 0o644))

	cmd := asNobody(dir, readOnlyTmp, binary, "run", "-c", conf)
	logs := &vitalstest.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "/readyz to answer 200", logs, func() bool {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	for _, want := range []string{"management API off", "an exec probe of vitals health fails", "api=off", "permission denied"} {
		waitFor(t, "the log to say "+want, logs, func() bool { return strings.Contains(logs.String(), want) })
	}
	checks := asNobody(dir, readOnlyTmp, binary, "checks")
	if out, err := checks.CombinedOutput(); err == nil {
		t.Errorf("vitals checks reached an API that is off:\n%s", out)
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if code := exited(t, cmd); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0:\n%s", code, logs)
	}

	addr = freeAddr(t)
	must(t, os.WriteFile(conf, fmt.Appendf(nil, "listen: %s\nchecks:\n  hb: {heartbeat: {ttl: 1h}}\n  root: {file: {path: /}}\n", addr), 0o644))
	r := binaryRun(t, "env", append([]string{"-i", "PATH=" + os.Getenv("PATH"), "TMPDIR=" + readOnlyTmp, "setpriv"}, nobodyArgs(binary, "run", "-c", conf)...)...)
	sock := filepath.Join(readOnlyTmp, fmt.Sprintf("vitals-%d", nobody), "vitals.sock")
	r.expect(t, 2, "", fmt.Sprintf("%s: the default api: %s: the socket's directory %s: ", conf, sock, filepath.Dir(sock)))
	if !strings.Contains(r.stderr, "heartbeat check hb is beaten through the management API") || strings.Contains(r.stderr, "vitals running") {
		t.Errorf("stderr %q: want it to name the heartbeat that needs the API, and nothing started", r.stderr)
	}
}
