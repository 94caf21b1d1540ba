package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// The notify kind through the binary: workloads that say they are ready the
// way daemons say it to systemd (the sd_notify client of
// internal/notify/testdata, a Python program's own, and Debian's
// systemd-notify) and to s6 (a shell writing a newline to its
// notification-fd).

// notifier is a vitals run whose workload is the sd_notify client as a
// daemon that says what the test tells it.
type notifier struct {
	logs            *vitalstest.Buffer
	addr, sock      string
	info, control   string // what the daemon says of itself, and the FIFO it reads commands from
	pid             int    // the daemon's, as its info says
	socket, usec    string // its NOTIFY_SOCKET and WATCHDOG_USEC
	watchdogPID     string
	previousInfoPID int
}

// sdnotify is the sd_notify client of internal/notify's tests.
func sdnotify(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		testenv.Missing(t, "no python3, the sd_notify client of these tests: %v", err)
	}
	path, err := filepath.Abs(filepath.Join("internal", "notify", "testdata", "sdnotify.py"))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runNotified runs vitals with the file of service and checks, listen and
// api filled in, and stops it with SIGTERM when the test ends, which stops
// its workload.
func runNotified(t *testing.T, service, checks string) (logs *vitalstest.Buffer, addr, sock string) {
	t.Helper()
	addr, sock = freeAddr(t), vitalstest.SocketPath(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nservice: %s\nchecks:\n%s", addr, sock, service, checks))
	cmd, logs := runInBackground(t, os.Environ(), vitals, "run", "-c", path)
	t.Cleanup(func() { // before runInBackground's kill, which would leave the workload behind
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return logs, addr, sock
}

// startNotifier runs vitals with checks, its workload the daemon.
func startNotifier(t *testing.T, restart string, checks string) *notifier {
	t.Helper()
	py := sdnotify(t)
	dir := t.TempDir()
	n := &notifier{info: filepath.Join(dir, "info.json"), control: filepath.Join(dir, "control")}
	if err := syscall.Mkfifo(n.control, 0o600); err != nil {
		t.Fatal(err)
	}
	n.logs, n.addr, n.sock = runNotified(t, fmt.Sprintf("{command: [python3, %q, --daemon, %q, %q], restart: %s, backoff: {initial: 10ms, max: 10ms}}",
		py, n.info, n.control, restart), checks)
	n.started(t)
	return n
}

// started waits for a run of the daemon other than the one before to say
// what it is.
func (n *notifier) started(t *testing.T) {
	t.Helper()
	var info struct {
		PID                                        int
		NotifySocket, WatchdogUsec, WatchdogPIDEnv string
	}
	waitFor(t, "the workload's info", n.logs, func() bool {
		b, err := os.ReadFile(n.info)
		if err != nil {
			return false
		}
		var raw map[string]any
		if json.Unmarshal(b, &raw) != nil {
			return false
		}
		info.PID = int(raw["pid"].(float64))
		info.NotifySocket, info.WatchdogUsec, info.WatchdogPIDEnv = raw["NOTIFY_SOCKET"].(string), raw["WATCHDOG_USEC"].(string), raw["WATCHDOG_PID"].(string)
		return info.PID != n.previousInfoPID
	})
	n.pid, n.socket, n.usec, n.watchdogPID, n.previousInfoPID = info.PID, info.NotifySocket, info.WatchdogUsec, info.WatchdogPIDEnv, info.PID
}

// tell has the daemon do what line says (send ASSIGNMENT..., exit CODE).
func (n *notifier) tell(t *testing.T, line string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(n.control, os.O_WRONLY, 0) // waits for the daemon to read
		if err == nil {
			_, err = f.WriteString(line + "\n")
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the workload did not take %q within 20s; output:\n%s", line, n.logs)
	}
}

// probe is the status and body of GET path on the probe endpoints.
func probe(addr, path string) (int, string) {
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// waitProbe waits until GET path answers code with a body that has want.
func waitProbe(t *testing.T, logs *vitalstest.Buffer, addr, path string, code int, want string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s to answer %d with %q", path, code, want), logs, func() bool {
		got, body := probe(addr, path)
		return got == code && strings.Contains(body, want)
	})
}

func TestAWorkloadThatSaysItIsReadyLatePassesStartupThenAndOnlyItsWordCounts(t *testing.T) {
	n := startNotifier(t, "never", "  up: {level: startup, notify: {}, period: 100ms}\n  alive: {level: live, notify: {watchdog: 1h}}\n")
	if n.socket == "" || n.usec != "3600000000" || n.watchdogPID != strconv.Itoa(n.pid) {
		t.Fatalf("the workload was told NOTIFY_SOCKET=%q WATCHDOG_USEC=%q WATCHDOG_PID=%q, its pid %d; want a socket, an hour, and its pid",
			n.socket, n.usec, n.watchdogPID, n.pid)
	}
	// Open to a workload that drops its privileges: the credentials
	// decide whose word counts.
	if fi, err := os.Stat(filepath.Dir(n.socket)); err != nil || fi.Mode().Perm() != 0o711 {
		t.Fatalf("the socket's directory: %v, %v; want 0711", fi.Mode(), err)
	}
	// The test's own READY=1 is no word of the workload's.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.socket, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("READY=1\nSTATUS=said by another"))
	conn.Close()
	waitFor(t, "the outsider's message ignored", n.logs, func() bool {
		return strings.Contains(n.logs.String(), "its sender is no process of the workload")
	})
	n.tell(t, `send "STATUS=loading the rules"`)
	waitProbe(t, n.logs, n.addr, "/startupz?verbose", 503, "no READY=1 since the workload started")
	waitProbe(t, n.logs, n.addr, "/startupz?verbose", 503, "; status: loading the rules")
	n.tell(t, `send READY=1 "STATUS=serving 12 rules"`)
	waitProbe(t, n.logs, n.addr, "/startupz", 200, "ok")
	r := vitalsRun(t, "checks", "--api", n.sock)
	if r.code != 0 || !strings.Contains(r.stdout, "serving 12 rules") || strings.Contains(r.stdout, "said by another") {
		t.Fatalf("vitals checks: %+v; want the workload's STATUS=", r)
	}
	waitProbe(t, n.logs, n.addr, "/livez?verbose", 200, "[+]alive ok")
}

func TestAWatchdogThatIsNotFedFailsLivenessAndWATCHDOGTriggerFailsItAtOnce(t *testing.T) {
	// Their failure-threshold is 1: a watchdog that runs out fails them then.
	n := startNotifier(t, "never", "  stalled: {level: live, notify: {watchdog: 1500ms}}\n"+
		"  triggered: {level: live, notify: {watchdog: 1h}}\n")
	if n.usec != "1500000" {
		t.Fatalf("WATCHDOG_USEC=%q, want the shortest watchdog, 1.5s", n.usec)
	}
	n.tell(t, `send READY=1 "STATUS=working"`)
	waitProbe(t, n.logs, n.addr, "/livez?verbose", 503, "[-]stalled failed: no WATCHDOG=1 or READY=1 for 1.5s (watchdog 1.5s); status: working")
	n.tell(t, "send WATCHDOG=1")
	waitProbe(t, n.logs, n.addr, "/livez", 200, "ok")
	n.tell(t, `send WATCHDOG=trigger "STATUS=the rules engine is stuck"`)
	waitProbe(t, n.logs, n.addr, "/livez/triggered", 503, "the workload said WATCHDOG=trigger; status: the rules engine is stuck")
}

func TestARestartedWorkloadMustSayItIsReadyAgain(t *testing.T) {
	n := startNotifier(t, "always", "  up: {level: startup, notify: {}}\n")
	n.tell(t, "send READY=1")
	waitProbe(t, n.logs, n.addr, "/startupz", 200, "ok")
	n.tell(t, "exit 1")
	n.started(t)
	waitProbe(t, n.logs, n.addr, "/startupz/up", 503, "no READY=1 since the workload started")
	n.tell(t, "send READY=1")
	waitProbe(t, n.logs, n.addr, "/startupz", 200, "ok")
}

func TestSystemdNotifyInAShellWorkloadPassesItsNotifyCheck(t *testing.T) {
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		testenv.Missing(t, "no systemd-notify (Debian's systemd): %v", err)
	}
	gate := filepath.Join(t.TempDir(), "go")
	logs, addr, sock := runNotified(t, fmt.Sprintf(`{command: [sh, -c, "while [ ! -e %s ]; do sleep 0.01; done; systemd-notify --ready --status='from systemd-notify' && exec sleep 60"]}`, gate),
		"  up: {level: startup, notify: {}}\n")
	waitProbe(t, logs, addr, "/startupz", 503, "")
	os.WriteFile(gate, nil, 0o600)
	waitProbe(t, logs, addr, "/startupz", 200, "ok")
	if r := vitalsRun(t, "checks", "--api", sock); !strings.Contains(r.stdout, "from systemd-notify") {
		t.Fatalf("vitals checks: %+v", r)
	}
}

func TestAShellThatWritesANewlineToItsNotificationFDPassesItsNotifyCheck(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	logs, addr, _ := runNotified(t, fmt.Sprintf(`{command: [sh, -c, "while [ ! -e %s ]; do sleep 0.01; done; echo ready >&3; exec 3>&-; exec sleep 60"], notification-fd: 3}`, gate),
		"  up: {level: startup, notify: {}, period: 100ms}\n")
	waitProbe(t, logs, addr, "/startupz?verbose", 503, "no READY=1 or a newline on fd 3 since the workload started")
	os.WriteFile(gate, nil, 0o600)
	waitProbe(t, logs, addr, "/startupz", 200, "ok")
}

// A workload that drops its privileges before it says it is ready (gosu,
// su-exec, setpriv: a root vitals, a workload as another user) still
// reaches NOTIFY_SOCKET: the kernel's word on its pid decides, as with
// systemd, whose socket any process may write to.
func TestAWorkloadThatDropsItsPrivilegesIsStillHeard(t *testing.T) {
	testenv.NeedRoot(t, "a workload that drops its privileges")
	py := "/usr/bin/python3" // not a pyenv's, under a home nobody cannot enter
	if _, err := os.Stat(py); err != nil {
		testenv.Missing(t, "no %s for the sd_notify client: %v", py, err)
	}
	dir, err := os.MkdirTemp("", "vitals-notify-nobody") // t.TempDir's parent is closed to nobody
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	client := filepath.Join(dir, "sdnotify.py")
	b, err := os.ReadFile(sdnotify(t))
	must(t, err)
	must(t, os.WriteFile(client, b, 0o644))
	logs, addr, _ := runNotified(t, fmt.Sprintf(`{command: [setpriv, --reuid=65534, --regid=65534, --clear-groups, sh, -c, "%s %s --barrier READY=1 'STATUS=as nobody' && exec sleep 60"]}`, py, client),
		"  up: {level: startup, notify: {}, period: 100ms}\n")
	waitProbe(t, logs, addr, "/startupz", 200, "ok")
}
