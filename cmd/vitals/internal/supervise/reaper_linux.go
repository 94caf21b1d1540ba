package supervise

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// BecomeSubreaper makes the processes that the workload leaves behind
// children of vitals when their parent exits, so that the reaper reaps them.
// PID 1 is one already.
func BecomeSubreaper() error {
	if os.Getpid() == 1 {
		return nil
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}

// Reaper does every wait of the processes vitals supervises, in one place, so
// that the workload's status is never taken by another wait: it delivers the
// status of each watched pid, and reaps every other zombie child but those
// that os/exec waits for itself (the commands of exec checks, which it tells
// by their process group, and leaves for orphanGrace).
type Reaper struct {
	mu      sync.Mutex
	watched map[int]chan syscall.WaitStatus
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	orphans bool
	// suspects are zombies that look like exec checks' commands, by when
	// the reaper first saw them; only its goroutine touches them.
	suspects map[int]time.Time
}

// reapGuard is how often the reaper looks without a SIGCHLD: a guard only,
// since signals of the same kind that come together are delivered once.
const reapGuard = time.Second

// NewReaper starts a reaper. With orphans, it also reaps the zombies handed
// to vitals as PID 1 or subreaper.
func NewReaper(orphans bool) *Reaper {
	r := &Reaper{watched: map[int]chan syscall.WaitStatus{}, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), orphans: orphans, suspects: map[int]time.Time{}}
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	go func() {
		defer close(r.done)
		defer signal.Stop(sigchld)
		tick := time.NewTicker(reapGuard)
		defer tick.Stop()
		for {
			r.pass()
			select {
			case <-sigchld:
			case <-r.kick:
			case <-tick.C:
			case <-r.stop:
				return
			}
		}
	}()
	return r
}

// Watch returns where the status of pid, a child of vitals, is delivered.
func (r *Reaper) Watch(pid int) <-chan syscall.WaitStatus {
	ch := make(chan syscall.WaitStatus, 1)
	r.mu.Lock()
	r.watched[pid] = ch
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
	return ch
}

// Close stops the reaper, after a last pass.
func (r *Reaper) Close() {
	close(r.stop)
	<-r.done
	r.pass()
}

func (r *Reaper) pass() {
	r.mu.Lock()
	for pid, ch := range r.watched {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || err == syscall.ECHILD {
			ch <- ws
			delete(r.watched, pid)
		}
	}
	watched := make(map[int]bool, len(r.watched))
	for pid := range r.watched {
		watched[pid] = true
	}
	r.mu.Unlock()
	if !r.orphans {
		return
	}
	r.reapOrphans(watched)
}

// KillOrphans kills what the workload left outside its process group and
// handed to vitals, its subreaper (a daemon in a session of its own, say),
// and reaps it, so that nothing of the workload outlives vitals. Call it once
// the workload has exited for good and no command of vitals's own runs (exec
// checks, hooks): every child left then is such an orphan. As PID 1 it does
// nothing: vitals's exit takes every process of its namespace with it. It
// returns the pids still there at its bound.
//
// It does nothing either when /proc shows another PID namespace than
// vitals's own (unshare -p without a new /proc): the pids it lists would not
// be vitals's children.
func (r *Reaper) KillOrphans() (left []int) {
	pid := os.Getpid()
	if !r.orphans || pid == 1 {
		return nil
	}
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(pid) {
		return nil
	}
	// A killed orphan may hand its own children over: again, until none is
	// left, or the bound.
	for deadline := time.Now().Add(killBound); ; time.Sleep(10 * time.Millisecond) {
		left = children(pid)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		for _, child := range left {
			syscall.Kill(child, syscall.SIGKILL)
			var ws syscall.WaitStatus
			syscall.Wait4(child, &ws, syscall.WNOHANG, nil) // or the reaper's pass did
		}
	}
}

// killBound bounds KillOrphans: a process in uninterruptible sleep (a hung
// NFS read) does not die of SIGKILL until the kernel lets it, and vitals's
// own exit must not wait for that.
const killBound = 2 * time.Second

// children lists the children of pid, from /proc.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var found []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			continue
		}
		// After the command's name: the state, then the parent's pid.
		if f := strings.Fields(string(b[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			found = append(found, child)
		}
	}
	return found
}

// orphanGrace is how long a zombie that looks like an exec check's command
// is left to os/exec, which waits for it the moment it exits. One still
// there after it is an orphan of the workload that made a process group of
// its own, and is reaped.
const orphanGrace = time.Second

// reapOrphans reaps the zombie children that nobody else waits for. It peeks
// at them with waitid(WNOWAIT), which needs no /proc: that works in a PID
// namespace whatever /proc shows.
func (r *Reaper) reapOrphans(watched map[int]bool) {
	now := time.Now()
	for range maxReapsPerPass {
		pid := peekZombie()
		if pid <= 0 {
			break
		}
		var ws syscall.WaitStatus
		if watched[pid] {
			// Exited since the pass above: deliver it now.
			r.mu.Lock()
			if ch, ok := r.watched[pid]; ok {
				if got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); got == pid {
					ch <- ws
					delete(r.watched, pid)
				}
			}
			r.mu.Unlock()
			continue
		}
		if groupLeaderInOurSession(pid) {
			// What os/exec starts for an exec check (in a group of its own):
			// os/exec reaps it itself, unless it is an orphan after all.
			first, seen := r.suspects[pid]
			if !seen {
				r.suspects[pid] = now
				break // the next pass looks again
			}
			if now.Sub(first) < orphanGrace {
				break
			}
		}
		delete(r.suspects, pid)
		syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
	for pid, first := range r.suspects {
		if now.Sub(first) > 10*orphanGrace { // reaped by os/exec long ago
			delete(r.suspects, pid)
		}
	}
}

// maxReapsPerPass bounds one pass, so that a flood of exits cannot keep the
// reaper from its watched pids.
const maxReapsPerPass = 1024

// Linux's waitid arguments.
const (
	pAll    = 0
	pPID    = 1
	wExited = 4
	wNoHang = 1
	wNoWait = 0x1000000
)

// peekZombie returns the pid of a child that has exited, without reaping
// it; 0 when there is none.
func peekZombie() int { return peek(pAll, 0) }

// hasExited reports whether the child pid has exited and waits to be
// reaped: dead, though the reaper has not told yet.
func hasExited(pid int) bool { return peek(pPID, pid) == pid }

// peek is waitid(idType, id, WEXITED|WNOHANG|WNOWAIT): the pid of a child
// that has exited, left to be reaped; 0 when there is none.
func peek(idType, id int) int {
	var info [128]byte // a siginfo_t
	_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, uintptr(idType), uintptr(id), uintptr(unsafe.Pointer(&info[0])), wExited|wNoHang|wNoWait, 0, 0)
	if errno != 0 {
		return 0
	}
	// si_signo, si_errno, si_code, then the union, aligned as a pointer is;
	// its first field for SIGCHLD is si_pid.
	off := 3 * 4
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 4 * 4
	}
	return int(*(*int32)(unsafe.Pointer(&info[off])))
}

// groupLeaderInOurSession reports whether pid leads a process group of its
// own inside vitals's session: how os/exec starts an exec check's command.
func groupLeaderInOurSession(pid int) bool {
	pgid, err := syscall.Getpgid(pid)
	if err != nil || pgid != pid {
		return false
	}
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	self, _, _ := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	return errno == 0 && sid == self
}
