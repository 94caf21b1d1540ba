package procnet_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/procnet"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
	"github.com/vitals-dev/vitals/internal/testenv"
	"github.com/vitals-dev/vitals/probe"
)

func init() { workloadtest.Main() }

// broker listens on addr (network tcp4 or tcp6) and holds every connection
// it accepts until the test ends, as a broker does.
func broker(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		if network == "tcp6" {
			testenv.Missing(t, "IPv6 on loopback (%v)", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln
}

// workload starts the test binary as a workload that does what (Run's
// arguments), waits for it to be ready, and returns its pid, the pid it
// wrote to its ready file (a child's, for connect-child), and that file.
func workload(t *testing.T, what string, args ...string) (pid, wrote int, ready string) {
	t.Helper()
	ready = filepath.Join(t.TempDir(), "ready")
	cmd := workloadtest.Command(what, ready, args...)
	workloadtest.Start(t, cmd)
	return cmd.Process.Pid, workloadtest.WaitPID(t, ready), ready
}

// expect runs p once and checks what it observed, whether it passed, and
// its output.
func expect(t *testing.T, p *probe.Prober, value int, ok bool, output string) {
	t.Helper()
	obs, err := p.Measure(context.Background())
	out := obs.Message
	if err != nil {
		out = err.Error()
	}
	if obs.Value != value || (err == nil) != ok || out != output {
		t.Fatalf("%s: %v %s, passed %v, %q\nwant %v, passed %v, %q", p, obs.Value, obs.Unit, err == nil, out, value, ok, output)
	}
}

func pidOf(pid int) func() int { return func() int { return pid } }

func connection(t *testing.T, s procnet.ConnectionSpec, workload func() int, clock health.Clock) *probe.Prober {
	t.Helper()
	p, err := procnet.Connection(s, workload, clock)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func listening(t *testing.T, s procnet.ListeningSpec, workload func() int) *probe.Prober {
	t.Helper()
	p, err := procnet.Listening(s, workload)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// self is the test binary's name, its comm and its workloads'.
var self = filepath.Base(os.Args[0])

// who is a process as outputs name it: 41 (st2rulesengine).
func who(pid int) string { return fmt.Sprintf("%d (%s)", pid, self) }

func TestAWorkloadsConnectionCountsAndTheOutputSaysWhereAndByWhom(t *testing.T) {
	mq := broker(t, "tcp4", "127.0.0.1:0").Addr().String()
	other := broker(t, "tcp4", "127.0.0.1:0").Addr().String()
	pid, _, _ := workload(t, "connect", mq)
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq}, pidOf(pid), nil), 1, true,
		"1 connection to "+mq+", held by pid "+who(pid))
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq, Min: 2}, pidOf(pid), nil), 1, false,
		"1 connection to "+mq+", held by pid "+who(pid)+"; want 2")
	expect(t, connection(t, procnet.ConnectionSpec{Remote: other}, pidOf(pid), nil), 0, false,
		"no connection to "+other+" among pid "+who(pid)+"; want 1")
	// The broker's host by name: every address it resolves to counts.
	port := mq[strings.LastIndex(mq, ":")+1:]
	expect(t, connection(t, procnet.ConnectionSpec{Remote: "localhost:" + port}, pidOf(pid), nil), 1, true,
		"1 connection to "+mq+", held by pid "+who(pid))
	// Any host, on the broker's port.
	expect(t, connection(t, procnet.ConnectionSpec{Remote: "*:" + port}, pidOf(pid), nil), 1, true,
		"1 connection to "+mq+", held by pid "+who(pid))
	otherPort := other[strings.LastIndex(other, ":")+1:]
	expect(t, connection(t, procnet.ConnectionSpec{Remote: "*:" + otherPort}, pidOf(pid), nil), 0, false,
		"no connection to port "+otherPort+" of any host among pid "+who(pid)+"; want 1")
	// The workload between two runs of it.
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq}, pidOf(0), nil), 0, false, "the workload is not running")
}

// A connection held by a child of the workload is the workload's.
func TestAConnectionOfAChildOfTheWorkloadCounts(t *testing.T) {
	mq := broker(t, "tcp4", "127.0.0.1:0").Addr().String()
	other := broker(t, "tcp4", "127.0.0.1:0").Addr().String()
	pid, child, _ := workload(t, "connect-child", mq)
	if child == pid {
		t.Fatalf("the child wrote the workload's pid, %d", pid)
	}
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq}, pidOf(pid), nil), 1, true,
		"1 connection to "+mq+", held by pid "+who(child))
	expect(t, connection(t, procnet.ConnectionSpec{Remote: other}, pidOf(pid), nil), 0, false,
		"no connection to "+other+" among pid "+who(pid)+" and 1 process under it; want 1")
}

// A connection dropped no longer counts; made again, it is held anew, and
// for starts over.
func TestAConnectionDroppedAndMadeAgainStartsOver(t *testing.T) {
	mq := broker(t, "tcp4", "127.0.0.1:0").Addr().String()
	clock := healthtest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	me := os.Getpid()
	p := connection(t, procnet.ConnectionSpec{Remote: mq, For: 10 * time.Second, Processes: procnet.Processes{PID: me}}, nil, clock)
	c, err := net.Dial("tcp", mq)
	if err != nil {
		t.Fatal(err)
	}
	held := "1 connection to " + mq + ", held by pid " + who(me)
	expect(t, p, 0, false, held+", 0 of them for 10s; want 1 held for 10s (the next in 10s)")
	clock.Advance(4 * time.Second)
	expect(t, p, 0, false, held+", 0 of them for 10s; want 1 held for 10s (the next in 6s)")
	clock.Advance(6 * time.Second)
	expect(t, p, 1, true, held+", 1 of them for 10s")
	c.Close()
	expect(t, p, 0, false, "no connection to "+mq+" among pid "+who(me)+"; want 1 held for 10s")
	c, err = net.Dial("tcp", mq)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clock.Advance(time.Minute)
	expect(t, p, 0, false, held+", 0 of them for 10s; want 1 held for 10s (the next in 10s)")
	clock.Advance(10 * time.Second)
	expect(t, p, 1, true, held+", 1 of them for 10s")
}

// Connections over IPv6 count, and so does an IPv6 socket's connection to
// an IPv4 address (::ffff:127.0.0.1), as that address.
func TestIPv6ConnectionsCount(t *testing.T) {
	mq6 := broker(t, "tcp6", "[::1]:0").Addr().String()
	pid, _, _ := workload(t, "connect", mq6)
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq6}, pidOf(pid), nil), 1, true,
		"1 connection to "+mq6+", held by pid "+who(pid))

	mq := broker(t, "tcp4", "127.0.0.1:0").Addr().(*net.TCPAddr)
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	mapped := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	if err := syscall.Connect(fd, &syscall.SockaddrInet6{Port: mq.Port, Addr: netip.AddrFrom16(mapped.As16()).As16()}); err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq.String(), Processes: procnet.Processes{PID: me}}, nil, nil), 1, true,
		"1 connection to "+mq.String()+", held by pid "+who(me))
}

// A pid file names a process, and so does a name, its comm or its
// argv[0]'s, in place of the workload.
func TestAPidFileOrANameNamesTheProcesses(t *testing.T) {
	mq := broker(t, "tcp4", "127.0.0.1:0").Addr().String()
	pid, _, ready := workload(t, "connect", mq)
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{PIDFile: ready}}, nil, nil), 1, true,
		"1 connection to "+mq+", held by pid "+who(pid))

	// Its comm: the name of the file it runs, here a link to the test binary.
	link := filepath.Join(t.TempDir(), "conn-holder")
	if err := os.Symlink(os.Args[0], link); err != nil {
		t.Fatal(err)
	}
	cmd := workloadtest.Command("connect", filepath.Join(t.TempDir(), "ready"), mq)
	cmd.Path, cmd.Args[0] = link, link
	workloadtest.Start(t, cmd)
	workloadtest.WaitPID(t, cmd.Args[2])
	byComm := connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{Name: "conn-holder"}}, nil, nil)
	expect(t, byComm, 1, true, fmt.Sprintf("1 connection to %s, held by pid %d (conn-holder)", mq, cmd.Process.Pid))

	// Its argv[0]: a program started under another name.
	cmd = workloadtest.Command("connect", filepath.Join(t.TempDir(), "ready"), mq)
	cmd.Args[0] = "/opt/st2/bin/st2rulesengine"
	workloadtest.Start(t, cmd)
	workloadtest.WaitPID(t, cmd.Args[2])
	byArgv0 := connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{Name: "st2rulesengine"}}, nil, nil)
	expect(t, byArgv0, 1, true, "1 connection to "+mq+", held by pid "+who(cmd.Process.Pid))

	// What the pid file or the name finds is said.
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{Name: "no-such-process"}}, nil, nil), 0, false,
		`no process is named "no-such-process"`)
	bad := filepath.Join(t.TempDir(), "bad.pid")
	os.WriteFile(bad, []byte("four\n"), 0o600)
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{PIDFile: bad}}, nil, nil), 0, false,
		"pid-file "+bad+` holds "four", not a pid`)
	missing := filepath.Join(t.TempDir(), "missing.pid")
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{PIDFile: missing}}, nil, nil), 0, false,
		"pid-file: open "+missing+": no such file or directory")
	gone := workloadtest.Command("exit", filepath.Join(t.TempDir(), "ready"), "0")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(t.TempDir(), "dead.pid")
	os.WriteFile(dead, []byte(strconv.Itoa(gone.Process.Pid)), 0o600)
	expect(t, connection(t, procnet.ConnectionSpec{Remote: mq, Processes: procnet.Processes{PIDFile: dead}}, nil, nil), 0, false,
		fmt.Sprintf("pid %d of %s is not running", gone.Process.Pid, dead))
}

// A listening socket counts on its port, and on its address or on every
// address.
func TestAWorkloadsListeningSocketCounts(t *testing.T) {
	free, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().(*net.TCPAddr)
	free.Close()
	pid, _, _ := workload(t, "listen", addr.String())
	expect(t, listening(t, procnet.ListeningSpec{Port: addr.Port}, pidOf(pid)), 1, true,
		"listening on "+addr.String()+", by pid "+who(pid))
	expect(t, listening(t, procnet.ListeningSpec{Port: addr.Port, Address: "127.0.0.1"}, pidOf(pid)), 1, true,
		"listening on "+addr.String()+", by pid "+who(pid))
	expect(t, listening(t, procnet.ListeningSpec{Port: addr.Port, Address: "0.0.0.0"}, pidOf(pid)), 0, false,
		fmt.Sprintf("nothing listens on 0.0.0.0:%d among pid %s; on %s only", addr.Port, who(pid), addr))
	expect(t, listening(t, procnet.ListeningSpec{Port: addr.Port + 1}, pidOf(pid)), 0, false,
		fmt.Sprintf("nothing listens on port %d among pid %s", addr.Port+1, who(pid)))

	// vitals's network namespace has it, whoever holds it.
	expect(t, listening(t, procnet.ListeningSpec{Port: addr.Port, Processes: procnet.Processes{AnyProcess: true}}, nil), 1, true,
		"listening on "+addr.String()+", in this network namespace")

	// A socket on every address accepts on any. Held by vitals (this
	// test), it is none of any process's.
	any := broker(t, "tcp", "[::]:0")
	port := any.Addr().(*net.TCPAddr).Port
	me := os.Getpid()
	expect(t, listening(t, procnet.ListeningSpec{Port: port, Address: "127.0.0.1", Processes: procnet.Processes{PID: me}}, nil), 1, true,
		fmt.Sprintf("listening on [::]:%d, by pid %s", port, who(me)))
	expect(t, listening(t, procnet.ListeningSpec{Port: port, Processes: procnet.Processes{AnyProcess: true}}, nil), 0, false,
		fmt.Sprintf("nothing listens on port %d in this network namespace", port))
	expect(t, listening(t, procnet.ListeningSpec{Port: port, Processes: procnet.Processes{PID: pid}}, nil), 0, false,
		fmt.Sprintf("nothing listens on port %d among pid %s", port, who(pid)))
}

// With no processes named, a check needs the workload.
func TestACheckOfNoProcessesAndNoWorkloadIsRefused(t *testing.T) {
	if _, err := procnet.Connection(procnet.ConnectionSpec{Remote: "rabbitmq:5672"}, nil, nil); err == nil ||
		err.Error() != "connection probe: no processes named, and no workload" {
		t.Errorf("connection: %v", err)
	}
	if _, err := procnet.Listening(procnet.ListeningSpec{Port: 8080}, nil); err == nil ||
		err.Error() != "listening probe: no processes named, and no workload" {
		t.Errorf("listening: %v", err)
	}
}
