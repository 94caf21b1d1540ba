package harness

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestPercentileIsTheNearestRank(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range xs {
			ds = append(ds, time.Duration(x)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // unsorted on purpose
	}
	for _, tc := range []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{"none", nil, 99, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 of 1..100", ms(hundred...), 100, 100 * time.Millisecond},
		{"p0 is the least", ms(3, 1, 2), 0, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.ds, tc.p); got != tc.want {
				t.Errorf("Percentile(p%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestMedianOfOddAndEvenCounts(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3,1,2 = %v, want 2", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4,1,3,2 = %v, want 2.5", got)
	}
	if got := Median(nil); got != 0 {
		t.Errorf("median of nothing = %v, want 0", got)
	}
}

func TestMarkdownWritesOneRowPerFinding(t *testing.T) {
	var b bytes.Buffer
	Markdown(&b, []Row{
		{ID: "P1", What: "req/s ÷ bare", Vitals: "40,000", Base: "42,000", Ratio: 0.952, Target: "≥ 0.9×", Met: true},
		{ID: "P3", What: "heap", Vitals: "30 MB", Target: "≤ 20 MB"},
		{ID: "P3", What: "peak RSS", Vitals: "40 MB"},
	})
	want := "| id | what | vitals | baseline | ratio | target | met |\n" +
		"|---|---|---:|---:|---:|---|---|\n" +
		"| P1 | req/s ÷ bare | 40,000 | 42,000 | 0.95 | ≥ 0.9× | yes |\n" +
		"| P3 | heap | 30 MB |  |  | ≤ 20 MB | no |\n" +
		"| P3 | peak RSS | 40 MB |  |  |  |  |\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestAProcessCPUAndPeakRSSAreRead(t *testing.T) {
	env := &Env{Log: os.Stderr}
	// A shell that spins for a while, then sleeps: its CPU time grows, and
	// its usage at the end is what it used over its life.
	p, err := env.Start(t.TempDir(), nil, -1, "sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	var now Usage
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if now, err = p.Now(); err != nil {
			t.Fatal(err)
		}
		if now.CPU > 0 {
			break
		}
	}
	if now.CPU <= 0 || now.PeakRSS <= 0 {
		t.Fatalf("usage of a spinning shell = %+v, want CPU and RSS above 0", now)
	}
	final := p.Stop(5 * time.Second)
	if final.CPU < now.CPU || final.PeakRSS <= 0 {
		t.Errorf("usage at the end = %+v, want at least %+v", final, now)
	}
	if _, err := p.Now(); err == nil || !strings.Contains(err.Error(), "pid") {
		t.Errorf("Now after Stop = %v, want an error naming the pid", err)
	}
}
