package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

// buildVitals builds the full vitals binary (the agent) from cmd/vitals.
func buildVitals(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "vitals", "cmd/vitals", ".")
}

// buildPebble builds Pebble at the version this module's go.mod pins (a tool
// directive), the daemon users run.
func buildPebble(ctx context.Context, env *harness.Env) (string, error) {
	return env.Build(ctx, "pebble", "bench", "github.com/canonical/pebble/cmd/pebble")
}

// startPebble writes layer as Pebble's only layer into a new $PEBBLE
// directory under dir and starts `pebble run --http=httpAddr` pinned to cpu.
// Pebble's /v1/health then answers over plain HTTP without authentication.
func startPebble(ctx context.Context, env *harness.Env, dir, layer, httpAddr string, cpu int) (*harness.Proc, error) {
	pebble, err := buildPebble(ctx, env)
	if err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "pebble")
	if err := os.MkdirAll(filepath.Join(home, "layers"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(home, "layers", "001-bench.yaml"), []byte(layer), 0o644); err != nil {
		return nil, fmt.Errorf("write Pebble's layer: %w", err)
	}
	return env.Start(dir, []string{"PEBBLE=" + home}, cpu, pebble, "run", "--http="+httpAddr)
}
