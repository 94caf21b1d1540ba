package main

import (
	"bytes"
	"context"
	"strconv"
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
	// The rows the limits are judged by, each a ratio of two figures of
	// this run: the agent against bare net/http, against the cheapest
	// program making the same GETs and Pebble's memory, the scheduler
	// against a goroutine and a timer per check, the start against
	// Pebble's, vitals probe against grpc-health-probe, vitals fleet
	// against a program that only lists what it lists, and the sidecar's
	// size and memory against Pebble's.
	for _, what := range []string{
		"the agent (`vitals run`) ÷ bare net/http",
		"÷ bare Go GETs, batched (bench/limit -batch)",
		"agent peak RSS (VmHWM) ÷ Pebble",
		"CPU, runs spread evenly over the period",
		"start → first 200: vitals /livez ÷ Pebble",
		"`vitals probe grpc://` whole process, wall time",
		"`vitals probe grpc://` (the probe build) whole process, wall time",
		"`vitals fleet` start → first full /api/fleet",
		"`vitals fleet` peak RSS (VmHWM) ÷ bench/kubelist",
		"release binary size (stripped, -trimpath): vitals ÷ Pebble",
		"resident memory (VmRSS) after",
	} {
		found := false
		for line := range strings.Lines(table) {
			cells := strings.Split(line, "|")
			if len(cells) < 7 || !strings.Contains(cells[2], what) {
				continue
			}
			found = true
			if r, err := strconv.ParseFloat(strings.TrimSpace(cells[5]), 64); err != nil || r <= 0 {
				t.Errorf("the row %q has no ratio: %s", what, line)
			}
		}
		if !found {
			t.Errorf("no row %q in the table:\n%s", what, table)
		}
	}
	if len(experiments) < 9 {
		t.Errorf("%d experiments registered, want P1 to P9", len(experiments))
	}
}
