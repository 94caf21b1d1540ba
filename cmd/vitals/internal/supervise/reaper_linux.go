package supervise

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
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
// that os/exec waits for itself (the commands of exec checks).
type Reaper struct {
	mu      sync.Mutex
	watched map[int]chan syscall.WaitStatus
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	orphans bool
}

// reapGuard is how often the reaper looks without a SIGCHLD: a guard only,
// since signals of the same kind that come together are delivered once.
const reapGuard = time.Second

// NewReaper starts a reaper. With orphans, it also reaps the zombies handed
// to vitals as PID 1 or subreaper.
func NewReaper(orphans bool) *Reaper {
	r := &Reaper{watched: map[int]chan syscall.WaitStatus{}, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), orphans: orphans}
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
	for _, z := range zombies() {
		if watched[z.pid] || z.pgid == z.pid && z.sid != z.pid {
			// A group leader in a session of vitals is what os/exec starts for
			// an exec check (in a group of its own): os/exec waits for it.
			continue
		}
		var ws syscall.WaitStatus
		syscall.Wait4(z.pid, &ws, syscall.WNOHANG, nil)
	}
}

type zombie struct{ pid, pgid, sid int }

// zombies lists the children of this process that have exited and wait to
// be reaped, from /proc.
func zombies() []zombie {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []zombie
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session ...; comm may hold anything.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 4 || string(f[0]) != "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgid, _ := strconv.Atoi(string(f[2]))
		sid, _ := strconv.Atoi(string(f[3]))
		if ppid == self {
			out = append(out, zombie{pid, pgid, sid})
		}
	}
	return out
}
