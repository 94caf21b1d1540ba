package main

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/vitals-dev/vitals/bench/internal/harness"
	"github.com/vitals-dev/vitals/grpchealth/grpchealthtest"
)

// buildVitals builds the full vitals binary (the agent) from cmd/vitals.
func buildVitals(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "vitals", "cmd/vitals", ".", "-tags", "grpcnotrace")
}

// releaseFlags are the flags the releases are built with besides their tags
// (hack/release.sh): -trimpath, and -s -w for no symbol table or DWARF. The
// release builds of vitals and of its peers are built with them alike, so
// that a ratio of sizes, of memory or of starts is of what users download.
var releaseFlags = []string{"-trimpath", "-ldflags=-s -w"}

// buildVitalsRelease builds vitals as the releases ship it: the full build
// with releaseFlags.
func buildVitalsRelease(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "vitals-release", "cmd/vitals", ".", append([]string{"-tags", "grpcnotrace"}, releaseFlags...)...)
}

// buildVitalsProbeRelease builds the probe build, vitals without the agent
// (vitals_probe), as the releases ship it.
func buildVitalsProbeRelease(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "vitals-probe-release", "cmd/vitals", ".", append([]string{"-tags", "vitals_probe,grpcnotrace"}, releaseFlags...)...)
}

// vitalsRun is one start of `vitals run` by an experiment.
type vitalsRun struct {
	dir    string // for its files: vitals.yaml, the API socket (vitalsSocket) and the log file if any
	listen string // the probe endpoints' address, 127.0.0.1:PORT
	config string // vitals.yaml after its listen and api lines: service, checks
	cpu    int    // the core to pin it to; -1 for none
	// logFile, if set, is a file in dir that vitals's log is appended to, as
	// a container's log goes to a file; else the log goes to bench's.
	logFile string
	args    []string // after `vitals run -c vitals.yaml`
	// bin is the vitals binary to run; buildVitals's when empty.
	bin string
}

// startVitals writes r's vitals.yaml, with listen and api (the socket in
// dir) before r.config, and starts `vitals run` on it.
func startVitals(ctx context.Context, env *harness.Env, r vitalsRun) (*harness.Proc, error) {
	vitals := r.bin
	if vitals == "" {
		var err error
		if vitals, err = buildVitals(ctx, env); err != nil {
			return nil, err
		}
	}
	file := filepath.Join(r.dir, "vitals.yaml")
	yaml := fmt.Sprintf("listen: %s\napi: %s\n", r.listen, vitalsSocket(r.dir)) + r.config
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		return nil, fmt.Errorf("write vitals.yaml: %w", err)
	}
	argv := append([]string{vitals, "run", "-c", file}, r.args...)
	if r.logFile != "" {
		argv = append([]string{"/bin/sh", "-c", `exec "$@" 2>>"$0"`, filepath.Join(r.dir, r.logFile)}, argv...)
	}
	return env.Start(r.dir, nil, r.cpu, argv...)
}

// vitalsSocket is the management API's socket of a vitals started in dir.
func vitalsSocket(dir string) string { return filepath.Join(dir, "vitals.sock") }

// buildPebble builds Pebble at the version this module's go.mod pins (a tool
// directive), the daemon users run.
func buildPebble(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "pebble", "bench", "github.com/canonical/pebble/cmd/pebble")
}

// buildPebbleRelease builds the same Pebble with releaseFlags, as vitals's
// release is built.
func buildPebbleRelease(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "pebble-release", "bench", "github.com/canonical/pebble/cmd/pebble", releaseFlags...)
}

// buildHealthProbeRelease builds grpc-health-probe at the version this
// module's go.mod pins (a tool directive) as its releases are built: static
// (CGO_ENABLED=0, as Build builds everything), -trimpath and -s -w
// (releaseFlags). The tests' build of it (grpchealthtest.HealthProbe) uses
// the go command's defaults, which link it dynamically where a C compiler is
// installed, and the dynamic loader then costs it a part of every start that
// the release does not pay. The version must be the tests'
// (grpchealthtest.HealthProbeVersion): it is read back from the binary.
func buildHealthProbeRelease(ctx context.Context, env *harness.Env) (string, error) {
	const module = "github.com/grpc-ecosystem/grpc-health-probe"
	bin, err := env.Build(ctx, "grpc-health-probe-release", "bench", module, releaseFlags...)
	if err != nil {
		return "", err
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("the version of %s: %w", bin, err)
	}
	// A program built from a module other than the one it is built in has
	// that module as its main.
	if info.Main.Path != module || info.Main.Version != grpchealthtest.HealthProbeVersion {
		return "", fmt.Errorf("bench/go.mod pins %s at %s, not at the tests' %s: require that one",
			module, info.Main.Version, grpchealthtest.HealthProbeVersion)
	}
	return bin, nil
}

// startPebble writes layer as Pebble's only layer into a new $PEBBLE
// directory under dir and starts `pebble run --http=httpAddr` pinned to cpu.
// Pebble's /v1/health then answers over plain HTTP without authentication.
func startPebble(ctx context.Context, env *harness.Env, dir, layer, httpAddr string, cpu int) (*harness.Proc, error) {
	pebble, err := buildPebble(ctx, env)
	if err != nil {
		return nil, err
	}
	return startPebbleBin(env, pebble, dir, layer, httpAddr, cpu)
}

// startPebbleBin is startPebble with the Pebble binary pebble.
func startPebbleBin(env *harness.Env, pebble, dir, layer, httpAddr string, cpu int) (*harness.Proc, error) {
	home := filepath.Join(dir, "pebble")
	if err := os.MkdirAll(filepath.Join(home, "layers"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, "layers", "001-bench.yaml"), []byte(layer), 0o644); err != nil {
		return nil, fmt.Errorf("write Pebble's layer: %w", err)
	}
	return env.Start(dir, []string{"PEBBLE=" + home}, cpu, pebble, "run", "--http="+httpAddr)
}

// startGETTarget starts `bench/limit -serve` on a free loopback port, pinned
// to cpu, with its files in dir, and waits until it answers: the target of
// bench's GETs, 200 "ok" on every path, and on /count how many GETs and new
// connections it has seen. It returns the process and the target's root,
// "http://127.0.0.1:PORT".
func startGETTarget(ctx context.Context, env *harness.Env, dir string, cpu int) (*harness.Proc, string, error) {
	limit, err := env.Build(ctx, "limit", "bench", "./limit")
	if err != nil {
		return nil, "", err
	}
	addr, err := harness.LoopbackAddr()
	if err != nil {
		return nil, "", err
	}
	p, err := env.Start(dir, nil, cpu, limit, "-serve", addr)
	if err != nil {
		return nil, "", err
	}
	root := "http://" + addr
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := harness.WaitHTTP(wait, p, root+"/count", http.StatusOK, 10*time.Millisecond); err != nil {
		p.Stop(5 * time.Second)
		return nil, "", fmt.Errorf("the target: %w", err)
	}
	return p, root, nil
}
