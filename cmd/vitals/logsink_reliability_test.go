package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
)

// R7 of the reliability suite: vitals run whose standard error is a pipe that
// nobody reads, full before vitals writes its first line (a stalled log
// pipeline, a container log driver that blocks, a paused terminal). For 60s
// (8s in the short variant) 30 checks flap while their log lines cannot be
// written: they keep their period (runs counted from /metrics), their flips
// show on /readyz, and the lines dropped are counted (30 checks flipping 5
// times a second overflow the log queue within the short window). Once the pipe is read, one line
// says how many were dropped. With the pipe full again, SIGTERM fails
// readiness at once and vitals exits within drain + stop-timeout.
func TestABlockedLogSinkStopsNoCheckAndNoShutdown(t *testing.T) {
	const (
		checks      = 30
		period      = 100 * time.Millisecond
		flap        = 200 * time.Millisecond
		drain       = time.Second
		stopTimeout = 3 * time.Second
	)
	window := 8 * time.Second
	// How soon after SIGTERM /readyz must fail: at once, on a quiet machine
	// (the soak run, which RELIABILITY.md reports); beside the other test
	// packages in CI the scheduler alone can take a few hundred ms.
	failWithin := time.Second
	// The share of their runs the checks must keep: a check that blocks on
	// its log keeps none; beside the other test packages, a run is late now
	// and then.
	keep := 0.5
	if soak {
		window, failWithin, keep = 60*time.Second, 100*time.Millisecond, 0.8
	}

	var forcePass atomic.Bool
	began := time.Now()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !forcePass.Load() && time.Since(began)/flap%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(target.Close)

	// The pipe: the test keeps both ends, fills it, and reads it only when it
	// says so.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	fill(t, w)

	addr, dir := freeAddr(t), t.TempDir()
	var file strings.Builder
	fmt.Fprintf(&file, "listen: %s\napi: %s\ndrain: %v\nservice: {stop-timeout: %v}\nchecks:\n",
		addr, filepath.Join(dir, "vitals.sock"), drain, stopTimeout)
	for i := range checks {
		fmt.Fprintf(&file, "  flap-%d: {http: {url: %q}, period: %v, timeout: 90ms, failure-threshold: 1}\n", i, target.URL, period)
	}
	path := writeConfig(t, file.String())
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(vitals, "run", "-c", path, "--log-level", "debug", "--", os.Args[0], "sleep", ready)
	cmd.Env = append(quickExit(os.Environ()), workloadtest.Env+"=1")
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); killWorkload(ready) })
	pidIn(t, ready)

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	code := func() int {
		res, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	runs := func(m metricsScrape) float64 { return m.sum(`vitals_check_runs_total{check="flap-`) }
	scrape := func() metricsScrape {
		t.Helper()
		m, err := scrapeMetrics(tr, addr)
		if err != nil {
			t.Fatalf("/metrics: %v", err)
		}
		return m
	}

	// The window: the check flaps while nothing vitals logs is written.
	for deadline := time.Now().Add(20 * time.Second); runs(scrape()) < 2*checks; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the checks did not run twice each within 20s of the start")
		}
	}
	before, start := scrape(), time.Now()
	seen := map[int]int{}
	for time.Since(start) < window {
		seen[code()]++
		time.Sleep(10 * time.Millisecond)
	}
	after, took := scrape(), time.Since(start)
	ran := runs(after) - runs(before)
	want := float64(checks * (took / period))
	t.Logf("R7: %v with stderr full: %.0f runs of %d checks (%.0f at their period), %.0f transitions, %.0f log lines dropped, /readyz %v",
		took.Round(time.Millisecond), ran, checks, want,
		after.sum(`vitals_check_transitions_total{check="flap-`)-before.sum(`vitals_check_transitions_total{check="flap-`),
		after.value("vitals_log_lines_dropped_total"), seen)
	if ran < keep*want {
		t.Errorf("the checks ran %.0f times in %v, want at least %.0f%% of the %.0f their period makes", ran, took, 100*keep, want)
	}
	if seen[200] == 0 || seen[503] == 0 {
		t.Errorf("/readyz answered %v while the check flapped, want both 200 and 503", seen)
	}
	// The queue holds 1,000 lines: on a loaded machine the checks may flip
	// too seldom in the window to fill it, so the count is waited for (a
	// guard only), while the checks go on flapping.
	dropped := after.value("vitals_log_lines_dropped_total")
	for deadline := time.Now().Add(30 * time.Second); dropped <= 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		dropped = scrape().value("vitals_log_lines_dropped_total")
	}
	if dropped <= 0 {
		t.Errorf("vitals_log_lines_dropped_total = %v with stderr full for %v, want the lines counted", dropped, time.Since(start).Round(time.Second))
	}

	// Read the pipe: the lines queued come out, and one says how many were
	// dropped.
	lines := make(chan string, 1024)
	var reading sync.WaitGroup
	reading.Add(1)
	stopReading := make(chan struct{})
	go func() {
		defer reading.Done()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stopReading:
				return
			}
		}
	}()
	var note string
	for deadline := time.After(20 * time.Second); note == ""; {
		select {
		case l := <-lines:
			if strings.Contains(l, "log lines were dropped") {
				note = l
			}
		case <-deadline:
			t.Fatal("no line said how many log lines were dropped within 20s of the pipe being read")
		}
	}
	n, err := strconv.ParseFloat(field(note, "dropped"), 64)
	if now := scrape().value("vitals_log_lines_dropped_total"); err != nil || n < dropped || n > now {
		t.Errorf("the note %q says dropped=%v; /metrics said %v before, %v now", note, n, dropped, now)
	}
	close(stopReading)
	// The reader may be inside a read: fill the pipe until it is full and
	// the reader has stopped.
	for {
		fill(t, w)
		done := make(chan struct{})
		go func() { reading.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
			continue
		}
		break
	}
	fill(t, w)

	// The stop, with the pipe full again.
	forcePass.Store(true)
	for deadline := time.Now().Add(20 * time.Second); code() != 200; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not pass within 20s of the target passing")
		}
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	for code() == 200 {
		if time.Since(sent) > 20*time.Second {
			t.Fatal("/readyz still passes 20s after SIGTERM")
		}
	}
	failed := time.Since(sent)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("vitals did not exit within 30s of SIGTERM")
	}
	took = time.Since(sent)
	t.Logf("R7: SIGTERM with stderr full: readiness failed in %v, exit %d in %v (drain %v + stop-timeout %v)",
		failed, cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), drain, stopTimeout)
	if failed > failWithin {
		t.Errorf("readiness failed %v after SIGTERM, want within %v", failed, failWithin)
	}
	if took > drain+stopTimeout {
		t.Errorf("vitals exited %v after SIGTERM, want within drain + stop-timeout (%v)", took, drain+stopTimeout)
	}
	if c := cmd.ProcessState.ExitCode(); c != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want the workload's %d (SIGTERM)", c, 128+int(syscall.SIGTERM))
	}
}

// fill writes to w until the pipe is full to its last byte, without
// blocking, and leaves the pipe blocking, as a terminal's or a log
// driver's is: writes of up to a page are all or nothing, so each size is
// written until the pipe refuses it, halving down to one byte.
func fill(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	filler := []byte(strings.Repeat("#\n", 2048))
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		// Starting vitals made the pipe blocking (its descriptor went to
		// the child): non-blocking while the test fills it, blocking again
		// for vitals.
		if werr = syscall.SetNonblock(int(fd), true); werr != nil {
			return true
		}
		defer syscall.SetNonblock(int(fd), false)
		for size := len(filler); size >= 1; size /= 2 {
			for {
				_, err := syscall.Write(int(fd), filler[:size])
				if err == nil {
					continue
				}
				if !errors.Is(err, syscall.EAGAIN) {
					werr = err
					return true
				}
				break
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		t.Fatalf("filling the pipe: %v", err)
	}
}

// sum adds up the samples of every series that begins with prefix.
func (m metricsScrape) sum(prefix string) float64 {
	total := 0.0
	for line := range strings.Lines(string(m)) {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			total += v
		}
	}
	return total
}

// field is the value of key=VALUE in a text log line.
func field(line, key string) string {
	for f := range strings.FieldsSeq(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// An error that ends vitals run is said on standard error too: with the log
// full, vitals still exits with its code, having given the line a second.
func TestABlockedLogSinkHoldsUpNoExitOnAnError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	fill(t, w)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n",
		busy.Addr(), filepath.Join(t.TempDir(), "vitals.sock")))
	cmd := exec.Command(vitals, "run", "-c", path)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second): // a guard: it waits a second for its last line
		cmd.Process.Kill()
		t.Fatal("vitals run, unable to listen, did not exit within 20s with its standard error full")
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1 (it could not listen)", code)
	}
}
