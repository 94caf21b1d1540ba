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

// P9 measures what the sidecar costs a pod before it does anything: the
// bytes of the binary an image ships, and the memory `vitals run` holds with
// one check, each against its peer built alike (releaseFlags): Pebble for
// the agent, grpc-health-probe for the probe build.
func init() {
	register(experiment{
		ID:   "P9",
		What: "the sidecar's cost: release binary sizes, and `vitals run`'s resident memory with one http check, against Pebble",
		Run:  runP9,
	})
}

const (
	p9Period = time.Second
	// The program under test on one core, the target on the other, as in P2.
	p9CPU       = 0
	p9TargetCPU = 1
)

// p9Program is one agent holding one http check.
type p9Program struct {
	name   string
	health string // its endpoint that answers 200 once it serves
	start  func(dir, addr string) (*harness.Proc, error)
}

func runP9(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	dir, err := os.MkdirTemp("", "bench-p9")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	vitals, err := buildVitalsRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	vitalsProbe, err := buildVitalsProbeRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	pebble, err := buildPebbleRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	healthProbe, err := buildHealthProbeRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	size := func(bin string) (int64, error) {
		fi, err := os.Stat(bin)
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}
	var sizes [4]int64
	for i, bin := range []string{vitals, pebble, vitalsProbe, healthProbe} {
		if sizes[i], err = size(bin); err != nil {
			return nil, err
		}
	}
	rows := []harness.Row{
		{ID: "P9", What: "release binary size (stripped, -trimpath): vitals ÷ Pebble",
			Vitals: harness.MiB(sizes[0]), Base: harness.MiB(sizes[1]), Ratio: float64(sizes[0]) / float64(sizes[1]),
			Target: "≤ 1.5×", Met: 2*sizes[0] <= 3*sizes[1]},
		{ID: "P9", What: "release binary size: the probe build ÷ grpc-health-probe",
			Vitals: harness.MiB(sizes[2]), Base: harness.MiB(sizes[3]), Ratio: float64(sizes[2]) / float64(sizes[3])},
	}

	tp, target, err := startGETTarget(ctx, env, dir, p9TargetCPU)
	if err != nil {
		return rows, err
	}
	defer tp.Stop(5 * time.Second)
	url := target + "/c1"
	programs := []p9Program{
		{name: "`vitals run`", health: "/readyz", start: func(dir, addr string) (*harness.Proc, error) {
			return startVitals(ctx, env, vitalsRun{dir: dir, listen: addr, cpu: p9CPU, bin: vitals, args: []string{"--log-level", "warn"},
				config: fmt.Sprintf("checks:\n  c1:\n    http: {url: %q}\n    period: %v\n", url, p9Period)})
		}},
		{name: "`pebble run`", health: "/v1/health", start: func(dir, addr string) (*harness.Proc, error) {
			layer := fmt.Sprintf("summary: bench P9\nchecks:\n  c1:\n    override: replace\n    level: ready\n    period: %v\n    http:\n      url: %s\n", p9Period, url)
			return startPebbleBin(env, pebble, dir, layer, addr, p9CPU)
		}},
	}

	window := env.Scale(25*time.Second, 3*time.Second)
	mem := make([][]harness.Memory, len(programs))
	for round := range env.Rounds {
		for k := range programs {
			i := (round + k) % len(programs)
			if ctx.Err() != nil {
				return rows, ctx.Err()
			}
			m, err := p9Measure(ctx, programs[i], filepath.Join(dir, fmt.Sprintf("%d-%d", round, i)), window)
			if err != nil {
				return rows, fmt.Errorf("%s: %w", programs[i].name, err)
			}
			env.Logf("P9 round %d: %-12s after %v: RSS %s (anon %s, file %s), peak %s", round+1, programs[i].name, window,
				harness.MiB(m.RSS), harness.MiB(m.Anon), harness.MiB(m.File), harness.MiB(m.Peak))
			mem[i] = append(mem[i], m)
		}
	}
	median := func(i int, of func(harness.Memory) int64) int64 {
		var xs []int64
		for _, m := range mem[i] {
			xs = append(xs, of(m))
		}
		return harness.Median(xs)
	}
	const vit, peb = 0, 1
	for _, f := range []struct {
		what   string
		of     func(harness.Memory) int64
		target string
	}{
		{"resident memory (VmRSS)", func(m harness.Memory) int64 { return m.RSS }, "≤ 1.0×"},
		{"its anonymous part (RssAnon: heap, stacks)", func(m harness.Memory) int64 { return m.Anon }, ""},
		{"its file part (RssFile: the binary's pages touched)", func(m harness.Memory) int64 { return m.File }, ""},
		{"peak resident memory (VmHWM)", func(m harness.Memory) int64 { return m.Peak }, ""},
	} {
		v, b := median(vit, f.of), median(peb, f.of)
		r := harness.Row{ID: "P9",
			What:   fmt.Sprintf("%s after %v with one http check @%v (median of %d) ÷ %s", f.what, window, p9Period, env.Rounds, programs[peb].name),
			Vitals: harness.MiB(v), Base: harness.MiB(b), Ratio: float64(v) / float64(b)}
		if f.target != "" {
			r.Target, r.Met = f.target, v <= b
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// p9Measure starts pr, waits until it serves 200 on its endpoint, lets it
// run its check for window, and reads its memory; its endpoint must still
// answer 200 then (the check passes).
func p9Measure(ctx context.Context, pr p9Program, dir string, window time.Duration) (harness.Memory, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return harness.Memory{}, err
	}
	addr, err := harness.LoopbackAddr()
	if err != nil {
		return harness.Memory{}, err
	}
	p, err := pr.start(dir, addr)
	if err != nil {
		return harness.Memory{}, err
	}
	defer p.Stop(5 * time.Second)
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = harness.WaitHTTP(wait, p, "http://"+addr+pr.health, http.StatusOK, 10*time.Millisecond)
	cancel()
	if err != nil {
		return harness.Memory{}, err
	}
	if err := harness.Sleep(ctx, window); err != nil {
		return harness.Memory{}, err
	}
	if _, err := harness.Get("http://" + addr + pr.health); err != nil {
		return harness.Memory{}, fmt.Errorf("at the window's end: %w", err)
	}
	return p.Memory()
}
