// Package depstest runs the servers that the dependency kinds are tested
// against, from Debian's packages (postgresql, redis-server,
// rabbitmq-server, nats-server): each its own private process on a free
// loopback port with its files in a temporary directory, so that a test can
// stop and start one. A server that several tests can share is started once
// per run of the test binary, and StopShared, which the binary's TestMain
// calls, stops it. The tests of package deps and the binary's tests of
// vitals probe and vitals wait use it.
package depstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// Server is a server process that a test starts, stops and starts again.
type Server struct {
	Name string
	Addr string // 127.0.0.1:PORT, where it serves
	Dir  string // its files, and its log
	// command builds the command that runs it in the foreground.
	command func() *exec.Cmd
	// ready waits until it serves; by default, until its port accepts.
	ready func(ctx context.Context) error
	// stopSignal asks it to stop; SIGKILL follows if it has not in time.
	stopSignal syscall.Signal
	// cleanup runs once it is stopped for good, before dir is removed.
	cleanup []func()
	// ctl builds the command of the server's control program with args;
	// nil for a server that has none here.
	ctl func(args ...string) *exec.Cmd

	cmd    *exec.Cmd
	exited chan struct{}
}

// startTimeout bounds a server's start: RabbitMQ takes about 10s on two
// cores, and more on a busy machine.
const startTimeout = 90 * time.Second

// stopTimeout is how long a server has to stop before it is killed.
const stopTimeout = 20 * time.Second

func (s *Server) logPath() string { return filepath.Join(s.Dir, s.Name+".log") }

// Start runs the server and waits until it serves.
func (s *Server) Start() error {
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := s.command()
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Its own process group, to stop whatever it starts along with it, and
	// killed if the test binary dies first.
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.Name, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.exited) }()

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	ready := s.ready
	if ready == nil {
		ready = s.accepting
	}
	if err := s.until(ctx, ready); err != nil {
		s.Stop()
		return fmt.Errorf("%s did not start serving on %s: %w\n%s", s.Name, s.Addr, err, s.logTail())
	}
	return nil
}

// until calls ready until it succeeds, the server exits or ctx ends.
func (s *Server) until(ctx context.Context, ready func(ctx context.Context) error) error {
	for {
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := ready(try)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("it exited (%v)", s.cmd.ProcessState)
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) accepting(ctx context.Context) error {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.Addr)
	if err == nil {
		c.Close()
	}
	return err
}

// Stop stops the server and waits until it has exited.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	pgid := -s.cmd.Process.Pid
	syscall.Kill(pgid, s.stopSignal)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-s.exited
	}
	syscall.Kill(pgid, syscall.SIGKILL) // whatever of its group is left
	s.cmd = nil
}

// Close stops the server for good and removes its files.
func (s *Server) Close() {
	s.Stop()
	for _, f := range slices.Backward(s.cleanup) {
		f()
	}
	os.RemoveAll(s.Dir)
}

// Log is what the server has written to its log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath())
	return string(b)
}

// logTail is the end of the server's log, to say why it failed.
func (s *Server) logTail() string {
	const keep = 4 << 10
	log := s.Log()
	if len(log) > keep {
		log = log[len(log)-keep:]
	}
	return log
}

// Ctl runs the server's control program with args, rabbitmqctl for a
// RabbitMQ node, and returns its output.
func (s *Server) Ctl(args ...string) (string, error) {
	if s.ctl == nil {
		return "", fmt.Errorf("%s has no control program here", s.Name)
	}
	cmd := s.ctl(args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w%s", strings.Join(cmd.Args, " "), err, lines(string(out)))
	}
	return string(out), nil
}

// Private starts a server for one test, stopped and removed when it ends.
func Private(t testing.TB, starter func() (*Server, error)) *Server {
	t.Helper()
	s, err := startOnAFreePort(starter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// startOnAFreePort starts a server, on a new free port each try, up to three
// times: between the moment a free port is picked and the moment the server
// binds it (seconds, for RabbitMQ), another test process may take it, and
// the server then exits without serving.
func startOnAFreePort(starter func() (*Server, error)) (*Server, error) {
	var errs []error
	for range 3 {
		s, err := starter()
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// Servers shared by the tests of one run of the binary, by name.
var (
	sharedMu sync.Mutex
	shared   = map[string]*sharedServer{}
)

type sharedServer struct {
	once sync.Once
	s    *Server
	err  error
}

// Share starts the named server on the first call and returns it on every
// call; StopShared stops it.
func Share(t testing.TB, name string, starter func() (*Server, error)) *Server {
	t.Helper()
	sharedMu.Lock()
	ss := shared[name]
	if ss == nil {
		ss = &sharedServer{}
		shared[name] = ss
	}
	sharedMu.Unlock()
	ss.once.Do(func() { ss.s, ss.err = startOnAFreePort(starter) })
	if ss.err != nil {
		t.Fatal(ss.err)
	}
	return ss.s
}

// StopShared stops the servers that Share started: the test binary's
// TestMain calls it once its tests have run.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range shared {
		if ss.s != nil {
			wg.Go(ss.s.Close)
		}
	}
	wg.Wait()
}

// Need returns the path of a server's program, the first of paths that
// exists (a name alone is looked up in PATH). When none does, the test is
// skipped on a developer's machine and fails in CI, which installs them.
func Need(t testing.TB, paths ...string) string {
	t.Helper()
	for _, p := range paths {
		if matches, _ := filepath.Glob(p); len(matches) > 0 {
			slices.Sort(matches) // the highest version last, for postgresql's
			p = matches[len(matches)-1]
		}
		if found, err := exec.LookPath(p); err == nil {
			return found
		}
	}
	testenv.Missing(t, "%s is not installed (apt-get install postgresql redis-server rabbitmq-server nats-server)", paths[0])
	return ""
}

// freePort is a loopback TCP port that nothing listens on, now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePorts is n different free ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	for len(ports) < n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// serverDir makes a directory for a server's files that user (nil: this
// process's) owns and can reach: t.TempDir's parents are private to this
// process's user, and PostgreSQL refuses to run as root.
func serverDir(name string, owner *user.User) (string, error) {
	dir, err := os.MkdirTemp("", "vitals-deps-"+name+"-")
	if err != nil {
		return "", err
	}
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// asUser makes cmd run as u, when this process is root; nil leaves it as is.
func asUser(cmd *exec.Cmd, u *user.User) *exec.Cmd {
	if u == nil {
		return cmd
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Env = append(os.Environ(), "HOME="+u.HomeDir, "USER="+u.Username, "LOGNAME="+u.Username)
	return cmd
}

// lines indents s under a test's message.
func lines(s string) string { return "\n\t" + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n\t") }

// dialUntil connects to addr with ctx's deadline on the connection too, for
// the readiness checks of the test servers that speak their protocol.
func dialUntil(ctx context.Context, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		c.SetDeadline(deadline)
	}
	return c, nil
}
