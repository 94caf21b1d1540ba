package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

func init() {
	register(experiment{
		ID:   "P5",
		What: "start to the first 200: `vitals run` on /livez against `pebble run` on /v1/health",
		Run:  runP5,
	})
}

const (
	// p5Poll is how often the first 200 is asked for, each time on a new
	// connection: the figures are at most this late.
	p5Poll = time.Millisecond
	// p5CPU: the program under test is not pinned, so that the time counted
	// is its own start and not also taskset's, and it has every core, as a
	// real start does.
	p5CPU = -1
)

// p5Program is one way of starting: vitals with its check at a level, or
// Pebble.
type p5Program struct {
	name  string
	path  string // the URL path asked until it answers 200
	start func(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error)
}

func runP5(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	dir, err := os.MkdirTemp("", "bench-p5")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	// The one check of every program: GET of a local server answering 200.
	target, err := harness.StartTarget()
	if err != nil {
		return nil, err
	}
	defer target.Close()
	url := target.URL

	// Both as their releases are built (stripped, -trimpath): the start
	// reads and maps the binary users run.
	vitals, err := buildVitalsRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	pebbleBin, err := buildPebbleRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	vitalsAt := func(level string) func(context.Context, *harness.Env, string, string) (*harness.Proc, error) {
		return func(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error) {
			return startVitals(ctx, env, vitalsRun{dir: dir, listen: addr, cpu: p5CPU, bin: vitals,
				config: fmt.Sprintf("checks:\n  target:\n    level: %s\n    http: {url: %q}\n", level, url)})
		}
	}
	programs := []p5Program{
		{name: "vitals /livez", path: "/livez", start: vitalsAt("live")},
		{name: "Pebble /v1/health", path: "/v1/health",
			start: func(ctx context.Context, env *harness.Env, dir, addr string) (*harness.Proc, error) {
				layer := fmt.Sprintf("summary: bench P5\nchecks:\n  target:\n    override: replace\n    level: alive\n    http:\n      url: %s\n", url)
				return startPebbleBin(env, pebbleBin, dir, layer, addr, p5CPU)
			}},
		{name: "vitals /readyz", path: "/readyz", start: vitalsAt("ready")},
	}

	runs := 20
	if env.Quick {
		runs = 3
	}
	took := make([][]time.Duration, len(programs))
	cpu := make([][]time.Duration, len(programs))
	for run := range runs {
		for i, pr := range programs {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			d, c, err := p5Once(ctx, env, pr, filepath.Join(dir, fmt.Sprintf("%d-%d", run, i)))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", pr.name, err)
			}
			env.Logf("P5 run %d: %-18s first 200 after %8s, %8s of CPU", run+1, pr.name, harness.Millis(d, 1), harness.Millis(c, 1))
			took[i] = append(took[i], d)
			cpu[i] = append(cpu[i], c)
		}
	}
	live, pebble, ready := harness.Median(took[0]), harness.Median(took[1]), harness.Median(took[2])
	liveCPU, pebbleCPU := harness.Median(cpu[0]), harness.Median(cpu[1])
	ms := func(d time.Duration) string { return harness.Millis(d, 1) }
	ratio := func(a, b time.Duration) float64 { return float64(a) / float64(b) }
	return []harness.Row{
		{ID: "P5", What: fmt.Sprintf("`vitals run` start → first 200 on /livez (median of %d)", runs),
			Vitals: ms(live), Target: "≤ 50 ms", Met: live <= 50*time.Millisecond},
		{ID: "P5", What: "start → first 200: vitals /livez ÷ Pebble /v1/health (release builds)",
			Vitals: ms(live), Base: ms(pebble), Ratio: ratio(live, pebble), Target: "≤ 0.5×", Met: ratio(live, pebble) <= 0.5},
		{ID: "P5", What: "CPU used from start to first 200: vitals ÷ Pebble",
			Vitals: ms(liveCPU), Base: ms(pebbleCPU), Ratio: ratio(liveCPU, pebbleCPU)},
		{ID: "P5", What: "`vitals run` start → first 200 on /readyz: its http check ran and passed",
			Vitals: ms(ready)},
	}, nil
}

// p5Once starts pr with its files in dir and returns the time from the exec
// to the first 200 on its path, and the CPU time the process had used by
// then, over all its threads (less moved than the first by other processes
// taking the machine's cores meanwhile): nanoseconds from schedstat, where
// /proc/PID/stat counts 10ms ticks, coarser than the whole start.
func p5Once(ctx context.Context, env *harness.Env, pr p5Program, dir string) (took, cpu time.Duration, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	addr, err := harness.LoopbackAddr()
	if err != nil {
		return 0, 0, err
	}
	p, err := pr.start(ctx, env, dir, addr)
	if err != nil {
		return 0, 0, err
	}
	defer p.Stop(5 * time.Second)
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	first, err := harness.WaitHTTP(wait, p, "http://"+addr+pr.path, http.StatusOK, p5Poll)
	if err != nil {
		return 0, 0, err
	}
	used, _, err := harness.Schedstat(p.Pid())
	if err != nil {
		return 0, 0, err
	}
	return first.Sub(p.Started), used, nil
}
