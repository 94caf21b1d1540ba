// Package harness holds what every benchmark of bench/ shares: building the
// programs under test (vitals and the pinned peers) once per run, starting them
// in processes of their own pinned to a core, reading their CPU time and peak
// RSS from /proc, the figures' formats, and the rows of the one table the
// command prints. It imports the standard library only, so that bench's own
// programs (bench/scale, bench/servers/load) may use it too.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Env is one run of the benchmarks: where the binaries go, how long each
// measurement lasts, and where progress is logged.
type Env struct {
	// Root is the repository's root (the directory holding go.work).
	Root string
	// Bin is the directory the programs under test are built into.
	Bin string
	// Quick shortens every measurement to a few seconds: a check that the
	// benchmarks run, not a measurement (bench's own tests use it).
	Quick bool
	// Rounds is how many times each alternating comparison is repeated
	// (default 3, as BENCHMARKS.md reports).
	Rounds int
	// Log receives progress lines and the output of the programs under
	// test; the table goes to stdout. Writes to it are serialized.
	Log io.Writer

	mu    sync.Mutex
	built map[string]string

	pinMu sync.Mutex
	pins  map[int][]string // by core: the taskset prefix that pins to it, or nil

	logMu sync.Mutex
}

// Logf writes one progress line.
func (e *Env) Logf(format string, args ...any) {
	fmt.Fprintf(e.log(), format+"\n", args...)
}

// log is Log as the programs under test and Logf write to it: an *os.File
// as it is (the programs write to it themselves, and a file's writes do not
// interleave within a line), anything else behind a lock, since os/exec
// copies each program's output to it in goroutines of its own.
func (e *Env) log() io.Writer {
	if f, ok := e.Log.(*os.File); ok {
		return f
	}
	return lockedWriter{&e.logMu, e.Log}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Scale returns full, or short when the run is Quick.
func (e *Env) Scale(full, short time.Duration) time.Duration {
	if e.Quick {
		return short
	}
	return full
}

// Build builds the main package pkg of the module in dir (relative to Root)
// into Bin/name once per run, statically (CGO_ENABLED=0), and returns the
// binary's path. Later calls with the same name return the first build.
func (e *Env) Build(ctx context.Context, name, dir, pkg string, flags ...string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.built[name]; ok {
		return p, nil
	}
	out := filepath.Join(e.Bin, name)
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Dir = filepath.Join(e.Root, dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	e.Logf("building %s (%s in %s)", name, pkg, dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s (%s in %s): %w\n%s", name, pkg, dir, err, b)
	}
	if e.built == nil {
		e.built = map[string]string{}
	}
	e.built[name] = out
	return out, nil
}

// Pin returns argv pinned to cpu with taskset (so that the load generator on
// another core does not compete with it), or argv as it is when cpu < 0.
// Where taskset is not installed, or cpu is not among the cores this process
// may run on (a container's cpuset), argv runs unpinned: Pin says so in the
// log, once for each core, with why.
func (e *Env) Pin(cpu int, argv []string) []string {
	if cpu < 0 {
		return argv
	}
	e.pinMu.Lock()
	defer e.pinMu.Unlock()
	prefix, ok := e.pins[cpu]
	if !ok {
		var why error
		prefix, why = taskset(cpu)
		if why != nil {
			e.Logf("not pinning to core %d: %v; the programs meant for it run on any core", cpu, why)
		}
		if e.pins == nil {
			e.pins = map[int][]string{}
		}
		e.pins[cpu] = prefix
	}
	if prefix == nil {
		return argv
	}
	return append(slices.Clip(prefix), argv...)
}

// taskset returns the command that pins a program to cpu, or why there is
// none.
func taskset(cpu int) ([]string, error) {
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return nil, errors.New("taskset is not installed")
	}
	if err := usable(cpu); err != nil {
		return nil, err
	}
	return []string{ts, "-c", strconv.Itoa(cpu)}, nil
}

// usable says why this process may not run on cpu, if it may not.
func usable(cpu int) error {
	allowed, err := allowedCPUs()
	if err != nil {
		return err
	}
	if !slices.Contains(allowed, cpu) {
		return fmt.Errorf("this process may run on cores %v only", allowed)
	}
	return nil
}

// allowedCPUs returns the cores this process may run on, from
// sched_getaffinity(2).
func allowedCPUs() ([]int, error) {
	var mask [16]uint64 // 1,024 cores
	n, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
	if errno != 0 {
		return nil, fmt.Errorf("read the cores this process may run on: sched_getaffinity: %w", errno)
	}
	var cpus []int
	for i := range int(n) * 8 { // n: the bytes of the mask the kernel wrote
		if mask[i/64]&(1<<(i%64)) != 0 {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// Proc is a program under test, running in a process group of its own.
type Proc struct {
	Cmd     *exec.Cmd
	Started time.Time
	done    chan struct{}
	err     error
}

// Start starts argv in dir with env added to the environment, pinned to cpu
// (see Pin). Its output goes to log.
func (e *Env) Start(dir string, env []string, cpu int, argv ...string) (*Proc, error) {
	argv = e.Pin(cpu, argv)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = e.log(), e.log()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Output copied through a pipe (Log is no file) is not waited for past
	// this once the process has exited, if something it left holds the pipe.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(argv, " "), err)
	}
	p := &Proc{Cmd: cmd, Started: time.Now(), done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait() // "exit status 1", "signal: killed": what WaitHTTP says
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id (taskset execs the program in the same process).
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Exited is closed once the process has exited and been waited for.
func (p *Proc) Exited() <-chan struct{} { return p.done }

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits for the process.
func (p *Proc) Stop(grace time.Duration) {
	syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
	}
	syscall.Kill(-p.Pid(), syscall.SIGKILL) // whatever it left in its group
}

// Usage is what a process has used so far: CPU time (user + system) and
// peak resident memory.
type Usage struct {
	CPU     time.Duration
	PeakRSS int64 // bytes
}

// Now reads the running process's CPU time so far (/proc/PID/stat) and peak
// RSS so far (VmHWM in /proc/PID/status).
func (p *Proc) Now() (Usage, error) {
	pid := p.Pid()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	// The fields after the command's name, which is in parentheses and may
	// hold spaces: utime and stime are the 14th and 15th fields overall.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return Usage{}, fmt.Errorf("read CPU time of pid %d: short /proc/%d/stat", pid, pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ, 100 on Linux
	m, err := p.Memory()
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPU: time.Duration(ut+st) * time.Second / ticks, PeakRSS: m.Peak}, nil
}

// Memory is a process's resident memory as /proc/PID/status splits it, in
// bytes: RSS = RssAnon + RssFile + RssShmem. RssAnon is what the process
// wrote (heap, stacks, the runtime's data); RssFile the pages of files it
// maps that it has touched, mostly its own binary's.
type Memory struct {
	RSS, Anon, File, Peak int64 // VmRSS, RssAnon, RssFile, VmHWM
}

// Memory reads the process's resident memory now.
func (p *Proc) Memory() (Memory, error) {
	pid := p.Pid()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read the memory of pid %d: %w", pid, err)
	}
	var m Memory
	fields := map[string]*int64{"VmRSS:": &m.RSS, "RssAnon:": &m.Anon, "RssFile:": &m.File, "VmHWM:": &m.Peak}
	for line := range strings.Lines(string(status)) {
		for name, to := range fields {
			if v, ok := strings.CutPrefix(line, name); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					return Memory{}, fmt.Errorf("read the memory of pid %d: %s %w", pid, name, err)
				}
				*to = kb * 1024
				delete(fields, name)
			}
		}
	}
	if len(fields) > 0 {
		return Memory{}, fmt.Errorf("read the memory of pid %d: /proc/%d/status has no %v", pid, pid, slices.Sorted(maps.Keys(fields)))
	}
	return m, nil
}

// Schedstat sums, over the threads of pid, the time they ran on a core and
// the time they waited on a run queue so far: the first two fields of each
// /proc/PID/task/TID/schedstat, in nanoseconds (/proc/PID/stat counts 10ms
// ticks). The wait tells what other processes took from pid's cores.
func Schedstat(pid int) (onCPU, waited time.Duration, err error) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if len(tasks) == 0 {
		return 0, 0, fmt.Errorf("read the scheduler's times of pid %d: no /proc/%d/task/*/schedstat", pid, pid)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return 0, 0, fmt.Errorf("read the scheduler's times of pid %d: %s holds %q", pid, t, b)
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, fmt.Errorf("read the scheduler's times of pid %d: %s: %w", pid, t, err)
		}
		onCPU += time.Duration(run)
		waited += time.Duration(wait)
	}
	return onCPU, waited, nil
}

// WaitHTTP polls url every interval until it answers want, and returns when
// it first did. It gives up at ctx's end or when p exits.
func WaitHTTP(ctx context.Context, p *Proc, url string, want int, interval time.Duration) (time.Time, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == want {
				return time.Now(), nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("wait for %d from %s: %w (last error: %v)", want, url, ctx.Err(), err)
		case <-p.done:
			return time.Time{}, fmt.Errorf("wait for %d from %s: the process exited (%v)", want, url, p.err)
		case <-time.After(interval):
		}
	}
}

// Get GETs url on a new connection, within 5s, and returns the body of a 200.
func Get(url string) (string, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b), nil
}

// Sleep waits d, or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Percentile returns the p-th percentile (0–100) of xs by nearest rank: the
// smallest value that at least p% of xs are at or below. xs is sorted in
// place.
func Percentile[T ~int64 | ~float64](xs []T, p float64) T {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(float64(len(xs))*p/100)) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// Median returns the median of xs: the middle value, or the mean of the two
// middle ones. xs is sorted in place.
func Median[T ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// The figures of the table and the log are written by these, one unit each:
// milliseconds and microseconds for time, MiB (2^20 bytes) for memory.

// Millis writes d in milliseconds with decimals places: "1.21 ms".
func Millis(d time.Duration, decimals int) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', decimals, 64) + " ms"
}

// Micros writes d in microseconds with decimals places: "19.3 µs".
func Micros(d time.Duration, decimals int) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', decimals, 64) + " µs"
}

// MiB writes bytes in MiB with one decimal place: "33.6 MiB".
func MiB[T ~int64 | ~uint64](bytes T) string {
	return strconv.FormatFloat(float64(bytes)/(1<<20), 'f', 1, 64) + " MiB"
}

// Row is one line of the table: what vitals measured, against what baseline,
// their ratio, and whether the target holds.
type Row struct {
	ID     string // P1 … P9
	What   string // e.g. "/readyz req/s ÷ bare net/http"
	Vitals string // vitals' figure, with its unit
	Base   string // the baseline's figure ("" when the target is absolute)
	Ratio  float64
	Target string // e.g. "≥ 0.9×"; "" for a figure shown for context only
	Met    bool
}

// Markdown writes rows as one Markdown table.
func Markdown(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| id | what | vitals | baseline | ratio | target | met |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	for _, r := range rows {
		ratio := ""
		if r.Ratio != 0 {
			ratio = strconv.FormatFloat(r.Ratio, 'f', 2, 64)
		}
		met := "no"
		switch {
		case r.Target == "":
			met = "" // a figure shown for context, with no target of its own
		case r.Met:
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.ID, r.What, r.Vitals, r.Base, ratio, r.Target, met)
	}
}
