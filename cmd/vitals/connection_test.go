package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
)

// broker is a TCP server on loopback that holds every connection it
// accepts, as a message broker does, until it stops.
type broker struct {
	addr  string
	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// startBroker starts a broker on addr (127.0.0.1:0 for any port); it stops
// when the test ends.
func startBroker(t *testing.T, addr string) *broker {
	t.Helper()
	b := &broker{addr: addr}
	b.start(t)
	t.Cleanup(b.stop)
	return b
}

func (b *broker) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", b.addr)
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.ln, b.addr = ln, ln.Addr().String()
	b.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
		}
	}()
}

// stop closes the listener and every connection, as a broker that goes
// down does.
func (b *broker) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ln.Close()
	for _, c := range b.conns {
		c.Close()
	}
	b.conns = nil
}

func (b *broker) port() string { return b.addr[strings.LastIndex(b.addr, ":")+1:] }

// comm is the name the tests' workloads have, this test binary's.
var comm = filepath.Base(os.Args[0])

// A connection:// or a listening:// target counts the sockets of the
// processes its flags name, or of any process of this network namespace,
// as ss does; its output says how many, to where, held by whom.
func TestConnectionAndListeningTargetsCountTheSocketsOfProcesses(t *testing.T) {
	mq := startBroker(t, "127.0.0.1:0")
	ready := filepath.Join(t.TempDir(), "ready")
	workload := workloadtest.Command("connect", ready, mq.addr)
	workloadtest.Start(t, workload)
	pid := strconv.Itoa(workloadtest.WaitPID(t, ready))
	heldBy := fmt.Sprintf("1 connection to %s, held by pid %s (%s)", mq.addr, pid, comm)

	vitalsRun(t, "probe", "-v", "connection://"+mq.addr).expect(t, 0,
		"ok: connection "+mq.addr+": 1 connection to "+mq.addr+", in this network namespace\n", "")
	vitalsRun(t, "probe", "-v", "connection://"+mq.addr, "--pid-file", ready).expect(t, 0, "ok: connection "+mq.addr+": "+heldBy+"\n", "")
	vitalsRun(t, "probe", "-v", "connection://"+mq.addr, "--pid", pid).expect(t, 0, "ok: connection "+mq.addr+": "+heldBy+"\n", "")
	vitalsRun(t, "probe", "-v", "connection://*:"+mq.port(), "--process", comm).expect(t, 0, "ok: connection *:"+mq.port()+": "+heldBy+"\n", "")
	vitalsRun(t, "probe", "connection://localhost:"+mq.port(), "--pid", pid, "--min", "2").expect(t, 1, "",
		"connection localhost:"+mq.port()+": "+heldBy+"; want 2\n")
	idle := filepath.Join(t.TempDir(), "ready")
	workloadtest.Start(t, workloadtest.Command("sleep", idle))
	idlePID := workloadtest.WaitPID(t, idle)
	vitalsRun(t, "probe", "connection://"+mq.addr, "--pid-file", idle).expect(t, 1, "",
		fmt.Sprintf("connection %s: no connection to %s among pid %d (%s); want 1\n", mq.addr, mq.addr, idlePID, comm))

	// Its observed value is the count, with its unit.
	r := vitalsRun(t, "probe", "connection://"+mq.addr, "--pid", pid, "-o", "json")
	var got struct {
		Kind, Output, ObservedUnit string
		OK                         bool
		ObservedValue              float64
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v: %s", r.code, err, r.stdout)
	}
	if got.Kind != "connection" || !got.OK || got.ObservedValue != 1 || got.ObservedUnit != "connections" || got.Output != heldBy {
		t.Errorf("JSON %+v", got)
	}

	// The broker listens; the workload does not.
	vitalsRun(t, "probe", "-v", "listening://:"+mq.port(), "--pid", strconv.Itoa(os.Getpid())).expect(t, 0,
		fmt.Sprintf("ok: listening :%s: listening on %s, by pid %d (%s)\n", mq.port(), mq.addr, os.Getpid(), comm), "")
	vitalsRun(t, "probe", "-v", "listening://127.0.0.1:"+mq.port()).expect(t, 0,
		fmt.Sprintf("ok: listening %s: listening on %s, in this network namespace\n", mq.addr, mq.addr), "")
	vitalsRun(t, "probe", "listening://0.0.0.0:"+mq.port()).expect(t, 1, "",
		fmt.Sprintf("listening 0.0.0.0:%s: nothing listens on 0.0.0.0:%s in this network namespace; on %s only\n", mq.port(), mq.port(), mq.addr))
	vitalsRun(t, "probe", "listening://:"+mq.port(), "--pid-file", ready).expect(t, 1, "",
		fmt.Sprintf("listening :%s: nothing listens on port %s among pid %s (%s)\n", mq.port(), mq.port(), pid, comm))

	// vitals wait waits for a connection to be made, to a broker that
	// comes up late.
	late := startBroker(t, "127.0.0.1:0")
	late.stop()
	ready = filepath.Join(t.TempDir(), "ready")
	workloadtest.Start(t, workloadtest.Command("connect", ready, late.addr))
	wait := exec.Command(vitals, "wait", "connection://"+late.addr, "--process", comm, "--interval", "50ms", "--timeout", "20s")
	var out bytes.Buffer
	wait.Stdout, wait.Stderr = &out, &out
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	late.start(t)
	if err := wait.Wait(); err != nil {
		t.Fatalf("vitals wait: %v\n%s", err, &out)
	}
}

func TestBadConnectionAndListeningTargetsAreUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"probe", "connection://rabbitmq"}, `target "connection://rabbitmq": "rabbitmq": want HOST:PORT, or *:PORT for any host`},
		{[]string{"probe", "connection://:5672"}, `target "connection://:5672": ":5672" has no host: give one, or * for any`},
		{[]string{"probe", "connection://rabbitmq:5672", "--pid", "1", "--process", "st2"}, "--pid, --pid-file and --process each name the processes: give one"},
		{[]string{"probe", "connection://rabbitmq:5672", "--min", "-1"}, "--min -1: must be at least 1"},
		{[]string{"probe", "connection://rabbitmq:5672", "--process", "/opt/st2/bin/st2api"}, `process "/opt/st2/bin/st2api" is a path`},
		{[]string{"probe", "listening://:http"}, `target "listening://:http": parse "listening://:http": invalid port ":http" after host`},
		{[]string{"probe", "listening://localhost:8080"}, `address "localhost" is not an IP address`},
		{[]string{"probe", "listening://:8080", "--min", "2"}, "--min does not apply to a listening target"},
		{[]string{"probe", "tcp://localhost:8080", "--pid", "1"}, "--pid does not apply to a tcp target"},
	} {
		r := vitalsRun(t, tc.args...)
		r.expect(t, 2, "", tc.want)
	}
}

// vitals run gates readiness on the workload's connection: not ready until
// it connects, late, to its broker; not ready while the broker is down;
// ready again once it has connected again, and after a restart, with the
// new run's connection.
func TestRunGatesReadinessOnTheWorkloadsConnection(t *testing.T) {
	mq := startBroker(t, "127.0.0.1:0")
	mq.stop() // it starts late
	var sock string
	_, logs, addr, ready := supervisedBy(t, func(dir string) string {
		sock = filepath.Join(dir, "vitals.sock")
		return fmt.Sprintf("service: {restart: always, backoff: {initial: 100ms}}\nchecks:\n"+
			"  mq:\n    connection: {remote: %q}\n    period: 100ms\n    failure-threshold: 1\n", mq.addr)
	}, "connect", mq.addr)
	waitFor(t, "the mq check to fail for want of a connection", logs, func() bool {
		code, _, body := call(http.DefaultClient, "GET", "http://"+addr+"/readyz/mq")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "no connection to "+mq.addr+" among pid ")
	})
	if code := readyz(addr); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz: %d, want 503", code)
	}

	mq.start(t)
	waitReadyzIs(t, addr, http.StatusOK, logs)
	pid := pidIn(t, ready)
	checkSays(t, sock, fmt.Sprintf("1 connection to %s, held by pid %d (%s)", mq.addr, pid, comm), logs)

	mq.stop() // the workload dials again, and finds no broker
	waitReadyzIs(t, addr, http.StatusServiceUnavailable, logs)
	mq.start(t)
	waitReadyzIs(t, addr, http.StatusOK, logs)

	// A new run of the workload, a new pid: the check counts its sockets.
	os.Remove(ready)
	syscall.Kill(pid, syscall.SIGKILL)
	again := pidIn(t, ready)
	if again == pid {
		t.Fatalf("the workload's pid is %d again", pid)
	}
	checkSays(t, sock, fmt.Sprintf("1 connection to %s, held by pid %d (%s)", mq.addr, again, comm), logs)
}

// checkSays waits (a guard only) for the last run of the mq check, as the
// management API on sock says it, to pass with output, one connection
// observed.
func checkSays(t *testing.T, sock, output string, logs *vitalstest.Buffer) {
	t.Helper()
	waitFor(t, "the mq check to say "+output, logs, func() bool {
		_, _, body := call(socketClient(sock), "GET", "http://vitals/v1/checks/mq")
		var check struct {
			Last struct {
				OK                   bool
				Output, ObservedUnit string
				ObservedValue        float64
			}
		}
		return json.Unmarshal([]byte(body), &check) == nil && check.Last.OK && check.Last.Output == output &&
			check.Last.ObservedValue == 1 && check.Last.ObservedUnit == "connections"
	})
}

// vitals run as another user than the workload's cannot read its sockets,
// and says so.
func TestAProcessOfAnotherUserIsSaidToBeUnreadable(t *testing.T) {
	dir, binary, tmp := nonRootPlace(t)
	mq := startBroker(t, "127.0.0.1:0")
	me := os.Getpid()
	r := runToEnd(t, asNobody(dir, tmp, binary, "probe", "listening://:"+mq.port(), "--pid", strconv.Itoa(me)))
	r.expect(t, 1, "", fmt.Sprintf("listening :%s: nothing listens on port %s among pid %d (%s)", mq.port(), mq.port(), me, comm))
	r.expect(t, 1, "", fmt.Sprintf("; could not read pid %d: open /proc/%d/fd: permission denied (vitals needs the processes' user, or CAP_SYS_PTRACE)\n", me, me))
	// What ss shows, it shows too.
	runToEnd(t, asNobody(dir, tmp, binary, "probe", "listening://:"+mq.port())).expect(t, 0, "", "")
}
