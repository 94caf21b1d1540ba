package harness

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// A Runner runs short programs to their exit, one at a time, each started
// pinned to one core without taskset: from a thread of bench's own pinned to
// that core, since a process starts with the affinity of the thread that
// forks it. taskset would exec itself first, and its start would be counted
// with the program's.
type Runner struct {
	runs chan runRequest
	out  *os.File // what the programs write, kept for the error of one that fails
}

type runRequest struct {
	argv []string
	done chan runResult
}

type runResult struct {
	run Run
	err error
}

// Run is what one program took from its fork to its exit.
type Run struct {
	// Wall is the time from before the fork to after the wait for its exit.
	Wall time.Duration
	// CPU is its user and system time (getrusage), over all its threads.
	CPU time.Duration
}

// NewRunner starts a Runner whose programs run on cpu, or on any core when
// cpu < 0. Where cpu is not a core this process may run on, they run
// unpinned, and the log says so, as Pin does. Close it when done.
func (e *Env) NewRunner(cpu int) (*Runner, error) {
	out, err := os.CreateTemp("", "bench-runner-")
	if err != nil {
		return nil, err
	}
	os.Remove(out.Name()) // kept open: gone with the Runner
	if cpu >= 0 {
		if why := usable(cpu); why != nil {
			e.Logf("not pinning to core %d: %v; the programs meant for it run on any core", cpu, why)
			cpu = -1
		}
	}
	r := &Runner{runs: make(chan runRequest), out: out}
	started := make(chan error)
	go func() {
		// Never unlocked: the thread ends with this goroutine, and its
		// affinity with it, rather than going back to the runtime's pool.
		runtime.LockOSThread()
		if cpu >= 0 {
			if err := pinThread(cpu); err != nil {
				started <- err
				return
			}
		}
		started <- nil
		for req := range r.runs {
			run, err := r.run(req.argv)
			req.done <- runResult{run, err}
		}
	}()
	if err := <-started; err != nil {
		out.Close()
		return nil, err
	}
	return r, nil
}

// Run runs argv to its exit (argv[0] a path: nothing is looked up) with its
// output kept aside, and returns what it took. A program that does not exit
// 0 is an error, with its output.
func (r *Runner) Run(argv ...string) (Run, error) {
	done := make(chan runResult)
	r.runs <- runRequest{argv, done}
	res := <-done
	return res.run, res.err
}

// Close ends the Runner and its thread.
func (r *Runner) Close() {
	close(r.runs)
	r.out.Close()
}

// run is Run on the Runner's thread.
func (r *Runner) run(argv []string) (Run, error) {
	if err := r.out.Truncate(0); err != nil {
		return Run{}, err
	}
	if _, err := r.out.Seek(0, 0); err != nil {
		return Run{}, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = r.out, r.out // a file: no goroutine copies it
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		said, _ := io.ReadAll(io.NewSectionReader(r.out, 0, 64<<10))
		return Run{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, said)
	}
	st := cmd.ProcessState
	return Run{Wall: wall, CPU: st.UserTime() + st.SystemTime()}, nil
}

// pinThread pins the calling thread to cpu: sched_setaffinity(2) with the
// thread's own id (0).
func pinThread(cpu int) error {
	var mask [16]uint64 // 1,024 cores, as allowedCPUs reads them
	if cpu >= len(mask)*64 {
		return fmt.Errorf("pin to core %d: beyond the %d cores bench reads", cpu, len(mask)*64)
	}
	mask[cpu/64] = 1 << (cpu % 64)
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
	if errno != 0 {
		return fmt.Errorf("pin to core %d: sched_setaffinity: %w", cpu, errno)
	}
	return nil
}
