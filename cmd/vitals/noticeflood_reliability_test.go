package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/health"
)

// R12, a flood of notices and beats: while a check flaps, clients send
// 100,000 notices and 10,000 beats that say something over the API, as
// fast as they can. The clients beyond the rate get 429; every transition
// of the check reaches a webhook receiver and each of several exec hooks,
// in order; the exec hooks never run more than hooks.MaxExecAtOnce commands
// at once between them; and vitals's resident memory stays within 10 MB of
// what it was before the flood.
func TestAFloodOfNoticesAndBeatsDrownsNoStateChange(t *testing.T) {
	const (
		notices   = 100_000
		beats     = 10_000
		senders   = 16
		execHooks = hooks.MaxExecAtOnce + 2
		flaps     = 40
		rssSlack  = 10 << 20
	)
	dir := t.TempDir()
	flag := filepath.Join(dir, "up")
	running := filepath.Join(dir, "running")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var received []health.Event // the webhook's, in order
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev health.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("the webhook's body: %v", err)
		}
		mu.Lock()
		received = append(received, ev)
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)

	// Each exec hook holds a place in running while its command runs, and
	// writes the places held, and the event, to its own file.
	script := `d=$(mktemp -d "$1/run.XXXXXX"); echo "$(ls "$1" | wc -l) $VITALS_EVENT_ID $VITALS_EVENT_TYPE" >> "$2"; sleep 0.1; rmdir "$d"`
	var hookList strings.Builder
	fmt.Fprintf(&hookList, "hooks:\n  - name: receiver\n    on: [check-passed, check-failed, notice]\n    webhook: {url: %q}\n", rc.URL)
	for i := range execHooks {
		fmt.Fprintf(&hookList, "  - name: exec-%d\n    on: [check-passed, check-failed]\n    exec: [sh, -c, %q, sh, %q, %q]\n",
			i, script, running, filepath.Join(dir, fmt.Sprintf("exec-%d", i)))
	}
	a := startAgent(t, func(a *agent) string {
		return hookList.String() + fmt.Sprintf(`checks:
  flapping: {file: {path: %s}, period: 20ms, failure-threshold: 1}
  loop: {heartbeat: {ttl: 1h}}
`, flag)
	}, "sleep")
	pidIn(t, a.ready)
	vitalsPID := a.cmd.Process.Pid
	waitFor(t, "the check to fail (no file yet)", a.logs, func() bool {
		return slices.ContainsFunc(a.events(t, 0), func(e health.Event) bool { return e.Type == health.EventCheckFailed })
	})
	time.Sleep(time.Second) // settled: the servers, the hooks and the runtime's first collections
	before := vmRSS(t, vitalsPID)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var peak atomic.Int64
	var sampling sync.WaitGroup
	sampling.Go(func() {
		for ctx.Err() == nil {
			peak.Store(max(peak.Load(), vmRSS(t, vitalsPID)))
			time.Sleep(50 * time.Millisecond)
		}
	})
	// The check flaps while the flood lasts.
	var flapping sync.WaitGroup
	flapping.Go(func() {
		for i := range flaps {
			if i%2 == 0 {
				os.WriteFile(flag, nil, 0o600)
			} else {
				os.Remove(flag)
			}
			time.Sleep(150 * time.Millisecond)
		}
	})

	var codes sync.Map // status: *atomic.Int64
	count := func(code int) {
		c, _ := codes.LoadOrStore(code, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
	}
	var sent atomic.Int64
	var flood sync.WaitGroup
	began := time.Now()
	for s := range senders {
		flood.Go(func() {
			c := socketClient(a.sock)
			for {
				n := sent.Add(1)
				if n > notices+beats {
					return
				}
				var res *http.Response
				var err error
				if n <= notices {
					res, err = c.Post("http://vitals/v1/notices", "application/json",
						strings.NewReader(fmt.Sprintf(`{"key": "flood/sender-%d", "data": {"n": "%d"}}`, s, n)))
				} else {
					status := []string{"fail", "pass"}[n%2]
					res, err = c.Post(fmt.Sprintf("http://vitals/v1/checks/loop/beat?status=%s&output=beat+%d", status, n), "", nil)
				}
				if err != nil {
					t.Errorf("request %d: %v", n, err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
					t.Errorf("request %d: a 429 without Retry-After", n)
				}
				count(res.StatusCode)
			}
		})
	}
	flood.Wait()
	took := time.Since(began)
	flapping.Wait()

	// Every transition of the flapping check, as the log has them (it
	// keeps 1,000 state changes, whatever the notices).
	var want []string
	for _, e := range a.events(t, 0) {
		if e.Check == "flapping" && e.Type.Transition() {
			want = append(want, fmt.Sprintf("%d %s", e.ID, e.Type))
		}
	}
	if len(want) < flaps/2 {
		t.Fatalf("the check changed %d times, want about %d; events:\n%s", len(want), flaps, eventLines(a.events(t, 0)))
	}
	waitFor(t, "every transition at the webhook", a.logs, func() bool {
		mu.Lock()
		defer mu.Unlock()
		var got []string
		for _, e := range received {
			if e.Check == "flapping" {
				got = append(got, fmt.Sprintf("%d %s", e.ID, e.Type))
			}
		}
		return slices.Equal(got, want)
	})
	most := 0
	for i := range execHooks {
		file := filepath.Join(dir, fmt.Sprintf("exec-%d", i))
		waitFor(t, fmt.Sprintf("every transition at exec hook %d", i), a.logs, func() bool {
			var got []string
			for _, line := range readLines(file) {
				held, event, _ := strings.Cut(line, " ")
				n, _ := strconv.Atoi(held)
				most = max(most, n)
				if slices.Contains(want, event) {
					got = append(got, event)
				}
			}
			return slices.Equal(got, want)
		})
	}
	stop()
	sampling.Wait()
	// vitals stops as it does on SIGTERM: its hooks' commands end before
	// the test's directory goes.
	a.cmd.Process.Signal(syscall.SIGTERM)
	a.cmd.Wait()

	if most > hooks.MaxExecAtOnce {
		t.Errorf("%d exec hook commands ran at once, want at most %d", most, hooks.MaxExecAtOnce)
	}
	refused := int64(0)
	if c, ok := codes.Load(http.StatusTooManyRequests); ok {
		refused = c.(*atomic.Int64).Load()
	}
	var summary []string
	codes.Range(func(k, v any) bool {
		summary = append(summary, fmt.Sprintf("%v: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(summary)
	if refused == 0 {
		t.Errorf("no request was refused 429: %v", summary)
	}
	grew := peak.Load() - before
	t.Logf("%d notices and %d beats in %v (%v), the check changed %d times; RSS %.1f MB before, %.1f MB at most (+%.1f MB); at most %d exec commands at once",
		notices, beats, took.Round(time.Millisecond), summary, len(want), mb(before), mb(peak.Load()), mb(grew), most)
	if grew > rssSlack {
		t.Errorf("RSS grew %.1f MB in the flood, want at most %.0f MB", mb(grew), mb(rssSlack))
	}
}

// vmRSS is the resident memory of process pid, in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Errorf("read the memory of %d: %v", pid, err)
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// readLines is a file's lines; none when it is not there yet.
func readLines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}
