package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
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
	count := func(n int) []int {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = n - i // 1..n, unsorted on purpose
		}
		return xs
	}
	hundred := count(100)
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
		// 99% of 160 is 158.4: the 159th value is the first with 99% at or
		// below it (rounding would take the 158th).
		{"p99 of 1..160", ms(count(160)...), 99, 159 * time.Millisecond},
		{"p50 of 1..3", ms(3, 1, 2), 50, 2 * time.Millisecond},
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
	if got := Median[float64](nil); got != 0 {
		t.Errorf("median of nothing = %v, want 0", got)
	}
	if got := Median([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond}); got != 2500*time.Microsecond {
		t.Errorf("median of 3,1,2,5 ms = %v, want 2.5ms", got)
	}
}

func TestFiguresAreWrittenInOneUnitEach(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Millis(1214*time.Microsecond, 2), "1.21 ms"},
		{Millis(268*time.Microsecond, 3), "0.268 ms"},
		{Micros(19340*time.Nanosecond, 1), "19.3 µs"},
		{Micros(814*time.Microsecond, 0), "814 µs"},
		{MiB(int64(35232153)), "33.6 MiB"},
		{MiB(uint64(20e6)), "19.1 MiB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
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
	onCPU, _, err := Schedstat(p.Pid())
	if err != nil || onCPU <= 0 {
		t.Errorf("Schedstat of a spinning shell = %v on a CPU, %v; want above 0", onCPU, err)
	}
	p.Stop(5 * time.Second)
	select {
	case <-p.Exited():
	default:
		t.Error("Exited is open after Stop")
	}
	if _, err := p.Now(); err == nil || !strings.Contains(err.Error(), "pid") {
		t.Errorf("Now after Stop = %v, want an error naming the pid", err)
	}
	if _, _, err := Schedstat(p.Pid()); err == nil || !strings.Contains(err.Error(), "pid") {
		t.Errorf("Schedstat after Stop = %v, want an error naming the pid", err)
	}
}

func TestACoreThisProcessMayNotUseIsNotPinnedTo(t *testing.T) {
	allowed, err := allowedCPUs()
	if err != nil || len(allowed) == 0 {
		t.Fatalf("allowedCPUs = %v, %v; want this process's cores", allowed, err)
	}
	var log bytes.Buffer
	env := &Env{Log: &log}
	argv := []string{"true"}
	if got := env.Pin(-1, argv); !slices.Equal(got, argv) {
		t.Errorf("Pin(-1) = %v, want %v as it is", got, argv)
	}
	outside := slices.Max(allowed) + 1
	for range 2 {
		if got := env.Pin(outside, argv); !slices.Equal(got, argv) {
			t.Errorf("Pin(%d), outside %v = %v, want %v as it is", outside, allowed, got, argv)
		}
	}
	if n := strings.Count(log.String(), "not pinning to core"); n != 1 {
		t.Errorf("the log says %d times that core %d is not pinned to, want once:\n%s", n, outside, log.String())
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return
	}
	want := []string{"-c", strconv.Itoa(allowed[0]), "true"}
	if got := env.Pin(allowed[0], argv); len(got) != 4 || !slices.Equal(got[1:], want) {
		t.Errorf("Pin(%d) = %v, want taskset %v", allowed[0], got, want)
	}
}

func TestATargetAnswers200Or503AsItIsSet(t *testing.T) {
	tg, err := StartTarget()
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if body, err := Get(tg.URL); err != nil || body != "ok" {
		t.Errorf("GET of a passing target = %q, %v; want ok", body, err)
	}
	tg.SetFailing(true)
	if _, err := Get(tg.URL + "x"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("GET of a failing target = %v, want an error saying 503", err)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Errorf("Sleep with an ended context = %v, want %v", err, context.Canceled)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v", err)
	}
}

func TestARunnersProgramsRunPinnedAndSayWhyTheyFailed(t *testing.T) {
	allowed, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	core := allowed[len(allowed)-1]
	var log bytes.Buffer
	env := &Env{Log: &log}
	r, err := env.NewRunner(core)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The shell exits 0 only when the kernel lets it run on that core alone.
	pinned := fmt.Sprintf(`grep -q "^Cpus_allowed_list:[[:space:]]*%d$" /proc/self/status`, core)
	for range 2 { // the Runner's thread stays pinned from run to run
		run, err := r.Run("/bin/sh", "-c", pinned)
		if err != nil {
			t.Fatalf("a program started by a Runner for core %d: %v", core, err)
		}
		if run.Wall <= 0 || run.CPU < 0 || run.CPU > run.Wall {
			t.Errorf("a short program's run = %+v, want a wall time above 0 and CPU time within it", run)
		}
	}
	_, err = r.Run("/bin/sh", "-c", "echo the reason >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "the reason") {
		t.Errorf("a program that exits 3 = %v, want an error with its status and output", err)
	}
	if log.Len() > 0 {
		t.Errorf("a Runner for an allowed core logged:\n%s", log.String())
	}

	unpinned, err := env.NewRunner(slices.Max(allowed) + 1)
	if err != nil {
		t.Fatal(err)
	}
	defer unpinned.Close()
	if _, err := unpinned.Run("/bin/true"); err != nil {
		t.Errorf("a Runner for a core outside %v: %v, want its programs run unpinned", allowed, err)
	}
	if !strings.Contains(log.String(), "not pinning to core") {
		t.Errorf("a Runner for a core outside %v did not say it runs unpinned:\n%s", allowed, log.String())
	}
}
