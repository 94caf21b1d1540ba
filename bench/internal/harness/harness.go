// Package harness holds what every benchmark of bench/ shares: building the
// programs under test (vitals and the pinned peers) once per run, starting them
// in processes of their own pinned to a core, reading their CPU time and peak
// RSS from /proc, and the rows of the one table the command prints.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
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
func (e *Env) Build(ctx context.Context, name, dir, pkg string, tags ...string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.built[name]; ok {
		return p, nil
	}
	out := filepath.Join(e.Bin, name)
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
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

// Proc is a program under test, running in a process group of its own.
type Proc struct {
	Cmd     *exec.Cmd
	Started time.Time
	done    chan struct{}
	err     error
	final   Usage
}

// Start starts argv in dir with env added to the environment, pinned to cpu
// with taskset when cpu >= 0 and taskset is installed (so that the load
// generator on another core does not compete with it). Its output goes to
// log.
func (e *Env) Start(dir string, env []string, cpu int, argv ...string) (*Proc, error) {
	if cpu >= 0 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{ts, "-c", strconv.Itoa(cpu)}, argv...)
		}
	}
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
		err := cmd.Wait() // "exit status 1", "signal: killed": what WaitHTTP says
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.final = Usage{CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), PeakRSS: ru.Maxrss * 1024}
		}
		p.err = err
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id (taskset execs the program in the same process).
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Stop sends SIGTERM to the process group, then SIGKILL after grace, waits,
// and returns what the process used over its life.
func (p *Proc) Stop(grace time.Duration) Usage {
	syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
	}
	syscall.Kill(-p.Pid(), syscall.SIGKILL) // whatever it left in its group
	return p.final
}

// Usage is what a process used: CPU time (user + system) and peak resident
// memory.
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
	u := Usage{CPU: time.Duration(ut+st) * time.Second / ticks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read peak RSS of pid %d: %w", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			u.PeakRSS = kb * 1024
		}
	}
	return u, nil
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

// Percentile returns the p-th percentile (0–100) of ds by nearest rank; ds is
// sorted in place.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds))*p/100+0.5) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// Median returns the median of xs (xs is sorted in place).
func Median(xs []float64) float64 {
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

// Row is one line of the table: what vitals measured, against what baseline,
// their ratio, and whether the target holds.
type Row struct {
	ID     string // P1 … P5
	What   string // e.g. "/readyz req/s ÷ bare net/http"
	Vitals string // vitals' figure, with its unit
	Base   string // the baseline's figure ("" when the target is absolute)
	Ratio  float64
	Target string // e.g. "≥ 0.9×"; "" for a figure shown for context only
	Met    bool
}

// ErrSkipped marks an experiment that could not run here, with why.
var ErrSkipped = errors.New("skipped")

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
