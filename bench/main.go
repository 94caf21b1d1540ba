// Command bench measures vitals against what its users would pick instead, on
// the same machine in the same run, and prints one table of ratios:
//
//	go run ./bench            # from the repository's root; about 28 minutes
//	go run ./bench -only P1,P5
//	go run ./bench -quick     # about 2 minutes: checks that it runs, measures nothing
//
// It builds vitals and the pinned peers itself (alexliesenfeld/health v0.8.1,
// controller-runtime v0.25.2's healthz, Pebble v1.32.1), each from this
// module's go.mod, and grpc-health-probe at the version the grpchealth
// module's tests pin. BENCHMARKS.md says what each row measures and how.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

// An experiment is one row group of the table (P1 … P9), registered by its
// file's init.
type experiment struct {
	ID   string
	What string
	Run  func(ctx context.Context, env *harness.Env) ([]harness.Row, error)
}

var experiments []experiment

func register(e experiment) {
	experiments = append(experiments, e)
	slices.SortFunc(experiments, func(a, b experiment) int { return cmp.Compare(a.ID, b.ID) })
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.Exit(code)
}

// run parses args, runs the chosen experiments in order and writes the table
// to stdout. It returns 2 for bad arguments, 1 when an experiment could not
// run to its end or, ctx having ended (Ctrl-C), did not run at all, and 0
// otherwise: a missed target is a finding, shown in the table, not a failure
// of the command.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", "", "run only these experiments, comma-separated (e.g. P1,P5)")
	quick := fs.Bool("quick", false, "shorten every measurement to seconds: checks that the benchmarks run")
	rounds := fs.Int("rounds", 3, "rounds of each alternating comparison")
	bin := fs.String("bin", "", "directory for the built programs (default: a temporary one, removed at the end)")
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unexpected argument %q: bench takes flags only", fs.Arg(0))
	}
	if *rounds < 1 {
		return 2, fmt.Errorf("-rounds %d: want at least 1", *rounds)
	}
	chosen, err := choose(*only)
	if err != nil {
		return 2, err
	}
	root, err := repositoryRoot()
	if err != nil {
		return 1, err
	}
	env := &harness.Env{Root: root, Bin: *bin, Quick: *quick, Rounds: *rounds, Log: stderr}
	if env.Bin == "" {
		if env.Bin, err = os.MkdirTemp("", "vitals-bench"); err != nil {
			return 1, err
		}
		defer os.RemoveAll(env.Bin)
	} else if err := os.MkdirAll(env.Bin, 0o755); err != nil {
		return 1, err
	}

	var rows []harness.Row
	var failed []string
	ran := 0
	for _, e := range chosen {
		if ctx.Err() != nil {
			break
		}
		ran++
		env.Logf("== %s: %s", e.ID, e.What)
		r, err := e.Run(ctx, env)
		rows = append(rows, r...)
		if err != nil {
			failed = append(failed, e.ID)
			env.Logf("%s: %v", e.ID, err)
		}
	}
	harness.Markdown(stdout, rows)
	var problems []string
	if len(failed) > 0 {
		problems = append(problems, strings.Join(failed, ", ")+" did not run to the end (see above)")
	}
	if ran < len(chosen) {
		var ids []string
		for _, e := range chosen[ran:] {
			ids = append(ids, e.ID)
		}
		problems = append(problems, fmt.Sprintf("%s did not run (%v)", strings.Join(ids, ", "), ctx.Err()))
	}
	if len(problems) > 0 {
		return 1, errors.New(strings.Join(problems, "; "))
	}
	return 0, nil
}

// choose returns the experiments named in only (all when empty), in order.
func choose(only string) ([]experiment, error) {
	if only == "" {
		return experiments, nil
	}
	var chosen []experiment
	for _, id := range strings.Split(only, ",") {
		id = strings.ToUpper(strings.TrimSpace(id))
		i := slices.IndexFunc(experiments, func(e experiment) bool { return e.ID == id })
		if i < 0 {
			var ids []string
			for _, e := range experiments {
				ids = append(ids, e.ID)
			}
			return nil, fmt.Errorf("-only %q: no experiment %q (there are %s)", only, id, strings.Join(ids, ", "))
		}
		if !slices.ContainsFunc(chosen, func(e experiment) bool { return e.ID == id }) {
			chosen = append(chosen, experiments[i])
		}
	}
	slices.SortFunc(chosen, func(a, b experiment) int { return cmp.Compare(a.ID, b.ID) })
	return chosen, nil
}

// repositoryRoot finds the directory holding go.work and bench/go.mod, from
// the working directory up: bench runs from the root or from bench/.
func repositoryRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "bench", "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("run bench from the vitals repository (no bench/go.mod above " + dir + ")")
		}
	}
}
