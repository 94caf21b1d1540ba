package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

// P6 measures what the status page costs the probes: /readyz throughput of
// one vitals run while 20 pages are open (bench/pages: 10 that follow the
// event stream and read the status after each event and every 2s, as the
// page's script does, and 10 scripts that poll the status every second),
// against the same vitals with none, in alternating windows.
//
// vitals runs pinned to core 0 with 50 file checks every second, their
// histories full (60 results each) before the first window, so that each
// status is the largest 50 checks make; and one http check every 250ms on a
// target that flips every second between passing and failing, with a
// failure threshold it never reaches: it warns and passes again, two events
// a second for the pages to follow, while /readyz passes throughout. wrk
// and the pages run on core 1.
func init() {
	register(experiment{
		ID:   "P6",
		What: "/readyz throughput with 20 status pages open (following its events or polling its JSON), against none",
		Run:  runP6,
	})
}

const (
	p6Checks    = 50
	p6Followers = 10
	p6Pollers   = 10
	p6CPU       = 0
	p6LoadCPU   = 1
	// p6Slices is how many pairs of windows a round has: one without pages,
	// one with them, in turn, each pair starting with the other.
	p6Slices = 6
	p6Load   = 2 * time.Second
	// p6Connect is how long the pages have to open their streams and read
	// their first status before a window with them starts.
	p6Connect = time.Second
	// p6Fill is how long the checks run before the first window: 60 results
	// each, the history vitals keeps.
	p6Fill   = 62 * time.Second
	p6Target = 0.95
)

func runP6(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	pages, err := env.Build(ctx, "pages", "bench", "./pages")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-p6")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	target, err := harness.StartTarget()
	if err != nil {
		return nil, err
	}
	defer target.Close()
	addr, err := harness.LoopbackAddr()
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "checked")
	if err := os.WriteFile(file, []byte("ok\n"), 0o644); err != nil {
		return nil, err
	}
	var cfg strings.Builder
	cfg.WriteString("checks:\n")
	for i := range p6Checks {
		fmt.Fprintf(&cfg, "  file-%02d:\n    file: {path: %s}\n    period: 1s\n", i, file)
	}
	fmt.Fprintf(&cfg, "  flap:\n    http: {url: %q}\n    period: 250ms\n    failure-threshold: 1000000\n", target.URL)
	p, err := startVitals(ctx, env, vitalsRun{dir: dir, listen: addr, config: cfg.String(), cpu: p6CPU, logFile: "vitals.log"})
	if err != nil {
		return nil, err
	}
	defer p.Stop(5 * time.Second)
	base := "http://" + addr
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = harness.WaitHTTP(wait, p, base+"/readyz", 200, 10*time.Millisecond)
	cancel()
	if err != nil {
		return nil, err
	}
	flips, stopFlips := context.WithCancel(ctx)
	defer stopFlips()
	go func() {
		for failing := true; harness.Sleep(flips, time.Second) == nil; failing = !failing {
			target.SetFailing(failing)
		}
	}()
	if !env.Quick {
		env.Logf("P6: %v for the checks' histories to fill", p6Fill)
		if err := harness.Sleep(ctx, p6Fill); err != nil {
			return nil, err
		}
	}

	slices := p6Slices
	if env.Quick {
		slices = 1
	}
	var ratios, cpuRatios []float64
	var read []string
	var rate [2][]float64 // without, with: each round's req/s
	var cpu [2][]time.Duration
	for round := range env.Rounds {
		var requests [2]int
		var busy, used [2]time.Duration
		for s := range slices {
			for k := range 2 {
				open := (k+s)%2 == 1 // each pair starts with the other
				t, c, said, err := p6Window(ctx, env, p, pages, base, open)
				if err != nil {
					return nil, err
				}
				i := 0
				if open {
					i = 1
					read = append(read, said)
				}
				requests[i] += t.Requests
				busy[i] += time.Duration(float64(t.Requests) / t.PerSecond * float64(time.Second))
				used[i] += c
			}
		}
		for i := range 2 {
			rate[i] = append(rate[i], float64(requests[i])/busy[i].Seconds())
			cpu[i] = append(cpu[i], used[i]/time.Duration(max(1, requests[i])))
		}
		ratios = append(ratios, rate[1][round]/rate[0][round])
		cpuRatios = append(cpuRatios, float64(cpu[1][round])/float64(cpu[0][round]))
		env.Logf("P6 round %d: %9.0f req/s without pages, %9.0f with (%.3f); CPU %v/request without, %v with",
			round+1, rate[0][round], rate[1][round], ratios[round], cpu[0][round], cpu[1][round])
	}
	env.Logf("P6: what the pages read in each window with them: %s", strings.Join(read, "; "))
	ratio := harness.Median(ratios)
	perSecond := func(v float64) string { return fmt.Sprintf("%.0f req/s", v) }
	return []harness.Row{
		{ID: "P6", What: fmt.Sprintf("/readyz req/s with %d status pages open (%d following its events, %d polling its JSON every 1s) ÷ with none, %d checks",
			p6Followers+p6Pollers, p6Followers, p6Pollers, p6Checks+1),
			Vitals: perSecond(harness.Median(rate[1])), Base: perSecond(harness.Median(rate[0])), Ratio: ratio,
			Target: fmt.Sprintf("≥ %.2f×", p6Target), Met: ratio >= p6Target},
		{ID: "P6", What: "vitals CPU per /readyz request, with the pages open ÷ with none (lower is better)",
			Vitals: harness.Micros(harness.Median(cpu[1]), 1), Base: harness.Micros(harness.Median(cpu[0]), 1), Ratio: harness.Median(cpuRatios)},
	}, nil
}

// p6Window loads /readyz for p6Load, with the pages open or not, and
// returns what wrk measured, the CPU vitals used meanwhile, and what the
// pages read.
func p6Window(ctx context.Context, env *harness.Env, p *harness.Proc, pages, base string, open bool) (t harness.Throughput, cpu time.Duration, said string, err error) {
	var closePages func() string
	if open {
		if closePages, err = p6Open(ctx, env, pages, base); err != nil {
			return t, 0, "", err
		}
		defer func() {
			if closePages != nil { // the window failed
				closePages()
			}
		}()
	}
	before, err := p.Now()
	if err != nil {
		return t, 0, "", err
	}
	if t, err = env.Load(ctx, base+"/readyz", p6LoadCPU, p1Conns, p6Load); err != nil {
		return t, 0, "", err
	}
	after, err := p.Now()
	if err != nil {
		return t, 0, "", err
	}
	if open {
		said, closePages = closePages(), nil
		// A page that failed made the load lighter: the window would
		// flatter the agent. Every page must have read, and none failed.
		var statuses, events, errs int
		if _, err := fmt.Sscanf(said, "statuses %d events %d errors %d", &statuses, &events, &errs); err != nil {
			return t, 0, said, fmt.Errorf("the pages said %q: %w", said, err)
		}
		if errs > 0 || statuses == 0 || events == 0 {
			return t, 0, said, fmt.Errorf("the pages were not all open: they said %q", strings.TrimSpace(said))
		}
	}
	return t, after.CPU - before.CPU, said, nil
}

// p6Open starts the pages on the load generator's core and gives them
// p6Connect to open their streams and read their first status. Its function
// closes them and returns what they read.
func p6Open(ctx context.Context, env *harness.Env, pages, base string) (func() string, error) {
	out, err := os.CreateTemp("", "bench-p6-pages")
	if err != nil {
		return nil, err
	}
	out.Close()
	pp, err := env.Start("", nil, p6LoadCPU, "/bin/sh", "-c", `exec "$@" >"$0"`, out.Name(), pages,
		"-follow", fmt.Sprint(p6Followers), "-poll", fmt.Sprint(p6Pollers), base)
	if err != nil {
		os.Remove(out.Name())
		return nil, err
	}
	closePages := func() string {
		pp.Stop(5 * time.Second)
		b, _ := os.ReadFile(out.Name())
		os.Remove(out.Name())
		return strings.TrimSpace(string(b))
	}
	if err := harness.Sleep(ctx, p6Connect); err != nil {
		closePages()
		return nil, err
	}
	return closePages, nil
}
