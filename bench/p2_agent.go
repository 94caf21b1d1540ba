package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

func init() {
	register(experiment{
		ID:   "P2",
		What: "agent CPU and peak RSS: 100 http checks every 1s against one local target, against bare Go GETs (batched and spread) and Pebble",
		Run:  runP2,
	})
}

const (
	p2Checks = 100
	p2Period = time.Second
	// The program under test runs on one core, the target on the other (the
	// machine has two), as in P1.
	p2CPU       = 0
	p2TargetCPU = 1
	// p2RateSlack is how far a program's GETs per second may be from
	// p2Checks, besides one period's GETs more or less over the window (whose
	// ends may cut through a burst of them): vitals spreads each run by up to
	// ±5% of the period, which averages out, and Pebble's tickers do not
	// drift.
	p2RateSlack = 0.05
)

// A p2Program is one program that sends the 100 GETs.
type p2Program struct {
	name string
	// health is the path of its own endpoint that must answer 200 before and
	// after the window: its checks pass. Empty for the limit, which has none.
	health string
	// start starts it with its files under dir, its endpoint (if any) on
	// addr, and its GETs to target ("http://127.0.0.1:PORT").
	start func(ctx context.Context, env *harness.Env, dir, addr, target string) (*harness.Proc, error)
}

// p2Sample is one program's figures over one window.
type p2Sample struct {
	cpu   time.Duration // CPU time (user + system) over the window, scaled to p2Minute
	rss   int64         // peak RSS (VmHWM) at the window's end, in bytes
	rate  float64       // GETs per second the target received
	conns float64       // new connections per second the target accepted
}

// p2Minute is what the CPU figures are given per: the experiment's window.
const p2Minute = 60 * time.Second

// runP2 runs each program in turn on one core, each round in another order:
// bench/limit -batch (the floor: the cheapest program that makes the GETs,
// all those due in a tick fired together), bench/limit with the GETs spread
// evenly over the period, vitals with the checks in a vitals.yaml, and Pebble
// with them in a layer, all sending their GETs to one target on the other
// core. Each gets a warm-up, then a window over which its CPU time, its peak
// RSS and the GETs the target received are measured.
func runP2(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	dir, err := os.MkdirTemp("", "bench-p2")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	limit, err := env.Build(ctx, "limit", "bench", "./limit")
	if err != nil {
		return nil, err
	}
	if _, err := buildVitals(ctx, env); err != nil {
		return nil, err
	}
	if _, err := buildPebble(ctx, env); err != nil {
		return nil, err
	}

	tp, target, err := startGETTarget(ctx, env, dir, p2TargetCPU)
	if err != nil {
		return nil, err
	}
	defer tp.Stop(5 * time.Second)

	limitGETs := func(args ...string) func(context.Context, *harness.Env, string, string, string) (*harness.Proc, error) {
		return func(_ context.Context, env *harness.Env, dir, _, target string) (*harness.Proc, error) {
			argv := append([]string{limit}, args...)
			argv = append(argv, "-n", strconv.Itoa(p2Checks), "-period", p2Period.String(), target+"/c%d")
			return env.Start(dir, nil, p2CPU, argv...)
		}
	}
	programs := []p2Program{
		{name: "bare Go GETs, batched (bench/limit -batch)", start: limitGETs("-batch")},
		{name: "bare Go GETs, spread (bench/limit)", start: limitGETs()},
		{name: "vitals", health: "/readyz",
			start: func(ctx context.Context, env *harness.Env, dir, addr, target string) (*harness.Proc, error) {
				// Warnings only: the 100 "check passed" lines at the start
				// would flood the bench's output; nothing is logged in the
				// window either way, as no check changes status.
				return startVitals(ctx, env, vitalsRun{dir: dir, listen: addr, config: p2VitalsChecks(target), cpu: p2CPU,
					args: []string{"--log-level", "warn"}})
			}},
		{name: "Pebble", health: "/v1/health",
			start: func(ctx context.Context, env *harness.Env, dir, addr, target string) (*harness.Proc, error) {
				return startPebble(ctx, env, dir, p2PebbleLayer(target), addr, p2CPU)
			}},
	}
	const batch, spread, vit, peb = 0, 1, 2, 3

	warm := env.Scale(10*time.Second, time.Second)
	window := env.Scale(p2Minute, 3*time.Second)
	samples := make([][]p2Sample, len(programs))
	for round := range env.Rounds {
		// Each round starts with another program, so that a slow stretch
		// of the shared machine does not always hit the same one.
		for k := range programs {
			i := (round + k) % len(programs)
			pr := programs[i]
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s, err := p2Measure(ctx, env, pr, filepath.Join(dir, fmt.Sprintf("%d-%d", round, i)), target, warm, window)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", pr.name, err)
			}
			env.Logf("P2 round %d: %-42s CPU %6.2f s/min  peak RSS %s  %.1f GETs/s  %.1f new connections/s",
				round+1, pr.name, s.cpu.Seconds(), harness.MiB(s.rss), s.rate, s.conns)
			samples[i] = append(samples[i], s)
		}
		last := func(i int) p2Sample { return samples[i][len(samples[i])-1] }
		env.Logf("P2 round %d: vitals CPU ÷ batched limit %.2f, ÷ spread limit %.2f, ÷ Pebble %.2f; peak RSS ÷ Pebble %.2f", round+1,
			last(vit).cpu.Seconds()/last(batch).cpu.Seconds(), last(vit).cpu.Seconds()/last(spread).cpu.Seconds(),
			last(vit).cpu.Seconds()/last(peb).cpu.Seconds(), float64(last(vit).rss)/float64(last(peb).rss))
	}

	cpu := make([]float64, len(programs))
	perGET := make([]time.Duration, len(programs))
	rss := make([]float64, len(programs))
	rate := make([]float64, len(programs))
	for i, ss := range samples {
		var c, r, g []float64
		var e []time.Duration
		for _, s := range ss {
			c = append(c, s.cpu.Seconds())
			e = append(e, time.Duration(float64(s.cpu)/(s.rate*p2Minute.Seconds())))
			r = append(r, float64(s.rss))
			g = append(g, s.rate)
		}
		cpu[i], perGET[i], rss[i], rate[i] = harness.Median(c), harness.Median(e), harness.Median(r), harness.Median(g)
	}
	seconds := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " s" }
	perSecond := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "/s" }
	what := fmt.Sprintf("agent CPU-seconds per minute, %d http checks @%v (median of %d)", p2Checks, p2Period, env.Rounds)
	cpuRow := func(i int, target string, most float64) harness.Row {
		r := harness.Row{ID: "P2", What: what + " ÷ " + programs[i].name,
			Vitals: seconds(cpu[vit]), Base: seconds(cpu[i]), Ratio: cpu[vit] / cpu[i]}
		if target != "" {
			r.Target, r.Met = target, cpu[vit] <= most*cpu[i]
		}
		return r
	}
	rows := []harness.Row{
		// The limit is the cheapest program that makes the same GETs.
		cpuRow(batch, "≤ 1.5×", 1.5),
		cpuRow(spread, "", 0),
		cpuRow(peb, "≤ 0.1×", 0.1),
		{ID: "P2", What: "agent CPU per GET ÷ Pebble (which may fall behind its 100 GETs/s)",
			Vitals: harness.Micros(perGET[vit], 0), Base: harness.Micros(perGET[peb], 0), Ratio: float64(perGET[vit]) / float64(perGET[peb])},
		{ID: "P2", What: "agent peak RSS (VmHWM) ÷ Pebble",
			Vitals: harness.MiB(int64(rss[vit])), Base: harness.MiB(int64(rss[peb])), Ratio: rss[vit] / rss[peb], Target: "≤ 1.0×", Met: rss[vit] <= rss[peb]},
		{ID: "P2", What: "agent peak RSS (VmHWM) ÷ " + programs[batch].name,
			Vitals: harness.MiB(int64(rss[vit])), Base: harness.MiB(int64(rss[batch])), Ratio: rss[vit] / rss[batch]},
	}
	// The comparison holds when vitals and the limits did their 100 GETs a
	// second; Pebble's shortfall, if any, is a finding about Pebble.
	rows = append(rows, harness.Row{ID: "P2", What: "GETs per second the target received (100 checks @1s)",
		Vitals: perSecond(rate[vit]),
		Base:   fmt.Sprintf("batched %s, spread %s, Pebble %s", perSecond(rate[batch]), perSecond(rate[spread]), perSecond(rate[peb])),
		Target: fmt.Sprintf("vitals and limits %d ± %.0f%%", p2Checks, 100*p2RateSlack+100*p2Period.Seconds()/window.Seconds()),
		Met:    p2RateOK(rate[vit], window) && p2RateOK(rate[batch], window) && p2RateOK(rate[spread], window)})
	return rows, nil
}

// p2Measure starts pr, waits until its endpoint answers 200, lets it warm up,
// and measures it over window: its CPU time and peak RSS from /proc, and the
// GETs and connections the target saw meanwhile. Its endpoint must answer
// 200 at the window's start and end, and the target must have had GETs.
func p2Measure(ctx context.Context, env *harness.Env, pr p2Program, dir, target string, warm, window time.Duration) (p2Sample, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return p2Sample{}, err
	}
	addr, err := harness.LoopbackAddr()
	if err != nil {
		return p2Sample{}, err
	}
	p, err := pr.start(ctx, env, dir, addr, target)
	if err != nil {
		return p2Sample{}, err
	}
	defer p.Stop(5 * time.Second)
	healthy := func() error {
		if pr.health == "" {
			return nil
		}
		_, err := harness.Get("http://" + addr + pr.health)
		return err
	}
	if pr.health != "" {
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := harness.WaitHTTP(wait, p, "http://"+addr+pr.health, http.StatusOK, 10*time.Millisecond)
		cancel()
		if err != nil {
			return p2Sample{}, err
		}
	}
	if err := harness.Sleep(ctx, warm); err != nil {
		return p2Sample{}, err
	}
	if err := healthy(); err != nil {
		return p2Sample{}, fmt.Errorf("at the window's start: %w", err)
	}

	req0, conn0, err := p2Count(target)
	if err != nil {
		return p2Sample{}, err
	}
	u0, err := p.Now()
	if err != nil {
		return p2Sample{}, err
	}
	t0 := time.Now()
	if err := harness.Sleep(ctx, window); err != nil {
		return p2Sample{}, err
	}
	u1, err := p.Now()
	if err != nil {
		return p2Sample{}, err
	}
	took := time.Since(t0)
	req1, conn1, err := p2Count(target)
	if err != nil {
		return p2Sample{}, err
	}
	if err := healthy(); err != nil {
		return p2Sample{}, fmt.Errorf("at the window's end: %w", err)
	}
	if req1 == req0 {
		return p2Sample{}, fmt.Errorf("the target saw no GET in %v", window)
	}
	return p2Sample{
		cpu:   time.Duration(float64(u1.CPU-u0.CPU) * float64(p2Minute) / float64(took)),
		rss:   u1.PeakRSS,
		rate:  float64(req1-req0) / took.Seconds(),
		conns: float64(conn1-conn0-1) / took.Seconds(), // less the connection of the count itself
	}, nil
}

// p2VitalsChecks is the checks of P2's vitals.yaml: 100 ready http checks
// with period 1s and every other setting at its default (timeout 1s,
// thresholds 1 and 3, the jitter), as a user would write them.
func p2VitalsChecks(target string) string {
	var b strings.Builder
	b.WriteString("checks:\n")
	for i := 1; i <= p2Checks; i++ {
		fmt.Fprintf(&b, "  c%d:\n    http: {url: %q}\n    period: %v\n", i, fmt.Sprintf("%s/c%d", target, i), p2Period)
	}
	return b.String()
}

// p2PebbleLayer is the same checks as a Pebble layer: ready http checks with
// period 1s, the timeout at its default (3s, capped at the period: 1s) and
// the threshold at its default (3).
func p2PebbleLayer(target string) string {
	var b strings.Builder
	b.WriteString("summary: bench P2\nchecks:\n")
	for i := 1; i <= p2Checks; i++ {
		fmt.Fprintf(&b, "  c%d:\n    override: replace\n    level: ready\n    period: %v\n    http:\n      url: %s/c%d\n", i, p2Period, target, i)
	}
	return b.String()
}

// p2Count asks the target how many GETs and new connections it has seen.
func p2Count(target string) (requests, conns int64, err error) {
	body, err := harness.Get(target + "/count")
	if err != nil {
		return 0, 0, fmt.Errorf("the target: %w", err)
	}
	if _, err := fmt.Sscan(body, &requests, &conns); err != nil {
		return 0, 0, fmt.Errorf("the target's count %q: %w", body, err)
	}
	return requests, conns, nil
}

// p2RateOK says whether rate, measured over window, is p2Checks per period.
func p2RateOK(rate float64, window time.Duration) bool {
	slack := p2RateSlack + p2Period.Seconds()/window.Seconds()
	want := p2Checks / p2Period.Seconds()
	return rate >= want*(1-slack) && rate <= want*(1+slack)
}
