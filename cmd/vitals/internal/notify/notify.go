// Package notify hears the workload of vitals run say that it is ready, in
// the words daemons already use: systemd's notification socket (sd_notify(3):
// READY=1, STATUS=, WATCHDOG=1, WATCHDOG=trigger, STOPPING=1, RELOADING=1,
// EXTEND_TIMEOUT_USEC=), which vitals names to the workload in
// NOTIFY_SOCKET, and s6's notification-fd, a pipe on which the workload
// writes a newline once it is ready. Its Checks answer the notify kind's
// checks from what the current run of the workload said.
//
// It is a part of the agent, beside logwatch: the agent makes a Receiver
// with the checks of the file (kinds.Env.Notify), makes its socket before
// the workload starts, and gives it to package supervise, which tells it of
// each run (Starting, Started) and gives each its pipe. A message that may
// change a check's answer, and a watchdog or a start's extension that runs
// out, wake that check, which the agent then runs at once.
package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/health"
)

// The environment that tells a workload where and how to notify, as systemd
// names it (sd_notify(3), sd_watchdog_enabled(3)).
const (
	// SocketEnv is the path of the socket to send datagrams to.
	SocketEnv = "NOTIFY_SOCKET"
	// WatchdogEnv is the watchdog in microseconds: a workload that reads it
	// sends WATCHDOG=1 more often than that, by convention every half.
	WatchdogEnv = "WATCHDOG_USEC"
	// WatchdogPIDEnv is the pid of the process the watchdog is meant for,
	// so that its children, which inherit WATCHDOG_USEC, know it is not
	// theirs (package supervise sets it).
	WatchdogPIDEnv = "WATCHDOG_PID"
)

// maxMessage is the longest datagram read whole: systemd reads no more than
// a pipe's atomic write (PIPE_BUF), and sd_notify's messages are a few
// assignments. A longer one is ignored.
const maxMessage = 4096

// maxFDs is how many descriptors a datagram may pass that vitals takes in
// to close (BARRIER=1 passes one, FDSTORE=1 some); the kernel closes those
// beyond, as vitals keeps none.
const maxFDs = 16

// maxSocketPath is the longest path a unix socket can have: sun_path holds
// 108 bytes on Linux, the NUL that ends the path included.
const maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Options are what a Receiver is made with. The zero Options read the
// system clock, log to slog.Default(), and make the socket in the
// directory of the management API's default socket.
type Options struct {
	// Clock is what the checks' times are read from; default the system
	// clock.
	Clock health.Clock
	// Logger hears of messages that are ignored, and of the workload saying
	// it is ready, reloading, stopping or broken, or asking for more time to
	// start up. Default slog.Default().
	Logger *slog.Logger
	// FD is s6's notification-fd, the descriptor each run gets the write end
	// of its pipe at (package supervise); 0 for none. The outputs name it.
	FD int
	// Dir is where the socket's directory is made; default the directory of
	// the management API's default socket (apisocket.Default), which only
	// vitals's user can write (for root, the temp directory when others
	// cannot enter that one).
	Dir string
	// Proc is where the processes are read; default /proc.
	Proc string
}

// Receiver hears what the runs of the workload say: on its socket, from
// the processes of the run (the main process, its descendants and its
// process group: the kernel vouches for the sender's pid, SCM_CREDENTIALS),
// and on each run's pipe. Make one with New; add its checks, then Listen,
// Start, and Close once the workload has stopped.
type Receiver struct {
	o      Options
	now    func() time.Time
	logger *slog.Logger
	words  words
	checks []*Check

	dir, path string // the socket's directory and path, once Listen made them
	conn      *net.UnixConn
	closed    chan struct{} // closed by Close
	done      sync.WaitGroup

	mu      sync.Mutex
	cur     run
	began   chan struct{} // closed once cur has its pid, or could not start
	pipe    *os.File      // cur's notification pipe, nil without one
	changed chan struct{} // the loop judges the checks again
	wake    func(name string)
}

// New returns a Receiver; it opens and starts nothing.
func New(o Options) *Receiver {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	r := &Receiver{o: o, now: time.Now, logger: o.Logger, words: wordsFor(o.FD), closed: make(chan struct{}),
		began: make(chan struct{}), changed: make(chan struct{}, 1), wake: func(string) {}}
	if o.Clock != nil {
		r.now = o.Clock.Now
	}
	return r
}

// Check adds a check named name, with a watchdog (0: none), and returns
// it: a health.Measurer that answers from what the current run said (see
// judge). Add every check before Start.
func (r *Receiver) Check(name string, watchdog time.Duration) *Check {
	c := &Check{r: r, name: name, watchdog: watchdog}
	r.checks = append(r.checks, c)
	return c
}

// Names are the names of r's checks.
func (r *Receiver) Names() []string {
	names := make([]string, len(r.checks))
	for i, c := range r.checks {
		names[i] = c.name
	}
	return names
}

// Watchdog is the shortest watchdog of r's checks, 0 when none has one:
// what the workload is told in WATCHDOG_USEC.
func (r *Receiver) Watchdog() time.Duration {
	var w time.Duration
	for _, c := range r.checks {
		if c.watchdog > 0 && (w == 0 || c.watchdog < w) {
			w = c.watchdog
		}
	}
	return w
}

// Listen makes the socket, in a directory of its own, and asks the kernel
// for each sender's credentials. The socket is 0666 in a directory of a
// random name that others may pass through but not list (0711), as
// systemd's notification socket is open to every process: a workload that
// drops its privileges (gosu, su-exec, setpriv) must still reach it, and
// the credentials decide whose word counts, not the file's mode. As root,
// the directory goes where any user can pass: the API socket's directory
// when others may enter it (/run/vitals), else the temp directory.
func (r *Receiver) Listen() error {
	base := r.o.Dir
	if base == "" {
		api := apisocket.Default()
		if err := apisocket.MakeDir(api); err != nil {
			return fmt.Errorf("the notification socket: %w", err)
		}
		base = filepath.Dir(api)
		if fi, err := os.Stat(base); os.Geteuid() == 0 && (err != nil || fi.Mode().Perm()&0o001 == 0) {
			base = os.TempDir()
		}
	}
	dir, err := os.MkdirTemp(base, "notify-")
	if err != nil {
		return fmt.Errorf("the notification socket's directory: %w", err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		os.Remove(dir)
		return fmt.Errorf("the notification socket's directory: %w", err)
	}
	path := filepath.Join(dir, "notify.sock")
	if len(path) > maxSocketPath {
		os.Remove(dir)
		return fmt.Errorf("the notification socket %s is %d bytes, too long for a unix socket (at most %d): give TMPDIR a shorter directory", path, len(path), maxSocketPath)
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("the notification socket: %w", err)
	}
	if err := passCredentials(conn); err != nil {
		conn.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("the notification socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		conn.Close()
		os.RemoveAll(dir)
		return fmt.Errorf("the notification socket %s: %w", path, err)
	}
	r.dir, r.path, r.conn = dir, path, conn
	return nil
}

// passCredentials asks the kernel to attach its sender's credentials to
// every datagram conn receives (SO_PASSCRED): it fills them in whether or
// not the sender sent any, and lets only a privileged sender claim another
// pid than its own.
func passCredentials(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var opt error
	if err := raw.Control(func(fd uintptr) {
		opt = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1)
	}); err != nil {
		return err
	}
	if opt != nil {
		return fmt.Errorf("SO_PASSCRED: %w", opt)
	}
	return nil
}

// Env is what the workload's environment gets: NOTIFY_SOCKET once Listen
// made the socket, and WATCHDOG_USEC when a check has a watchdog.
func (r *Receiver) Env() map[string]string {
	env := map[string]string{}
	if r.path != "" {
		env[SocketEnv] = r.path
	}
	if w := r.Watchdog(); w > 0 {
		env[WatchdogEnv] = strconv.FormatInt(w.Microseconds(), 10)
	}
	return env
}

// Start reads the socket, once Listen made it, and wakes each check whose
// answer may have changed with wake (which must not block), until ctx ends
// or Close.
func (r *Receiver) Start(ctx context.Context, wake func(name string)) {
	r.mu.Lock()
	r.wake = wake
	r.mu.Unlock()
	r.done.Add(1)
	go func() {
		defer r.done.Done()
		r.loop(ctx)
	}()
	if r.conn != nil {
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			r.read()
		}()
	}
}

// Close stops reading, removes the socket and its directory, and closes the
// current run's pipe. Call it once the workload has stopped, and the
// context given to Start has ended.
func (r *Receiver) Close() error {
	close(r.closed)
	var err error
	if r.conn != nil {
		err = r.conn.Close()
	}
	r.mu.Lock()
	if r.pipe != nil {
		r.pipe.Close()
	}
	r.mu.Unlock()
	r.done.Wait()
	if r.dir != "" {
		if rmErr := os.RemoveAll(r.dir); err == nil {
			err = rmErr
		}
	}
	return err
}

// Starting is told that run (the number of restarts before it) is about to
// start, and given the read end of its notification pipe (nil without
// one), which it owns from now on: what the run before said is forgotten,
// and a datagram that comes now waits for Started, to be told whose it is.
func (r *Receiver) Starting(number int, pipe *os.File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pipe != nil {
		r.pipe.Close() // the run before's: ends its reading
	}
	select {
	case <-r.began:
	default:
		close(r.began) // a run that never said Started: what waited is dropped
	}
	r.cur, r.began, r.pipe = run{number: number}, make(chan struct{}), pipe
	if pipe != nil {
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			r.readPipe(number, pipe)
		}()
	}
}

// Started is told that run started as pid, 0 when it could not start.
func (r *Receiver) Started(number, pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur.number != number {
		return
	}
	r.cur.pid, r.cur.started = pid, r.now()
	// The checks start over with the run, and are judged from it: nothing
	// to wake them for.
	for _, c := range r.checks {
		_, err := judge(r.cur, c.watchdog, r.words, r.cur.started)
		c.told = verdictOf(err)
	}
	close(r.began)
	r.changedLocked()
}

func (r *Receiver) changedLocked() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// loop wakes the checks whose answer changed: after a message, and when a
// watchdog or a start's extension runs out, at that moment.
func (r *Receiver) loop(ctx context.Context) {
	for {
		r.mu.Lock()
		now := r.now()
		next := r.judgeLocked(now)
		r.mu.Unlock()
		var fired <-chan time.Time
		stop := func() bool { return false }
		if !next.IsZero() {
			t := r.timer(next.Sub(now))
			fired, stop = t.C(), t.Stop
		}
		select {
		case <-ctx.Done():
			stop()
			return
		case <-r.closed:
			stop()
			return
		case <-r.changed:
		case <-fired:
		}
		stop()
	}
}

// judgeLocked judges every check at now, wakes those whose answer is not
// the one last judged, and returns when the next answer changes with time
// alone (zero for never).
func (r *Receiver) judgeLocked(now time.Time) time.Time {
	var next time.Time
	for _, c := range r.checks {
		_, err := judge(r.cur, c.watchdog, r.words, now)
		if v := verdictOf(err); v != c.told {
			c.told = v
			r.wake(c.name)
		}
		if d := r.cur.changes(c.watchdog); d.After(now) && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	return next
}

// timer is a timer of d on r's clock.
func (r *Receiver) timer(d time.Duration) health.Timer {
	if r.o.Clock != nil {
		return r.o.Clock.NewTimer(d)
	}
	return systemTimer{time.NewTimer(d)}
}

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }

// read reads the socket's datagrams until Close.
func (r *Receiver) read() {
	buf := make([]byte, maxMessage+1) // one more, to tell a datagram too long
	oob := make([]byte, syscall.CmsgSpace(syscall.SizeofUcred)+syscall.CmsgSpace(4*maxFDs))
	for {
		n, oobn, flags, _, err := r.conn.ReadMsgUnix(buf, oob)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			r.logger.Warn("notify: cannot read the notification socket", "err", err)
			continue
		}
		r.receive(buf[:n], oob[:oobn], flags)
	}
}

// receive takes in one datagram: what it says counts when its sender is a
// process of the current run. The descriptors it passed are closed last,
// once that is decided: sd_notify's barrier (BARRIER=1, which
// systemd-notify sends after its message and waits on) ends then, so a
// sender that waits on it is still there to be told.
func (r *Receiver) receive(b, oob []byte, flags int) {
	cred, fds, err := control(oob)
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	switch {
	case err != nil:
		r.logger.Warn("notify: a message is ignored: its control data cannot be read", "err", err)
		return
	case cred == nil:
		r.logger.Warn("notify: a message is ignored: it came without its sender's credentials")
		return
	case len(b) > maxMessage || flags&syscall.MSG_TRUNC != 0:
		r.logger.Warn("notify: a message is ignored: it is longer than the protocol's", "pid", cred.Pid, "max", maxMessage)
		return
	}
	m, err := Parse(b)
	if err != nil {
		r.logger.Warn("notify: a message is ignored", "pid", cred.Pid, "err", err)
		return
	}
	r.mu.Lock()
	began := r.began
	r.mu.Unlock()
	select {
	case <-began:
	case <-r.closed:
		return
	}
	r.mu.Lock()
	number, main := r.cur.number, r.cur.pid
	r.mu.Unlock()
	if main == 0 {
		r.logger.Warn("notify: a message is ignored: no run of the workload is running", "pid", cred.Pid)
		return
	}
	ok, err := member(r.o.Proc, int(cred.Pid), main)
	switch {
	case err != nil:
		r.logger.Warn("notify: a message is ignored: its sender cannot be told a process of the workload "+
			"(it exited before vitals read it: send from a process that lives on, or with systemd-notify without --no-block)",
			"pid", cred.Pid, "workload", main, "err", err)
		return
	case !ok:
		r.logger.Warn("notify: a message is ignored: its sender is no process of the workload", "pid", cred.Pid, "workload", main)
		return
	}
	if m.Invalid != "" {
		r.logger.Warn("notify: an assignment is ignored, not the rest of its message", "pid", cred.Pid, "reason", m.Invalid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur.number != number {
		return // the run it came from has ended meanwhile
	}
	r.said(m)
}

// said records m from the current run, and logs what changes its state.
// r.mu is held.
func (r *Receiver) said(m Message) {
	was, now := r.cur, r.now()
	r.cur.apply(m, now)
	switch {
	case was.reloading && !r.cur.reloading:
		r.logger.Info("notify: the workload has reloaded: it is ready", "pid", r.cur.pid, "status", r.cur.status,
			"took", ago(now.Sub(was.reloaded)))
	case r.cur.ready && !was.ready:
		r.logger.Info("notify: the workload is ready", "pid", r.cur.pid, "status", r.cur.status)
	case r.cur.reloading && !was.reloading:
		r.logger.Info("notify: the workload is reloading: it is not ready until READY=1", "pid", r.cur.pid, "status", r.cur.status)
	case r.cur.extended.After(was.extended) && !was.extended.After(now):
		// Only the first of an extension's messages: a daemon that works
		// long sends one every little while, each asking from its moment.
		r.logger.Info("notify: the workload asked for more time to start up", "pid", r.cur.pid, "status", r.cur.status,
			"until", r.cur.extended, "extend", m.Extend)
	case r.cur.stopping && !was.stopping:
		r.logger.Info("notify: the workload is stopping", "pid", r.cur.pid, "status", r.cur.status)
	case r.cur.trigger && !was.trigger:
		r.logger.Warn("notify: the workload said WATCHDOG=trigger", "pid", r.cur.pid, "status", r.cur.status)
	}
	r.changedLocked()
}

// control reads a datagram's control data: its sender's credentials (nil
// when absent) and the descriptors it passed, which the caller closes.
func control(oob []byte) (cred *syscall.Ucred, fds []int, err error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range msgs {
		if m.Header.Level != syscall.SOL_SOCKET {
			continue
		}
		switch m.Header.Type {
		case syscall.SCM_CREDENTIALS:
			if cred, err = syscall.ParseUnixCredentials(&m); err != nil {
				return nil, fds, err
			}
		case syscall.SCM_RIGHTS:
			passed, err := syscall.ParseUnixRights(&m)
			fds = append(fds, passed...)
			if err != nil {
				return nil, fds, err
			}
		}
	}
	return cred, fds, nil
}

// readPipe reads the notification pipe of run number until its newline,
// which says it is ready, then closes it, as s6-supervise does: the
// workload writes the newline once, and closes its end.
func (r *Receiver) readPipe(number int, pipe *os.File) {
	defer pipe.Close()
	buf := make([]byte, 512)
	for {
		n, err := pipe.Read(buf)
		if bytes.IndexByte(buf[:n], '\n') >= 0 {
			r.mu.Lock()
			if r.cur.number == number {
				r.said(Message{Ready: true})
			}
			r.mu.Unlock()
			return
		}
		if err != nil {
			return // the run closed it unready, or ended, or a new one began
		}
	}
}

// Check is a notify check: a health.Measurer that answers from what the
// current run of the workload said. Running it reads that and nothing
// else.
type Check struct {
	r        *Receiver
	name     string
	watchdog time.Duration
	told     verdict // the answer the Receiver last judged, guarded by r.mu
}

// verdict is what an answer counts as to the Monitor: a run that moves no
// threshold (health.Undecided) is a change to wake a check for, as much as
// a pass or a failure.
type verdict int

const (
	failed verdict = iota
	passed
	undecided
)

// verdictOf is what a check's answer with err counts as.
func verdictOf(err error) verdict {
	switch {
	case err == nil:
		return passed
	case errors.Is(err, health.ErrUndecided):
		return undecided
	}
	return failed
}

var _ health.Measurer = (*Check)(nil)

// Name is the check's name.
func (c *Check) Name() string { return c.name }

// Check reports nil when the check passes (see Measure).
func (c *Check) Check(ctx context.Context) error {
	_, err := c.Measure(ctx)
	return err
}

// Measure answers from what the current run said: without a watchdog, it
// passes once the run said READY=1 (or wrote its newline), fails from
// RELOADING=1 until the next READY=1, and from STOPPING=1 on, and decides
// nothing (health.Undecided) while the time the run asked for to start up
// with EXTEND_TIMEOUT_USEC= stands; with one, it fails when no WATCHDOG=1
// or READY=1 came within the watchdog, and on WATCHDOG=trigger. STATUS= is
// its output.
func (c *Check) Measure(context.Context) (health.Observation, error) {
	c.r.mu.Lock()
	cur := c.r.cur
	c.r.mu.Unlock()
	return judge(cur, c.watchdog, c.r.words, c.r.now())
}
