package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
	"github.com/vitals-dev/vitals/grpchealth/grpchealthtest"
)

// P7 measures `vitals probe` as an exec probe or a HEALTHCHECK runs it: a
// whole process, from the fork to the exit, one check of a local server in
// between. The full vitals binary as the releases ship it (stripped,
// -trimpath) against grpc-health-probe built alike for grpc:// (at the
// version the grpchealth module's tests pin, static as its releases are), and
// against curl -fsS for http://. Every run of every program
// takes turns with the others, so that the machine's drift hits all alike;
// each is started from a thread pinned to core 1 (the programs are then on
// that core from their first instruction, with no taskset exec'd before
// them), and the servers run on core 0.
func init() {
	register(experiment{
		ID:   "P7",
		What: "`vitals probe` as a whole process (fork, exec, one check, exit): grpc:// against grpc-health-probe, http:// against curl",
		Run:  runP7,
	})
}

const (
	p7ServerCPU = 0
	p7ProbeCPU  = 1
	// p7Runs is how many times each program runs in a round, after
	// p7Warm runs that are not counted (they bring the binaries' pages
	// into the page cache).
	p7Runs = 200
	p7Warm = 5
)

// p7Program is one command whose whole process is timed.
type p7Program struct {
	name string
	argv []string
}

func runP7(ctx context.Context, env *harness.Env) ([]harness.Row, error) {
	dir, err := os.MkdirTemp("", "bench-p7")
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
	healthProbe, err := buildHealthProbeRelease(ctx, env)
	if err != nil {
		return nil, err
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		return nil, fmt.Errorf("curl, the http:// baseline: %w", err)
	}
	server, err := env.Build(ctx, "server-grpchealth", "bench", "./servers/grpchealth")
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{vitals, vitalsProbe, healthProbe, curl} {
		env.Logf("P7: %s is %s", bin, linking(bin))
	}

	grpcAddr, err := harness.LoopbackAddr()
	if err != nil {
		return nil, err
	}
	gp, err := env.Start(dir, nil, p7ServerCPU, server, "-addr", grpcAddr)
	if err != nil {
		return nil, err
	}
	defer gp.Stop(5 * time.Second)
	hp, httpRoot, err := startGETTarget(ctx, env, dir, p7ServerCPU)
	if err != nil {
		return nil, err
	}
	defer hp.Stop(5 * time.Second)

	runner, err := env.NewRunner(p7ProbeCPU)
	if err != nil {
		return nil, err
	}
	defer runner.Close()
	url := httpRoot + "/healthz"
	programs := []p7Program{
		{"`vitals probe grpc://`", []string{vitals, "probe", "grpc://" + grpcAddr}},
		{"grpc-health-probe " + grpchealthtest.HealthProbeVersion, []string{healthProbe, "-addr=" + grpcAddr}},
		{"`vitals probe http://`", []string{vitals, "probe", url}},
		{"`curl -fsS`", []string{curl, "-fsS", "-o", "/dev/null", url}},
		{"`vitals probe grpc://` (the probe build)", []string{vitalsProbe, "probe", "grpc://" + grpcAddr}},
	}
	// The gRPC server answers once it listens: until then every probe fails.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, err := runner.Run(programs[1].argv...)
		if err == nil {
			break
		}
		if harness.Sleep(wait, 10*time.Millisecond) != nil {
			return nil, fmt.Errorf("the gRPC health server did not answer SERVING (%v): %w", wait.Err(), err)
		}
	}

	runs := p7Runs
	if env.Quick {
		runs = 5
	}
	wall := make([][]time.Duration, len(programs))
	cpu := make([][]time.Duration, len(programs))
	for round := range env.Rounds {
		roundWall := make([][]time.Duration, len(programs))
		roundCPU := make([][]time.Duration, len(programs))
		for n := range p7Warm + runs {
			for k := range programs {
				// Each run starts with the next program, so that none
				// always follows the same one.
				i := (n + k) % len(programs)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				r, err := runner.Run(programs[i].argv...)
				if err != nil {
					return nil, err
				}
				if n >= p7Warm {
					roundWall[i] = append(roundWall[i], r.Wall)
					roundCPU[i] = append(roundCPU[i], r.CPU)
				}
			}
		}
		for i, p := range programs {
			wall[i] = append(wall[i], roundWall[i]...)
			cpu[i] = append(cpu[i], roundCPU[i]...)
			env.Logf("P7 round %d: %-30s wall %s, CPU %s (medians of %d)", round+1, p.name,
				harness.Millis(harness.Median(roundWall[i]), 2), harness.Millis(harness.Median(roundCPU[i]), 2), runs)
		}
		ratio := func(xs [][]time.Duration, a, b int) float64 {
			return float64(harness.Median(xs[a])) / float64(harness.Median(xs[b]))
		}
		env.Logf("P7 round %d: grpc:// ÷ grpc-health-probe wall %.2f, CPU %.2f (the probe build: %.2f, %.2f); http:// ÷ curl wall %.2f, CPU %.2f", round+1,
			ratio(roundWall, 0, 1), ratio(roundCPU, 0, 1), ratio(roundWall, 4, 1), ratio(roundCPU, 4, 1), ratio(roundWall, 2, 3), ratio(roundCPU, 2, 3))
	}
	return p7Rows(programs, wall, cpu, env.Rounds*runs), nil
}

// p7Rows makes the table's rows: for grpc:// (the target: as cheap as
// grpc-health-probe), with the full build and with the probe build, the
// smaller binary for commands that only probe, and then for http:// (for
// information), vitals's median wall time and CPU time per process against
// the baseline's.
func p7Rows(programs []p7Program, wall, cpu [][]time.Duration, runs int) []harness.Row {
	var rows []harness.Row
	for _, pair := range []struct {
		vitals, base int
		target       string
	}{{0, 1, "≤ 1.0×"}, {4, 1, "≤ 1.0×"}, {2, 3, ""}} {
		for _, m := range []struct {
			what string
			of   [][]time.Duration
		}{
			{fmt.Sprintf("wall time from fork to exit (median of %d)", runs), wall},
			{"CPU time (user + system) per process", cpu},
		} {
			v, b := harness.Median(m.of[pair.vitals]), harness.Median(m.of[pair.base])
			r := harness.Row{ID: "P7", What: programs[pair.vitals].name + " whole process, " + m.what + " ÷ " + programs[pair.base].name,
				Vitals: harness.Millis(v, 2), Base: harness.Millis(b, 2), Ratio: float64(v) / float64(b)}
			if pair.target != "" {
				r.Target, r.Met = pair.target, v <= b
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// linking says how bin is linked, for the log: a dynamically linked program
// pays the dynamic loader at every start, which a static one does not.
func linking(bin string) string {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Sprintf("of unknown linking (%v)", err)
	}
	defer f.Close()
	if slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		return "dynamically linked"
	}
	return "statically linked"
}
