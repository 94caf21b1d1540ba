package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// The whole command at -quick, with one round: every experiment builds what
// it runs, starts it, measures for a few seconds and adds its rows to the one
// table. It measures nothing worth reading; it keeps the benchmarks runnable.
// It takes about a minute; `go run ./bench -quick`, with its three rounds,
// about 2.
func TestEveryExperimentRunsQuickAndAddsItsRowsToTheTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds vitals and the peers and runs every experiment (about a minute)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := run(ctx, []string{"-quick", "-rounds", "1"}, &stdout, &stderr)
	if code != 0 || err != nil {
		t.Fatalf("bench -quick: exit %d, %v\n%s", code, err, stderr.String())
	}
	table := stdout.String()
	if !strings.HasPrefix(table, "| id | what | vitals | baseline | ratio | target | met |\n") {
		t.Fatalf("bench -quick printed no table:\n%s", table)
	}
	for _, e := range experiments {
		rows := 0
		for line := range strings.Lines(table) {
			cells := strings.Split(line, "|")
			if len(cells) < 4 || strings.TrimSpace(cells[1]) != e.ID {
				continue
			}
			rows++
			if strings.TrimSpace(cells[3]) == "" {
				t.Errorf("%s row without a figure for vitals: %s", e.ID, line)
			}
		}
		if rows == 0 {
			t.Errorf("%s added no row to the table:\n%s", e.ID, table)
		}
	}
	if len(experiments) < 7 {
		t.Errorf("%d experiments registered, want P1 to P7", len(experiments))
	}
}
