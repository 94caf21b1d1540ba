// Package workloadtest turns a test binary into the workload its tests
// supervise, so that the tests of supervision need no program but themselves:
//
//	func init() { workloadtest.Main() }
//
// and start os.Args[0] with Env set and the arguments Run describes (vitals
// run -- os.Args[0] ..., or Command and Start).
package workloadtest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Env, set to anything, makes a test binary act as a workload.
const Env = "VITALS_WORKLOAD_HELPER"

// Main runs the workload and exits when Env is set, and returns otherwise.
func Main() {
	if os.Getenv(Env) != "" {
		os.Exit(Run(os.Args[1:]))
	}
}

// Command is the test binary as a workload that does what, with ready as
// its file and args after it, as Run describes them. It runs in a process
// group of its own, which Start kills.
func Command(what, ready string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{what, ready}, args...)...)
	cmd.Env = append(os.Environ(), Env+"=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Start starts cmd, a Command, and kills its group when t ends.
func Start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
}

// WaitPID waits (a guard of 20 seconds only) for a workload to write its
// pid to ready, and returns it.
func WaitPID(t testing.TB, ready string) int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			pid, _ := strconv.Atoi(string(b))
			return pid
		}
	}
	t.Fatal("the workload was not ready within 20s")
	return 0
}

// Run is the workload: args[0] says what it does, args[1] is a file it
// writes its pid to once it is ready for signals.
//
//	exit FILE CODE   exits with CODE
//	print FILE CODE  writes a line to stdout and one to stderr, exits with CODE
//	kill-self FILE   dies by SIGKILL
//	sleep FILE       sleeps
//	ignore-term FILE sleeps through SIGTERM
//	hup FILE         exits 42 on SIGHUP
//	nap FILE         sleeps a second and exits 0
//	fork-in-group FILE  starts a sleeping child in its group, writes its pid, exits 0
//	fork-away FILE   starts a napping child in a session of its own, writes its pid, exits 0
//	fork-own-group FILE  the same, the child in a process group of its own
//	orphans FILE N   starts a child that starts N grandchildren sleeping 3s and exits
//	                 at once, leaving them to PID 1 or the subreaper; waits for the
//	                 child, writes its pid, and sleeps
//	serve FILE ADDR  serves HTTP on ADDR, printing "Listening on ADDR" once it does: 200, or
//	                 503 while FILE.503 holds its pid (it broke); SIGTERM ends it with 0
//	flood FILE MB    writes MB megabytes of numbered lines, alternating stdout and stderr,
//	                 then "flood done" on stdout, and sleeps
//	connect FILE ADDR  dials ADDR until it connects (a broker that comes up late), writes
//	                 its pid, and holds the connection; when the server closes it, dials
//	                 again, as a client of a broker does
//	connect-child FILE ADDR  starts a child that does connect FILE ADDR, and sleeps
//	listen FILE ADDR listens on ADDR, writes its pid, and sleeps
//	env FILE VAR...  writes every VAR=VALUE of its environment, in its order, to FILE.env
//	                 (a VAR set twice twice), then its pid, and sleeps
//	notify-fd FILE N writes a newline to its descriptor N (s6's readiness), and sleeps
//	exits FILE CODE...  its Nth run (counted in FILE.runs) exits with the Nth CODE; once
//	                 the codes are used up, it writes its pid and sleeps
func Run(args []string) int {
	ready := func() { os.WriteFile(args[1], []byte(strconv.Itoa(os.Getpid())), 0o600) }
	switch args[0] {
	case "exit":
		code, _ := strconv.Atoi(args[2])
		return code
	case "print":
		os.Stdout.WriteString("to stdout\n")
		os.Stderr.WriteString("to stderr\n")
		code, _ := strconv.Atoi(args[2])
		return code
	case "kill-self":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "sleep":
		ready()
		time.Sleep(time.Hour)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		ready()
		time.Sleep(time.Hour)
	case "hup":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGHUP)
		ready()
		<-ch
		return 42
	case "nap":
		time.Sleep(time.Second)
		return 0
	case "fork-in-group":
		// A grandchild that outlives the workload, in the workload's group.
		pid, err := syscall.ForkExec(os.Args[0], []string{os.Args[0], "sleep", args[1]},
			&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
		if err != nil {
			return 99
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, _ := os.ReadFile(args[1]); string(b) == strconv.Itoa(pid) {
				return 0
			}
		}
		return 98
	case "orphans":
		child, err := os.StartProcess(os.Args[0], []string{os.Args[0], "spawn", args[1], args[2]},
			&os.ProcAttr{Env: os.Environ(), Files: []*os.File{nil, os.Stdout, os.Stderr}})
		if err != nil {
			return 99
		}
		if st, err := child.Wait(); err != nil || !st.Success() {
			return 98
		}
		ready()
		time.Sleep(time.Hour)
	case "spawn":
		n, _ := strconv.Atoi(args[2])
		for range n {
			if _, err := os.StartProcess(os.Args[0], []string{os.Args[0], "linger", args[1]},
				&os.ProcAttr{Env: os.Environ(), Files: []*os.File{nil, os.Stdout, os.Stderr}}); err != nil {
				return 99
			}
		}
		return 0
	case "linger":
		time.Sleep(3 * time.Second)
		return 0
	case "serve":
		return serve(args[1], args[2])
	case "flood":
		mb, _ := strconv.Atoi(args[2])
		flood(mb)
		ready()
		time.Sleep(time.Hour)
	case "connect", "connect-child", "listen":
		return sockets(args, ready)
	case "env", "notify-fd":
		if code := tell(args); code != 0 {
			return code
		}
		ready()
		time.Sleep(time.Hour)
	case "exits":
		if code, ok := nextCode(args[1], args[2:]); ok {
			return code
		}
		ready()
		time.Sleep(time.Hour)
	case "fork-away", "fork-own-group":
		return forkAway(args)
	}
	return 100
}

// forkAway starts a grandchild that leaves the workload's group (setsid,
// or setpgid for fork-own-group), outlives it, then exits: vitals, its
// subreaper, must reap it.
func forkAway(args []string) int {
	sys := &syscall.SysProcAttr{Setsid: true}
	if args[0] == "fork-own-group" {
		sys = &syscall.SysProcAttr{Setpgid: true}
	}
	pid, err := syscall.ForkExec(os.Args[0], []string{os.Args[0], "nap", args[1]},
		&syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: sys})
	if err != nil {
		return 99
	}
	os.WriteFile(args[1], []byte(strconv.Itoa(pid)), 0o600)
	return 0
}

// sockets is the workload of connect, connect-child and listen.
func sockets(args []string, ready func()) int {
	switch args[0] {
	case "connect":
		connect(ready, args[2])
	case "connect-child":
		if _, err := os.StartProcess(os.Args[0], []string{os.Args[0], "connect", args[1], args[2]},
			&os.ProcAttr{Env: os.Environ(), Files: []*os.File{nil, os.Stdout, os.Stderr}}); err != nil {
			return 99
		}
		time.Sleep(time.Hour)
	case "listen":
		ln, err := net.Listen("tcp", args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer ln.Close()
		ready()
		time.Sleep(time.Hour)
	}
	return 0
}

// connect holds a connection to addr, made again whenever the server
// closes it; ready is called at the first.
func connect(ready func(), addr string) {
	first := true
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if first {
			ready()
			first = false
		}
		io.Copy(io.Discard, c) // until the server closes it
		c.Close()
	}
}

func serve(ready, addr string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	me := strconv.Itoa(os.Getpid())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := os.ReadFile(ready + ".503"); string(b) == me {
			http.Error(w, "OIDC provider setup failed", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() { <-term; srv.Close() }()
	fmt.Printf("Listening on %s\n", addr)
	os.WriteFile(ready, []byte(me), 0o600)
	srv.Serve(ln)
	return 0
}

// FloodLine is line n of the flood: its stream, its number, and filler up to
// about 100 bytes.
func FloodLine(n int) string {
	stream := "stdout"
	if n%2 == 1 {
		stream = "stderr"
	}
	return fmt.Sprintf("%s line %09d %s\n", stream, n, strings.Repeat("x", 70))
}

func flood(mb int) {
	out, errs := bufio.NewWriterSize(os.Stdout, 64<<10), bufio.NewWriterSize(os.Stderr, 64<<10)
	for n, size := 0, 0; size < mb<<20; n++ {
		line := FloodLine(n)
		w := out
		if n%2 == 1 {
			w = errs
		}
		w.WriteString(line)
		size += len(line)
	}
	out.Flush()
	errs.Flush()
	os.Stdout.WriteString("flood done\n")
}

// tell is what env and notify-fd tell before they are ready: their
// environment, or a newline on their notification descriptor.
func tell(args []string) int {
	if args[0] == "notify-fd" {
		fd, _ := strconv.Atoi(args[2])
		if _, err := os.NewFile(uintptr(fd), "notification").WriteString("\n"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 97
		}
		return 0
	}
	var lines []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(args[2:], name) {
			lines = append(lines, kv+"\n")
		}
	}
	os.WriteFile(args[1]+".env", []byte(strings.Join(lines, "")), 0o600)
	return 0
}

// nextCode is the code of this run of exits: the codes in turn, one per
// run, counted in ready.runs; false once they are used up.
func nextCode(ready string, codes []string) (int, bool) {
	b, _ := os.ReadFile(ready + ".runs")
	runs, _ := strconv.Atoi(string(b))
	os.WriteFile(ready+".runs", []byte(strconv.Itoa(runs+1)), 0o600)
	if runs >= len(codes) {
		return 0, false
	}
	code, _ := strconv.Atoi(codes[runs])
	return code, true
}
