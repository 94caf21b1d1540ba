package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
	"github.com/vitals-dev/vitals/health"
)

// P3 runs bench/scale: one process whose Monitor has 10,000 ready checks,
// each returning nil every 10s, pinned to one core, in three ways:
//
//   - no jitter, each check's initial delay spread evenly over the period, so
//     that every run has a planned time: the lateness of the runs (the engine
//     does not tell when it meant a jittered run to begin) and the CPU time.
//     Checks added at different times fall like this; the default jitter
//     keeps those started together in four phases of their period, so this
//     is the most a service's schedule costs;
//   - the same without a Monitor: a goroutine and a timer per check and
//     nothing else (-floor), the least any scheduler built that way costs on
//     this machine, as the baseline;
//   - with the default jitter from Start, as a service starts: the CPU time
//     with the runs in four phases, the heap after the window, and the
//     heap once every check keeps its 60 results (filled with RunNow, as
//     after 10 minutes).
//
// The first two alternate for -rounds rounds, each a share of the window,
// so that the machine's drift hits both alike. CPU time is the harness's
// reading of /proc over the window, which starts once every check has run.
// With BENCH_P3_PROFILE=DIR, each run also writes its CPU profile of the
// window and its heap profiles into DIR.
func init() {
	register(experiment{ID: "P3", What: "10,000 checks every 10s in one process (library): CPU, heap, lateness", Run: runP3})
}

const (
	p3Checks  = 10000
	p3Period  = 10 * time.Second
	p3Core    = 1 // the core the program is pinned to
	p3Target  = 0.02
	p3Heap    = 20e6 // bytes: the target's 20 MB, 19.1 MiB as bench writes memory
	p3MaxLate = 20 * time.Millisecond
)

// scaleConfig is one run of bench/scale.
type scaleConfig struct {
	name           string
	period, spread time.Duration // spread 0: the default jitter
	fill           int
	floor          bool
}

func runP3(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	bin, err := env.Build(ctx, "scale", "bench", "./scale")
	if err != nil {
		return nil, err
	}
	window := env.Scale(60*time.Second, 2*time.Second)
	// Quick runs the checks every 2s, spread over 1s, so that some run in its
	// short window.
	period, spread := p3Period, p3Period
	fill := health.DefaultHistory
	rounds := env.Rounds
	if env.Quick {
		period, spread, fill, rounds = 2*time.Second, time.Second, 3, 1
	}
	// The spread Monitor and its baseline alternate, each round a share of
	// the window, so that the machine's drift hits both alike.
	var even, floor []scaleResult
	for round := range rounds {
		for _, c := range []scaleConfig{
			{name: fmt.Sprintf("spread-%d", round+1), period: period, spread: spread},
			{name: fmt.Sprintf("floor-%d", round+1), period: period, spread: spread, floor: true},
		} {
			r, err := runScale(ctx, env, bin, c, window/time.Duration(rounds))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.name, err)
			}
			if c.floor {
				floor = append(floor, r)
			} else {
				even = append(even, r)
			}
		}
	}
	jittered, err := runScale(ctx, env, bin, scaleConfig{name: "jitter", period: period, fill: fill}, window)
	if err != nil {
		return nil, fmt.Errorf("jitter: %w", err)
	}

	heap := func(l scaleLine, rss int64) string {
		return fmt.Sprintf("%s live, %s in use (stacks %s, peak RSS %s)",
			harness.MiB(l.HeapAlloc), harness.MiB(l.HeapInuse), harness.MiB(l.StackInuse), harness.MiB(rss))
	}
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	evenCPU, floorCPU, jitterCPU := p3CPUOf(even), p3CPUOf(floor), p3CPUOf([]scaleResult{jittered})
	evenLate, floorLate := p3LateOf(even), p3LateOf(floor)
	lastFloor := floor[len(floor)-1]
	rows := []harness.Row{
		{ID: "P3", What: "CPU, runs spread evenly over the period (no jitter); baseline: a goroutine and a timer per check",
			Vitals: evenCPU.text, Base: floorCPU.text, Ratio: ratio(evenCPU.share, floorCPU.share),
			Target: "≤ 2% of a core", Met: evenCPU.runs > 0 && evenCPU.share <= p3Target},
		{ID: "P3", What: "CPU, default jitter, the window after the first runs (the checks in four phases)",
			Vitals: jitterCPU.text, Target: "≤ 2% of a core", Met: jitterCPU.runs > 0 && jitterCPU.share <= p3Target},
		{ID: "P3", What: "lateness of a run, start − planned time (no jitter), p50 / p99 / max",
			Vitals: evenLate.text, Base: floorLate.text, Ratio: ratio(float64(evenLate.p99), float64(floorLate.p99)),
			Target: "p99 ≤ 20 ms", Met: evenCPU.runs > 0 && evenLate.p99 <= p3MaxLate},
		{ID: "P3", What: fmt.Sprintf("heap after the window, default jitter (%.1f results kept per check), after a GC", float64(jittered.window.Results)/p3Checks),
			Vitals: heap(jittered.window, jittered.rss), Base: heap(lastFloor.window, lastFloor.rss),
			Ratio:  ratio(float64(jittered.window.HeapAlloc), float64(lastFloor.window.HeapAlloc)),
			Target: "≤ 20 MB (19.1 MiB) heap", Met: jittered.window.HeapAlloc <= p3Heap},
		{ID: "P3", What: fmt.Sprintf("heap with every history full (%d results per check), after a GC", fill),
			Vitals: heap(jittered.full, jittered.rss), Target: "≤ 20 MB (19.1 MiB) heap", Met: jittered.full.HeapAlloc <= p3Heap},
	}
	if period != p3Period {
		for i := range rows {
			rows[i].What += fmt.Sprintf(" [period %v]", period)
		}
	}
	return rows, nil
}

// p3CPU is the CPU time of some rounds, as a share of a core.
type p3CPU struct {
	share float64 // their CPU time over their windows
	runs  int
	text  string
}

func p3CPUOf(rs []scaleResult) p3CPU {
	var cpu, wall, queued time.Duration
	var c p3CPU
	var shares []float64
	for _, r := range rs {
		cpu, wall, queued = cpu+r.cpu, wall+r.wall, queued+r.queued
		c.runs += r.window.Runs
		shares = append(shares, 100*r.cpu.Seconds()/r.wall.Seconds())
	}
	c.share = cpu.Seconds() / wall.Seconds()
	c.text = fmt.Sprintf("%.2f%% of a core", 100*c.share)
	if len(rs) > 1 {
		slices.Sort(shares)
		c.text += fmt.Sprintf(" (rounds %.2f–%.2f%%)", shares[0], shares[len(shares)-1])
	}
	c.text += fmt.Sprintf("; %d runs in %v, %v of it waiting for the core", c.runs, wall.Round(time.Second), queued.Round(time.Millisecond))
	return c
}

// p3Late is the lateness of some rounds: the medians of their p50 and p99,
// and the largest.
type p3Late struct {
	p99  time.Duration
	text string
}

func p3LateOf(rs []scaleResult) p3Late {
	var p50s, p99s []time.Duration
	var most time.Duration
	for _, r := range rs {
		p50s = append(p50s, time.Duration(r.window.LateP50ns))
		p99s = append(p99s, time.Duration(r.window.LateP99ns))
		most = max(most, time.Duration(r.window.LateMaxns))
	}
	ms := func(d time.Duration) string { return harness.Millis(d, 2) }
	l := p3Late{p99: harness.Median(p99s)}
	l.text = fmt.Sprintf("%s / %s / %s", ms(harness.Median(p50s)), ms(l.p99), ms(most))
	if len(rs) > 1 { // harness.Median sorted p99s
		l.text += fmt.Sprintf(" (p99 of rounds %s–%s)", ms(p99s[0]), ms(p99s[len(p99s)-1]))
	}
	return l
}

// scaleLine is a line bench/scale writes (its Line).
type scaleLine struct {
	Phase      string `json:"phase"`
	Runs       int    `json:"runs"`
	LateP50ns  int64  `json:"lateP50ns"`
	LateP99ns  int64  `json:"lateP99ns"`
	LateMaxns  int64  `json:"lateMaxns"`
	HeapAlloc  uint64 `json:"heapAlloc"`
	HeapInuse  uint64 `json:"heapInuse"`
	StackInuse uint64 `json:"stackInuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
	Results    int    `json:"results"`
}

// scaleResult is one run of bench/scale.
type scaleResult struct {
	cpu, wall time.Duration // CPU time over the window, and the window
	queued    time.Duration // time its threads waited for the core in the window
	rss       int64         // peak RSS at the window's end
	window    scaleLine
	full      scaleLine // with fill > 0
}

// runScale starts bench/scale, waits until every check has run once, and
// measures its CPU time over window.
func runScale(ctx context.Context, env *harness.Env, bin string, c scaleConfig, window time.Duration) (scaleResult, error) {
	dir, err := os.MkdirTemp("", "vitals-bench-p3")
	if err != nil {
		return scaleResult{}, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "scale.jsonl")
	args := []string{bin, "-out", out, "-checks", strconv.Itoa(p3Checks), "-period", c.period.String(),
		"-spread", c.spread.String(), "-fill", strconv.Itoa(c.fill)}
	if c.floor {
		args = append(args, "-floor")
	}
	if prof := os.Getenv("BENCH_P3_PROFILE"); prof != "" { // a directory: where the profiles go
		args = append(args, "-cpuprofile", filepath.Join(prof, c.name+".cpu"), "-memprofile", filepath.Join(prof, c.name+".heap"))
	}
	how := "default jitter"
	if c.spread > 0 {
		how = "no jitter, initial delays spread over " + c.spread.String()
	}
	if c.floor {
		how += ", a goroutine and a timer per check (no Monitor)"
	}
	env.Logf("P3: %d checks every %v, %s", p3Checks, c.period, how)
	p, err := env.Start(dir, nil, p3Core, args...)
	if err != nil {
		return scaleResult{}, err
	}
	defer p.Stop(5 * time.Second)

	if _, err := p3WaitLine(ctx, p, out, "warm", 2*c.period+30*time.Second); err != nil {
		return scaleResult{}, err
	}
	var r scaleResult
	u0, err := p.Now()
	if err != nil {
		return r, err
	}
	_, q0, err := harness.Schedstat(p.Pid())
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	syscall.Kill(p.Pid(), syscall.SIGUSR1)
	if err := harness.Sleep(ctx, window); err != nil {
		return r, err
	}
	u1, err := p.Now()
	if err != nil {
		return r, err
	}
	_, q1, err := harness.Schedstat(p.Pid())
	if err != nil {
		return r, err
	}
	r.queued = q1 - q0
	r.wall = time.Since(t0)
	syscall.Kill(p.Pid(), syscall.SIGUSR2)
	r.cpu, r.rss = u1.CPU-u0.CPU, u1.PeakRSS
	if r.window, err = p3WaitLine(ctx, p, out, "window", time.Minute); err != nil {
		return r, err
	}
	env.Logf("P3: %d runs in %v, CPU %v; heap %s in use, %s live", r.window.Runs, r.wall.Round(time.Millisecond), r.cpu, harness.MiB(r.window.HeapInuse), harness.MiB(r.window.HeapAlloc))
	if c.fill > 0 {
		if r.full, err = p3WaitLine(ctx, p, out, "full", 5*time.Minute); err != nil {
			return r, err
		}
		env.Logf("P3: %d results kept: heap %s in use, %s live", r.full.Results, harness.MiB(r.full.HeapInuse), harness.MiB(r.full.HeapAlloc))
	}
	return r, nil
}

// p3WaitLine polls the output file of bench/scale until it holds a line of the
// phase, the program exits, or timeout passes.
func p3WaitLine(ctx context.Context, p *harness.Proc, file, phase string, timeout time.Duration) (scaleLine, error) {
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(file); err == nil {
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				var l scaleLine
				if json.Unmarshal(sc.Bytes(), &l) == nil && l.Phase == phase {
					return l, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return scaleLine{}, fmt.Errorf("no %s line from bench/scale in %v", phase, timeout)
		}
		select {
		case <-ctx.Done():
			return scaleLine{}, ctx.Err()
		case <-p.Exited():
			return scaleLine{}, fmt.Errorf("bench/scale exited before its %s line", phase)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
