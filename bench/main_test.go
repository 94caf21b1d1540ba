package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestBadArgumentsAreAUsageErrorThatSaysWhat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-only", "P9"}, `no experiment "P9"`},
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
