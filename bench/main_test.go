package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/bench/internal/harness"
)

func TestBadArgumentsAreAUsageErrorThatSaysWhat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-only", "P99"}, `no experiment "P99"`},
		{[]string{"-rounds", "0"}, "-rounds 0: want at least 1"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-nonsense"}, "flag provided but not defined: -nonsense"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := run(context.Background(), tc.args, &stdout, &stderr)
			said := stderr.String()
			if err != nil {
				said += err.Error()
			}
			if code != 2 || !strings.Contains(said, tc.want) {
				t.Errorf("bench %v = exit %d, %q; want exit 2 saying %q", tc.args, code, said, tc.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("bench %v printed a table on bad input:\n%s", tc.args, stdout.String())
			}
		})
	}
}

func TestOnlyRunsTheNamedExperimentsInOrder(t *testing.T) {
	saved := experiments
	t.Cleanup(func() { experiments = saved })
	experiments = nil
	for _, id := range []string{"P2", "P1", "P3"} {
		register(experiment{ID: id})
	}
	got, err := choose("p3, P1,P3")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "P1,P3" {
		t.Errorf("-only p3,P1,P3 chose %v, want P1,P3", ids)
	}
	if all, _ := choose(""); len(all) != 3 || all[0].ID != "P1" {
		t.Errorf("no -only chose %d experiments starting with %v, want all 3 from P1", len(all), all)
	}
}

func TestAnInterruptedRunFailsAndSaysWhatDidNotRun(t *testing.T) {
	saved := experiments
	t.Cleanup(func() { experiments = saved })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	experiments = nil
	register(experiment{ID: "P1", Run: func(context.Context, *harness.Env) ([]harness.Row, error) {
		cancel() // Ctrl-C once P1 has its figures
		return []harness.Row{{ID: "P1", What: "done", Vitals: "1 ms"}}, nil
	}})
	register(experiment{ID: "P2", Run: func(ctx context.Context, _ *harness.Env) ([]harness.Row, error) {
		return nil, ctx.Err()
	}})
	register(experiment{ID: "P3", Run: func(context.Context, *harness.Env) ([]harness.Row, error) {
		t.Error("P3 ran after the interrupt")
		return nil, nil
	}})

	var stdout, stderr bytes.Buffer
	code, err := run(ctx, []string{"-only", "P1,P3"}, &stdout, &stderr)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "P3 did not run") {
		t.Errorf("bench interrupted after P1 = exit %d, %v; want exit 1 saying P3 did not run", code, err)
	}
	if !strings.Contains(stdout.String(), "| P1 | done | 1 ms |") {
		t.Errorf("the table lacks P1's row:\n%s", stdout.String())
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	experiments[0].Run = func(context.Context, *harness.Env) ([]harness.Row, error) {
		cancel() // Ctrl-C during P1
		return nil, ctx.Err()
	}
	code, err = run(ctx, nil, &stdout, &stderr)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "P1 did not run to the end") || !strings.Contains(err.Error(), "P2, P3 did not run") {
		t.Errorf("bench interrupted during P1 = exit %d, %v; want exit 1 saying P1 did not end and P2, P3 did not run", code, err)
	}
}
