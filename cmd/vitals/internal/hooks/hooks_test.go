package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
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

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// patience bounds every wait of these tests: long, for a loaded machine; a
// test that passes never waits that long.
const patience = 20 * time.Second

func newMonitor(opts ...health.Option) *health.Monitor {
	return health.New(append([]health.Option{health.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}

// start starts a Runner of hooks hs over m, stopped when the test ends.
func start(t *testing.T, m *health.Monitor, l *vitalstest.Buffer, redact func(string) string, hs ...config.Hook) *hooks.Runner {
	t.Helper()
	r := hooks.New(hs, m, l.Logger(), redact)
	r.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		r.Stop(ctx)
	})
	return r
}

// waitStatus waits until the first hook's Status satisfies ok.
func waitStatus(t *testing.T, r *hooks.Runner, what string, ok func(hooks.Status) bool) hooks.Status {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		st := r.Status()[0]
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %v: %+v", what, patience, st)
		}
		time.Sleep(time.Millisecond)
	}
}

// receiver is a webhook's receiving end: it keeps every request's event, and
// answers with what answer says (200 when nil).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	events   []health.Event // in the order of the requests
	requests []request
	answer   func(n int, ev health.Event) int // n counts requests from 1
}

func newReceiver(t *testing.T, answer func(n int, ev health.Event) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var ev health.Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("a request's body is not an event: %v: %q", err, body)
		}
		rc.mu.Lock()
		rc.events = append(rc.events, ev)
		rc.requests = append(rc.requests, request{req.Method, req.URL.RequestURI(), req.Header.Clone()})
		n := len(rc.events)
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.answer != nil {
			code = rc.answer(n, ev)
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "answer %d", code)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// request is what a receiver keeps of a request but its body.
type request struct {
	method, uri string
	header      http.Header
}

// first is the first request received, and its event.
func (rc *receiver) first() (request, health.Event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.requests[0], rc.events[0]
}

// ids is the event IDs of the requests received so far.
func (rc *receiver) ids() []uint64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]uint64, len(rc.events))
	for i, ev := range rc.events {
		out[i] = ev.ID
	}
	return out
}

func webhook(url string, on ...health.EventType) config.Hook {
	return config.Hook{On: on, Webhook: &config.WebhookHook{URL: url, HookRetry: config.HookRetry{Timeout: 5 * time.Second,
		BackoffInitial: time.Millisecond, BackoffMax: 5 * time.Millisecond}}}
}

func failed(check string) health.Event {
	return health.Event{Type: health.EventCheckFailed, Check: check, Level: health.Ready, From: health.Pass, To: health.Fail, Output: "down"}
}

func TestAWebhookGetsEventsInOrderAndRetriesAfterA500(t *testing.T) {
	rc := newReceiver(t, func(n int, ev health.Event) int {
		if n == 2 { // the first request for event 2
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	m := newMonitor()
	var l vitalstest.Buffer
	hook := webhook(rc.URL+"/hook", health.EventCheckFailed)
	hook.Name = "operator"
	hook.Webhook.Header = map[string][]string{"Authorization": {"Bearer hdr-secret-1"}, "X-Tag": {"a", "b"}}
	r := start(t, m, &l, nil, hook)
	for i := range 5 {
		m.Emit(failed(fmt.Sprintf("c%d", i)))
	}
	st := waitStatus(t, r, "5 delivered", func(st hooks.Status) bool { return st.Delivered == 5 })

	if got, want := rc.ids(), []uint64{1, 2, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("requests for events %v, want %v: in order, event 2 again after its 500", got, want)
	}
	if st.Failed != 0 || st.Failing || st.LastDeliveredID != 5 || st.Name != "operator" || st.Kind != "webhook" {
		t.Fatalf("status %+v, want 5 delivered, none failed, last 5", st)
	}
	if !strings.Contains(st.LastError, "answered 500 Internal Server Error: answer 500") {
		t.Fatalf("last error %q, want the 500 and its body", st.LastError)
	}
	// Each request carries the event as GET /v1/events writes it.
	req, ev := rc.first()
	want, _ := json.Marshal(m.Events(0)[0])
	got, _ := json.Marshal(ev)
	if !bytes.Equal(got, want) {
		t.Fatalf("body %s, want %s", got, want)
	}
	if req.method != "POST" || req.uri != "/hook" || req.header.Get("Content-Type") != "application/json" ||
		!strings.HasPrefix(req.header.Get("User-Agent"), "vitals/") || req.header.Get("Authorization") != "Bearer hdr-secret-1" ||
		!slices.Equal(req.header.Values("X-Tag"), []string{"a", "b"}) {
		t.Fatalf("request %s %s with headers %v", req.method, req.uri, req.header)
	}
	if out := l.String(); !strings.Contains(out, `msg="hook: attempt failed, trying again" hook=operator event=2 type=check-failed attempt=1`) ||
		strings.Contains(out, "hdr-secret-1") {
		t.Fatalf("logs:\n%s\nwant the failed attempt, without a header's value", out)
	}
}

func TestAWebhookThatAlwaysFailsIsFailingAfterItsRetries(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	rc := newReceiver(t, func(int, health.Event) int {
		if fail.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	m := newMonitor()
	var l vitalstest.Buffer
	hook := webhook(rc.URL+"/hook?token=tok-secret-2", health.EventCheckFailed)
	hook.Webhook.Attempts = 3
	redact := func(s string) string { return strings.ReplaceAll(s, "tok-secret-2", "xxxxx") }
	r := start(t, m, &l, redact, hook)
	m.Emit(failed("db"))
	st := waitStatus(t, r, "given up", func(st hooks.Status) bool { return st.Failed == 1 })

	if got := rc.ids(); !slices.Equal(got, []uint64{1, 1, 1}) {
		t.Fatalf("requests for events %v, want event 1 three times", got)
	}
	if !st.Failing || st.Delivered != 0 || st.LastErrorTime.IsZero() ||
		!strings.Contains(st.LastError, "answered 503 Service Unavailable") || st.Target != rc.URL+"/hook?…" {
		t.Fatalf("status %+v, want failing with the 503, its URL's query left out", st)
	}
	const metrics = `
# HELP vitals_hook_attempts_total Attempts at delivering events: webhook requests, retries included, and exec commands run.
# TYPE vitals_hook_attempts_total counter
vitals_hook_attempts_total{hook="hook-1"} 3
# HELP vitals_hook_coalesced_events_total Events the hook left out when it fell behind, delivering a later event of the same check, level or notice key instead.
# TYPE vitals_hook_coalesced_events_total counter
vitals_hook_coalesced_events_total{hook="hook-1"} 0
# HELP vitals_hook_deliveries_total Events the hook is done with, by result: delivered, or failed after every attempt it gets.
# TYPE vitals_hook_deliveries_total counter
vitals_hook_deliveries_total{hook="hook-1",result="delivered"} 0
vitals_hook_deliveries_total{hook="hook-1",result="failed"} 1
# HELP vitals_hook_failing Whether the hook gave up on its latest event (1) or delivered it (0).
# TYPE vitals_hook_failing gauge
vitals_hook_failing{hook="hook-1"} 1
# HELP vitals_hook_missed_events_total Events the hook never saw: the event log dropped them while the hook was busy with older ones.
# TYPE vitals_hook_missed_events_total counter
vitals_hook_missed_events_total{hook="hook-1"} 0
`
	if err := testutil.CollectAndCompare(r, strings.NewReader(metrics)); err != nil {
		t.Fatal(err)
	}
	out := l.String()
	if strings.Count(out, "hook: attempt failed, trying again") != 2 || !strings.Contains(out, `msg="hook: event not delivered" hook=hook-1 event=1 type=check-failed attempts=3`) ||
		strings.Contains(out, "tok-secret-2") {
		t.Fatalf("logs:\n%s\nwant two retries and the failure, the token hidden", out)
	}

	// The next event delivered clears it.
	fail.Store(false)
	m.Emit(failed("db"))
	st = waitStatus(t, r, "delivered", func(st hooks.Status) bool { return st.Delivered == 1 })
	if st.Failing || st.Failed != 1 || st.LastDeliveredID != 2 {
		t.Fatalf("status %+v, want no longer failing", st)
	}
}

func TestAWebhookAnswered4xxIsNotRetried(t *testing.T) {
	rc := newReceiver(t, func(int, health.Event) int { return http.StatusNotFound })
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, webhook(rc.URL, health.EventCheckFailed))
	m.Emit(failed("a"))
	m.Emit(failed("b"))
	st := waitStatus(t, r, "both given up", func(st hooks.Status) bool { return st.Failed == 2 })
	if got := rc.ids(); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("requests for events %v, want one each", got)
	}
	if !strings.Contains(st.LastError, "answered 404 Not Found") {
		t.Fatalf("last error %q", st.LastError)
	}
}

func TestAWebhookThatGetsNoAnswerIsRetried(t *testing.T) {
	// A port that refuses connections: a network error, worth retrying.
	ln := httptest.NewServer(http.NotFoundHandler())
	url := ln.URL
	ln.Close()
	m := newMonitor()
	var l vitalstest.Buffer
	hook := webhook(url, health.EventStopping)
	hook.Webhook.Attempts = 2
	r := start(t, m, &l, nil, hook)
	m.Emit(health.Event{Type: health.EventStopping})
	st := waitStatus(t, r, "given up", func(st hooks.Status) bool { return st.Failed == 1 })
	if !strings.Contains(st.LastError, "connection refused") || !strings.Contains(l.String(), "attempts=2") {
		t.Fatalf("status %+v, logs:\n%s", st, l.String())
	}
}

// stuckReceiver is a receiver that holds its first request until release
// is closed (at the test's end, if not before); arrived says it came.
func stuckReceiver(t *testing.T) (rc *receiver, arrived <-chan struct{}, release chan struct{}) {
	came := make(chan struct{}, 1)
	release = make(chan struct{})
	rc = newReceiver(t, func(n int, _ health.Event) int {
		if n == 1 {
			came <- struct{}{}
			<-release
		}
		return http.StatusOK
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return rc, came, release
}

func TestASlowWebhookNeverHoldsUpTheMonitor(t *testing.T) {
	rc, arrived, release := stuckReceiver(t)
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, webhook(rc.URL, health.EventCheckFailed, health.EventCheckPassed))
	m.Emit(failed("first"))
	<-arrived // the hook is stuck in its first request from now on

	for i := range 100 {
		m.Emit(failed(fmt.Sprintf("c%d", i)))
	}
	// A check runs and changes status, period after period, meanwhile.
	var runs atomic.Int64
	if err := m.Add(health.Check{Name: "flapping", Level: health.Ready, Period: 5 * time.Millisecond, FailureThreshold: 1,
		Checker: health.CheckerFunc(func(context.Context) error {
			if runs.Add(1)%2 == 0 {
				return errors.New("down")
			}
			return nil
		})}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	t.Cleanup(func() { cancel(); <-m.Done() })
	for deadline := time.Now().Add(patience); runs.Load() < 10; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the check ran %d times within %v, want 10", runs.Load(), patience)
		}
	}
	if got := rc.ids(); !slices.Equal(got, []uint64{1}) || r.Status()[0].Delivered != 0 {
		t.Fatalf("requests for %v: the receiver should still hold the first", got)
	}

	close(release)
	cancel()
	<-m.Done()
	last := m.Events(0)
	want := uint64(0)
	latest := map[string]uint64{} // each check's last event
	for _, ev := range last {
		if ev.Type == health.EventCheckFailed || ev.Type == health.EventCheckPassed {
			want++
			latest[ev.Check] = ev.ID
		}
	}
	// Behind by more than BehindAfter, the hook delivers each check's
	// latest event of those that waited: every event is delivered or
	// coalesced, and none of a check's is left out for an older one.
	waitStatus(t, r, "every event delivered or coalesced", func(st hooks.Status) bool { return st.Delivered+st.Coalesced == want })
	got := rc.ids()
	if !slices.IsSorted(got) || r.Status()[0].Coalesced == 0 {
		t.Fatalf("requests for %v, want events in order, the flapping check's coalesced", got)
	}
	for check, id := range latest {
		if !slices.Contains(got, id) {
			t.Fatalf("requests for %v: %s's last event, %d, is not among them", got, check, id)
		}
	}
}

func TestAHookTakesOnlyTheEventsItIsOn(t *testing.T) {
	rc := newReceiver(t, nil)
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, webhook(rc.URL, health.EventCheckFailed, health.EventServiceExited))
	m.Emit(health.Event{Type: health.EventCheckPassed, Check: "a"})
	m.Emit(failed("a"))
	m.Emit(health.Event{Type: health.EventLevelFailed, Level: health.Ready})
	m.Emit(health.Event{Type: health.EventServiceExited, Service: "wg", PID: 7})
	m.Emit(health.Event{Type: health.EventStopping})
	m.Emit(failed("b"))
	waitStatus(t, r, "3 delivered", func(st hooks.Status) bool { return st.Delivered == 3 })
	if got := rc.ids(); !slices.Equal(got, []uint64{2, 4, 6}) {
		t.Fatalf("requests for events %v, want 2, 4 and 6", got)
	}
}

func TestAHookThatFallsBehindTheLogCountsWhatItMissed(t *testing.T) {
	rc, arrived, release := stuckReceiver(t)
	m := newMonitor(health.WithEventLog(5))
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, webhook(rc.URL, health.EventCheckFailed))
	m.Emit(failed("c1"))
	<-arrived // the hook holds event 1 alone: 2 is not emitted yet
	for i := 2; i <= 20; i++ {
		m.Emit(failed(fmt.Sprintf("c%d", i)))
	}
	close(release) // the log holds 16 to 20 by now
	st := waitStatus(t, r, "caught up", func(st hooks.Status) bool { return st.LastDeliveredID == 20 })
	if got := rc.ids(); !slices.Equal(got, []uint64{1, 16, 17, 18, 19, 20}) {
		t.Fatalf("requests for events %v, want 1 then 16 to 20", got)
	}
	if st.Missed != 14 || st.Delivered != 6 {
		t.Fatalf("status %+v, want 14 missed, 6 delivered", st)
	}
	if out := l.String(); !strings.Contains(out, `msg="hook: fell behind the event log, events missed" hook=hook-1 missed=14 upTo=15`) {
		t.Fatalf("logs:\n%s", out)
	}
	const metric = `
# HELP vitals_hook_missed_events_total Events the hook never saw: the event log dropped them while the hook was busy with older ones.
# TYPE vitals_hook_missed_events_total counter
vitals_hook_missed_events_total{hook="hook-1"} 14
`
	if err := testutil.CollectAndCompare(r, strings.NewReader(metric), "vitals_hook_missed_events_total"); err != nil {
		t.Fatal(err)
	}
}

func TestStopDeliversWhatWasEmittedBeforeIt(t *testing.T) {
	rc := newReceiver(t, func(int, health.Event) int {
		time.Sleep(10 * time.Millisecond) // slower than Emit
		return http.StatusOK
	})
	m := newMonitor()
	var l vitalstest.Buffer
	r := hooks.New([]config.Hook{webhook(rc.URL, health.EventServiceExited, health.EventStopping)}, m, l.Logger(), nil)
	r.Start()
	for i := range 10 {
		m.Emit(health.Event{Type: health.EventServiceExited, Service: "wg", PID: 100 + i, ExitCode: new(0)})
	}
	m.Emit(health.Event{Type: health.EventStopping})
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	m.Emit(health.Event{Type: health.EventStopping}) // after Stop: not delivered
	if got, want := rc.ids(), []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(got, want) {
		t.Fatalf("requests for events %v, want %v", got, want)
	}
	if st := r.Status()[0]; st.Delivered != 11 {
		t.Fatalf("status %+v", st)
	}
}

func TestStopGivesUpAtItsDeadline(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	rc := newReceiver(t, func(n int, _ health.Event) int {
		if n == 1 {
			arrived <- struct{}{}
		}
		<-release
		return http.StatusOK
	})
	defer close(release) // before the receiver closes
	m := newMonitor()
	var l vitalstest.Buffer
	r := hooks.New([]config.Hook{webhook(rc.URL, health.EventStopping)}, m, l.Logger(), nil)
	r.Start()
	m.Emit(health.Event{Type: health.EventStopping})
	m.Emit(health.Event{Type: health.EventStopping})
	<-arrived // event 1 is under way, event 2 waits
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop: %v, want the deadline's error", err)
	}
	st := r.Status()[0]
	if st.Failed != 1 || !strings.Contains(st.LastError, "cancelled: vitals stopped") {
		t.Fatalf("status %+v, want the request under way failed", st)
	}
	if out := l.String(); !strings.Contains(out, `msg="hook: vitals stopped before these events were delivered" hook=hook-1 events=1`) {
		t.Fatalf("logs:\n%s", out)
	}
}

func TestAnExecHookGetsTheEventOnStdinAndInItsEnvironment(t *testing.T) {
	t.Setenv("VITALS_TEST_INHERITED", "yes")
	t.Setenv("VITALS_EVENT_CHECK", "left over") // not this event's
	dir := t.TempDir()
	stdin, env := filepath.Join(dir, "stdin"), filepath.Join(dir, "env")
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, config.Hook{Name: "charm", On: []health.EventType{health.EventServiceExited},
		Exec: &config.ExecHook{Command: []string{"sh", "-c", `cat > "$1"; env > "$2"`, "sh", stdin, env}}})
	ev := m.Emit(health.Event{Type: health.EventServiceExited, Service: "wg-entrypoint", PID: 42, ExitCode: new(0),
		Reason: "exited", Output: "it's done: \"quoted\""})
	st := waitStatus(t, r, "delivered", func(st hooks.Status) bool { return st.Delivered == 1 })
	if st.Kind != "exec" || st.Target != "sh" || st.LastDeliveredID != 1 {
		t.Fatalf("status %+v", st)
	}

	body, _ := json.Marshal(ev)
	if got, _ := os.ReadFile(stdin); string(got) != string(body)+"\n" {
		t.Fatalf("stdin %q, want %q", got, string(body)+"\n")
	}
	vars := readEnv(t, env)
	for k, want := range map[string]string{
		"VITALS_EVENT_ID": "1", "VITALS_EVENT_TYPE": "service-exited", "VITALS_EVENT_TIME": ev.Time.Format(time.RFC3339Nano),
		"VITALS_EVENT_SERVICE": "wg-entrypoint", "VITALS_EVENT_PID": "42", "VITALS_EVENT_EXIT_CODE": "0",
		"VITALS_EVENT_REASON": "exited", "VITALS_EVENT_OUTPUT": `it's done: "quoted"`, "VITALS_TEST_INHERITED": "yes",
	} {
		if vars[k] != want {
			t.Errorf("%s=%q, want %q", k, vars[k], want)
		}
	}
	for _, k := range []string{"VITALS_EVENT_CHECK", "VITALS_EVENT_RESTARTS", "VITALS_EVENT_SIGNAL"} {
		if v, set := vars[k]; set {
			t.Errorf("%s=%q is set: the event has no such field", k, v)
		}
	}
}

// readEnv reads what env wrote to path: a variable a line.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for line := range strings.Lines(string(got)) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			vars[k] = v
		}
	}
	return vars
}

// A notice reaches a hook on notice with its key and data: in the JSON, and
// in the environment, the data as its JSON.
func TestAHookOnNoticesGetsTheKeyAndData(t *testing.T) {
	env := filepath.Join(t.TempDir(), "env")
	m := newMonitor()
	var l vitalstest.Buffer
	rc := newReceiver(t, nil)
	start(t, m, &l, nil, webhook(rc.URL, health.EventNotice))
	r := start(t, m, &l, nil, config.Hook{On: []health.EventType{health.EventNotice},
		Exec: &config.ExecHook{Command: []string{"sh", "-c", `env > "$1"`, "sh", env}}})
	m.Emit(health.Event{Type: health.EventStopping}) // on no notice: skipped
	want, err := m.Notify("example.com/config-reloaded", map[string]string{"generation": "4", "path": "/etc/app conf"})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, r, "delivered", func(st hooks.Status) bool { return st.Delivered == 1 })
	vars := readEnv(t, env)
	for k, v := range map[string]string{"VITALS_EVENT_TYPE": "notice", "VITALS_EVENT_KEY": "example.com/config-reloaded",
		"VITALS_EVENT_DATA": `{"generation":"4","path":"/etc/app conf"}`} {
		if vars[k] != v {
			t.Errorf("%s=%q, want %q", k, vars[k], v)
		}
	}
	for deadline := time.Now().Add(patience); len(rc.ids()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook got nothing within %v", patience)
		}
	}
	if _, got := rc.first(); got.Type != health.EventNotice || got.Key != want.Key || !maps.Equal(got.Data, want.Data) {
		t.Fatalf("the webhook got %+v, want %+v", got, want)
	}
}

func TestAnExecHookThatFailsIsLoggedWithItsOutputAndNotRunAgain(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, config.Hook{On: []health.EventType{health.EventCheckFailed},
		Exec: &config.ExecHook{Command: []string{"sh", "-c", `echo run >> "$1"; echo "no route to charm" >&2; exit 3`, "sh", count}}})
	m.Emit(failed("db"))
	st := waitStatus(t, r, "given up", func(st hooks.Status) bool { return st.Failed == 1 })
	if st.LastError != "sh exited with status 3: no route to charm" || !st.Failing {
		t.Fatalf("status %+v", st)
	}
	if got, _ := os.ReadFile(count); string(got) != "run\n" {
		t.Fatalf("ran %q, want once", got)
	}
	if out := l.String(); !strings.Contains(out, `msg="hook: event not delivered" hook=hook-1 event=1 type=check-failed attempts=1 err="sh exited with status 3: no route to charm"`) {
		t.Fatalf("logs:\n%s", out)
	}
}

func TestAFailedHooksOutputIsShownEscaped(t *testing.T) {
	m := newMonitor()
	r := start(t, m, &vitalstest.Buffer{}, nil, config.Hook{On: []health.EventType{health.EventCheckFailed},
		Exec: &config.ExecHook{Command: []string{"sh", "-c", `printf '\033]0;pwned\007 \342\200\256 \000'; exit 3`}}})
	m.Emit(failed("db"))
	st := waitStatus(t, r, "given up", func(st hooks.Status) bool { return st.Failed == 1 })
	if want := `sh exited with status 3: \x1b]0;pwned\a \u202e \x00`; st.LastError != want {
		t.Fatalf("last error %q, want %q", st.LastError, want)
	}
}

func TestAnExecHookPastItsTimeoutIsKilledWithItsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, config.Hook{On: []health.EventType{health.EventCheckFailed},
		Exec: &config.ExecHook{Timeout: time.Second, Command: []string{"sh", "-c",
			// A child in the background that outlives the shell but for the group kill.
			`sleep 120 & echo $! > "$1.tmp"; mv "$1.tmp" "$1"; echo started; wait`, "sh", pidFile}}})
	m.Emit(failed("db"))
	st := waitStatus(t, r, "given up", func(st hooks.Status) bool { return st.Failed == 1 })
	if st.LastError != "sh timed out after 1s: its process group was killed: started" {
		t.Fatalf("last error %q", st.LastError)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(patience); alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's background child %d still runs", pid)
		}
	}
	// And the next event is delivered as usual.
	m.Emit(failed("db"))
	waitStatus(t, r, "the next event taken", func(st hooks.Status) bool { return st.Failed == 2 })
}

// alive reports whether pid runs: a zombie does not, it waits for whoever
// reaps orphans here.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || !bytes.HasPrefix(stat[i+1:], []byte(" Z"))
}

func TestAWebhooksURLIsShownWithoutItsSecrets(t *testing.T) {
	for url, want := range map[string]string{
		"http://operator:8080/hook":                               "http://operator:8080/hook",
		"http://operator:8080":                                    "http://operator:8080",
		"https://hooks.slack.com/services/T0/B0/XyzSecretPath":    "https://hooks.slack.com/services/…",
		"https://u:pw@example.com/hook?token=abc":                 "https://u:xxxxx@example.com/hook?…",
		"https://discord.com/api/webhooks/123/SecretToken?wait=1": "https://discord.com/api/…?…",
	} {
		r := hooks.New([]config.Hook{webhook(url, health.EventCheckFailed)}, newMonitor(), slog.New(slog.DiscardHandler), func(s string) string { return s })
		if got := r.Status()[0].Target; got != want {
			t.Errorf("%s is shown as %s, want %s", url, got, want)
		}
	}
}

// pebbleNotice is a Pebble notice hook on Pebble's socket that retries
// quickly.
func pebbleNotice(socket string, on ...health.EventType) config.Hook {
	return config.Hook{On: on, PebbleNotice: &config.PebbleNoticeHook{Socket: socket,
		HookRetry: config.HookRetry{Timeout: 5 * time.Second, BackoffInitial: time.Millisecond, BackoffMax: 50 * time.Millisecond}}}
}

// A Pebble notice hook records each event of its types as the custom notice
// of its type: one notice per type, whose occurrences count its events and
// whose data is the last one's fields, as Pebble's own API shows them.
func TestAPebbleNoticeHookRecordsOneNoticePerEventType(t *testing.T) {
	p := vitalstest.StartPebble(t, "")
	m := newMonitor()
	var l vitalstest.Buffer
	hook := pebbleNotice(p.Socket) // on the default types
	hook.Name = "charm"
	r := start(t, m, &l, nil, hook)
	exit := 1
	m.Emit(failed("oidc"))
	m.Emit(health.Event{Type: health.EventCheckPassed, Check: "oidc", Level: health.Ready, From: health.Fail, To: health.Pass, Output: "HTTP 302"})
	m.Emit(health.Event{Type: health.EventCheckFailed, Check: "oidc", Level: health.Live, From: health.Pass, To: health.Fail,
		Output: `HTTP probe failed with statuscode: 503 <"OIDC Setup is not complete yet.">`})
	m.Emit(health.Event{Type: health.EventServiceStarted, Service: "authservice", PID: 41}) // not on it
	m.Emit(health.Event{Type: health.EventServiceExited, Service: "authservice", PID: 41, ExitCode: &exit, Restarts: 2, Reason: "check oidc failed"})
	st := waitStatus(t, r, "4 delivered", func(st hooks.Status) bool { return st.Delivered == 4 })
	if st.Kind != "pebble-notice" || st.Target != p.Socket || st.Failed != 0 || st.LastDeliveredID != 5 ||
		!slices.Equal(st.On, config.DefaultPebbleNoticeOn) {
		t.Fatalf("status %+v, want 4 delivered to %s, on the default types", st, p.Socket)
	}

	notices := p.Notices(t)
	var keys []string
	for _, n := range notices {
		keys = append(keys, fmt.Sprintf("%s×%d", n.Key, n.Occurrences))
	}
	// In the order they last repeated: check-failed's second event moved
	// it after check-passed.
	if want := []string{"vitals.dev/check-passed×1", "vitals.dev/check-failed×2", "vitals.dev/service-exited×1"}; !slices.Equal(keys, want) {
		t.Fatalf("notices %v, want %v", keys, want)
	}
	events := m.Events(0)
	for i, want := range []map[string]string{
		{"id": "2", "time": events[1].Time.Format(time.RFC3339Nano), "type": "check-passed", "check": "oidc", "level": "ready",
			"from": "fail", "to": "pass", "output": "HTTP 302"},
		{"id": "3", "time": events[2].Time.Format(time.RFC3339Nano), "type": "check-failed", "check": "oidc", "level": "live",
			"from": "pass", "to": "fail", "output": `HTTP probe failed with statuscode: 503 <"OIDC Setup is not complete yet.">`},
		{"id": "5", "time": events[4].Time.Format(time.RFC3339Nano), "type": "service-exited", "service": "authservice",
			"pid": "41", "exitCode": "1", "restarts": "2", "reason": "check oidc failed"},
	} {
		if n := notices[i]; !maps.Equal(n.LastData, want) || n.Type != "custom" || n.RepeatAfter != "" {
			t.Errorf("notice %s: %s, data %v\nwant data %v", n.Key, n.Type, n.LastData, want)
		}
	}
}

// With repeat-after, a second event within it counts and leaves its data,
// but does not repeat the notice: whoever waits for notices is not woken.
func TestAPebbleNoticeWithRepeatAfterCountsWithoutRepeating(t *testing.T) {
	p := vitalstest.StartPebble(t, "")
	m := newMonitor()
	var l vitalstest.Buffer
	hook := pebbleNotice(p.Socket, health.EventCheckFailed)
	hook.PebbleNotice.RepeatAfter = time.Hour
	r := start(t, m, &l, nil, hook)
	m.Emit(failed("a"))
	m.Emit(failed("b"))
	waitStatus(t, r, "2 delivered", func(st hooks.Status) bool { return st.Delivered == 2 })
	n := p.Notices(t, hooks.NoticeKey(health.EventCheckFailed))
	if len(n) != 1 || n[0].Occurrences != 2 || n[0].LastData["check"] != "b" || n[0].RepeatAfter != "1h0m0s" ||
		!n[0].LastRepeated.Equal(n[0].FirstOccurred) {
		t.Fatalf("notices %+v, want one, of 2 occurrences, b's data, last repeated when it first occurred", n)
	}
}

// A Pebble that is not there yet (or restarting) gets the event once its
// socket answers.
func TestAPebbleNoticeWaitsForPebble(t *testing.T) {
	p := vitalstest.NewPebble(t, "")
	m := newMonitor()
	var l vitalstest.Buffer
	hook := pebbleNotice(p.Socket, health.EventCheckFailed)
	hook.PebbleNotice.Attempts = 10
	hook.PebbleNotice.BackoffMax = time.Second
	r := start(t, m, &l, nil, hook)
	m.Emit(failed("oidc"))
	st := waitStatus(t, r, "a failed attempt", func(st hooks.Status) bool { return st.LastError != "" })
	if want := "POST /v1/notices on " + p.Socket + ": dial unix " + p.Socket + ": connect: no such file or directory"; st.LastError != want {
		t.Fatalf("last error %q, want %q", st.LastError, want)
	}
	p.Start(t)
	waitStatus(t, r, "delivered", func(st hooks.Status) bool { return st.Delivered == 1 })
	if n := p.Notices(t); len(n) != 1 || n[0].Key != "vitals.dev/check-failed" || n[0].Occurrences != 1 {
		t.Fatalf("notices %+v", n)
	}
}

// A socket that answers 200 with something other than Pebble's answer (a
// page, an error of Pebble's shape, a sync answer without the notice's id)
// has recorded no notice: each attempt fails, saying what came back on one
// line, escaped, and is tried again as a failure to connect is.
func TestAPebbleNoticeAnsweredByWhatIsNotPebbleIsNotDelivered(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"a page", "<html>\n<title>\x1b]0;pwned\a</title>", `<html>\n<title>\x1b]0;pwned\a</title>`},
		{"an error", `{"type":"error","status-code":400,"status":"Bad Request","result":{"message":"invalid key"}}`,
			`{"type":"error","status-code":400,"status":"Bad Request","result":{"message":"invalid key"}}`},
		{"no id", `{"type":"sync","status-code":200,"status":"OK","result":{}}`, `{"type":"sync","status-code":200,"status":"OK","result":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			socket := vitalstest.SocketPath(t)
			ln, err := net.Listen("unix", socket)
			if err != nil {
				t.Fatal(err)
			}
			var requests atomic.Int32
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				requests.Add(1)
				io.Copy(io.Discard, req.Body)
				io.WriteString(w, tc.body) // 200
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			m := newMonitor()
			var l vitalstest.Buffer
			hook := pebbleNotice(socket, health.EventCheckFailed)
			hook.PebbleNotice.Attempts = 2
			r := start(t, m, &l, nil, hook)
			m.Emit(failed("oidc"))
			st := waitStatus(t, r, "given up", func(st hooks.Status) bool { return st.Delivered+st.Failed == 1 })
			want := "POST /v1/notices on " + socket + " answered 200 OK, not Pebble's answer with the notice's id: " + tc.want
			if st.Delivered != 0 || !st.Failing || st.LastError != want {
				t.Fatalf("status %+v\nwant not delivered, last error %q", st, want)
			}
			if n := requests.Load(); n != 2 {
				t.Fatalf("%d requests, want 2: the failure is tried again", n)
			}
		})
	}
}

// The longest output an event can have (1 KiB, and twice as long in JSON
// when it is all quotes) fits Pebble's 4 KiB of data whole.
func TestTheLongestOutputFitsAPebbleNotice(t *testing.T) {
	p := vitalstest.StartPebble(t, "")
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, pebbleNotice(p.Socket, health.EventCheckFailed))
	ev := failed("verbose")
	ev.Output = strings.Repeat(`"`, 5000)
	ev = m.Emit(ev) // capped, as every event's output is
	st := waitStatus(t, r, "done with it", func(st hooks.Status) bool { return st.Delivered+st.Failed == 1 })
	if st.Failed != 0 {
		t.Fatalf("not delivered: %s", st.LastError)
	}
	if n := p.Notices(t); n[0].LastData["output"] != ev.Output || len(ev.Output) < 1000 {
		t.Fatalf("data %v, want the event's whole output, %d bytes", n[0].LastData, len(ev.Output))
	}
}

// Every event type a hook may be on is the key of a notice Pebble takes.
func TestEveryEventTypeIsANoticeKeyPebbleTakes(t *testing.T) {
	p := vitalstest.StartPebble(t, "")
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, pebbleNotice(p.Socket, config.HookEventTypes...))
	for _, typ := range config.HookEventTypes {
		m.Emit(health.Event{Type: typ})
	}
	n := uint64(len(config.HookEventTypes))
	st := waitStatus(t, r, "every event done with", func(st hooks.Status) bool { return st.Delivered+st.Failed == n })
	if st.Failed != 0 || len(p.Notices(t)) != len(config.HookEventTypes) {
		t.Fatalf("status %+v, notices %+v: want one notice for each of %v", st, p.Notices(t), config.HookEventTypes)
	}
}

// A notice of the workload's is the Pebble notice pebble notify would have
// recorded: its key as it is with a domain, under vitals.dev/notice/
// without one, its data as it is; the same key again is one notice more
// often, as Pebble counts it.
func TestAWorkloadsNoticeKeepsItsKeyAndDataInPebble(t *testing.T) {
	p := vitalstest.StartPebble(t, "")
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, pebbleNotice(p.Socket)) // notice is among the default types
	for _, n := range []struct {
		key  string
		data map[string]string
	}{
		{"example.com/config-reloaded", map[string]string{"generation": "4"}},
		{"leader-elected", nil},
		{"example.com/config-reloaded", map[string]string{"generation": "5", "path": "/etc/app.conf"}},
	} {
		if _, err := m.Notify(n.key, n.data); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, r, "3 delivered", func(st hooks.Status) bool { return st.Delivered == 3 })
	got := map[string]string{}
	for _, n := range p.Notices(t) {
		got[n.Key] = fmt.Sprintf("×%d %v", n.Occurrences, n.LastData)
	}
	want := map[string]string{
		"vitals.dev/notice/leader-elected": "×1 map[]",
		"example.com/config-reloaded":      "×2 map[generation:5 path:/etc/app.conf]",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Pebble's notices %v, want %v", got, want)
	}
}

// Apply, as a reload of the file: a hook defined as before goes on (its
// counters kept), one whose definition changed delivers from the event
// after the old one's last (each event once, by one or the other), a new
// one from the events after Apply, and a removed one no more.
func TestApplyKeepsChangesAddsAndRemovesHooks(t *testing.T) {
	same, changed, added, gone := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	m := newMonitor()
	var l vitalstest.Buffer
	hook := func(name, url string) config.Hook {
		h := webhook(url, health.EventCheckFailed)
		h.Name = name
		return h
	}
	r := start(t, m, &l, nil, hook("same", same.URL), hook("changed", changed.URL+"/v1"), hook("gone", gone.URL))
	for i := range 3 {
		m.Emit(failed(fmt.Sprintf("c%d", i)))
	}
	waitStatus(t, r, "3 delivered", func(st hooks.Status) bool { return st.Delivered == 3 })
	r.Apply([]config.Hook{hook("same", same.URL), hook("changed", changed.URL+"/v2"), hook("added", added.URL)})
	for i := range 2 {
		m.Emit(failed(fmt.Sprintf("d%d", i)))
	}
	waitStatus(t, r, "5 delivered", func(st hooks.Status) bool { return st.Delivered == 5 })
	var names []string
	for _, st := range r.Status() {
		names = append(names, st.Name)
	}
	if fmt.Sprint(names) != "[same changed added]" {
		t.Fatalf("hooks %v after Apply", names)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rc   *receiver
		want string
	}{
		{same, "[1 2 3 4 5]"},
		{changed, "[1 2 3 4 5]"},
		{added, "[4 5]"},
		{gone, "[1 2 3]"},
	} {
		if got := fmt.Sprint(tc.rc.ids()); got != tc.want {
			t.Errorf("%s got events %s, want %s", tc.rc.URL, got, tc.want)
		}
	}
	changed.mu.Lock()
	defer changed.mu.Unlock()
	for i, req := range changed.requests {
		if want := []string{"/v1", "/v2"}[min(i/3, 1)]; req.uri != want {
			t.Errorf("changed's request %d went to %s, want %s", i, req.uri, want)
		}
	}
}

// A changed hook whose old definition is still delivering when Apply comes
// delivers after it has finished: the receiver gets every event once, in
// order, the old definition's first.
func TestApplyWhileTheOldHookDeliversKeepsTheOrder(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	rc := newReceiver(t, func(n int, _ health.Event) int {
		if n == 1 {
			close(arrived)
			<-release
		}
		return http.StatusOK
	})
	m := newMonitor()
	var l vitalstest.Buffer
	hook := func(path string) config.Hook {
		h := webhook(rc.URL+path, health.EventCheckFailed)
		h.Name = "changed"
		return h
	}
	r := start(t, m, &l, nil, hook("/v1"))
	for i := range 3 {
		m.Emit(failed(fmt.Sprintf("c%d", i)))
	}
	<-arrived
	r.Apply([]config.Hook{hook("/v2")})
	for i := range 2 {
		m.Emit(failed(fmt.Sprintf("d%d", i)))
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var got []string
	for i, req := range rc.requests {
		got = append(got, fmt.Sprintf("%d%s", rc.events[i].ID, req.uri))
	}
	if fmt.Sprint(got) != "[1/v1 2/v1 3/v1 4/v2 5/v2]" {
		t.Fatalf("requests %v, want 1-3 to the old definition and then 4-5 to the new", got)
	}
}

// A hook changed before Start delivers what the old one would have: the
// events from the first.
func TestApplyBeforeStartMissesNothing(t *testing.T) {
	rc := newReceiver(t, nil)
	m := newMonitor()
	var l vitalstest.Buffer
	h := webhook(rc.URL+"/v1", health.EventCheckFailed)
	r := hooks.New([]config.Hook{h}, m, l.Logger(), nil)
	m.Emit(failed("c0"))
	h.Webhook = &config.WebhookHook{URL: rc.URL + "/v2", HookRetry: h.Webhook.HookRetry}
	r.Apply([]config.Hook{h})
	m.Emit(failed("c1"))
	r.Start()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rc.ids()); got != "[1 2]" {
		t.Fatalf("events %s, want [1 2]", got)
	}
}
