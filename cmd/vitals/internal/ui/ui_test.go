package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/ui"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// page is a Monitor on a fake clock, with its status page served on a real
// listener:
//
//	boot  startup  passes
//	db    ready    fails with "db down: password=hunter2" while down is set; every run counted
//	loop  live     a heartbeat (ttl 1m)
type page struct {
	m     *health.Monitor
	clock *healthtest.Clock
	down  atomic.Bool
	runs  atomic.Int64
	loop  *health.Heartbeat
	url   string
}

// secret is in every output a check of the page gives.
const secret = "hunter2"

func newPage(t *testing.T, o ui.Options) *page {
	t.Helper()
	p := &page{clock: healthtest.NewClock(time.Time{})}
	p.m = health.New(health.WithClock(p.clock), health.WithJitter(0), health.WithLogger(slog.New(slog.DiscardHandler)),
		health.WithDetails(o.Details))
	must(t, p.m.Add(health.Check{Name: "boot", Level: health.Startup, Kind: "file",
		Checker: health.CheckerFunc(func(context.Context) error { return nil })}))
	must(t, p.m.Add(health.Check{Name: "db", Level: health.Ready, Kind: "tcp", FailureThreshold: 1, Checker: db{p}}))
	var err error
	p.loop, err = p.m.Heartbeat("loop", time.Minute, health.Live)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewUnstartedServer(ui.New(p.m, o))
	srv.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	srv.Start()
	p.url = srv.URL
	t.Cleanup(func() {
		cancel()
		srv.Close()
	})
	p.m.Start(ctx)
	p.waitFor(t, "db to pass", func(st client.Status) bool { return st.Checks[1].Status == health.Pass })
	return p
}

// db is the check db: it measures, so that its results have values.
type db struct{ p *page }

func (d db) Check(ctx context.Context) error {
	_, err := d.Measure(ctx)
	return err
}

func (d db) Measure(context.Context) (health.Observation, error) {
	n := d.p.runs.Add(1)
	if d.p.down.Load() {
		return health.Observation{}, fmt.Errorf("db down: password=%s (run %d)", secret, n)
	}
	return health.Observation{Value: 3, Unit: "ms", Message: "db up: password=" + secret}, nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (p *page) get(t *testing.T, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.url+path, nil)
	must(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	must(t, err)
	return res, string(b)
}

func (p *page) status(t *testing.T) (client.Status, string) {
	t.Helper()
	res, body := p.get(t, "/ui/api/status")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status: %s %q\n%s", res.Status, res.Header.Get("Content-Type"), body)
	}
	var st client.Status
	must(t, json.Unmarshal([]byte(body), &st))
	return st, body
}

// waitFor waits (a guard only) until the status satisfies cond.
func (p *page) waitFor(t *testing.T, what string, cond func(client.Status) bool) client.Status {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st, body := p.status(t)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s; status:\n%s", what, body)
		}
	}
}

// The page is one HTML file with its script and style beside it, each
// under a policy that allows nothing else; everything else is 404, and
// nothing is written.
func TestThePageAndItsFilesAreServedUnderAStrictPolicy(t *testing.T) {
	p := newPage(t, ui.Options{Details: true})
	for path, typ := range map[string]string{"/": "text/html", "/ui/app.js": "javascript", "/ui/style.css": "text/css", "/ui/icon.svg": "image/svg+xml"} {
		res, body := p.get(t, path)
		csp := res.Header.Get("Content-Security-Policy")
		if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), typ) || body == "" ||
			!strings.HasPrefix(csp, "default-src 'none'; script-src 'self'; style-src 'self';") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %s, %q, policy %q", path, res.Status, res.Header.Get("Content-Type"), csp)
		}
		// A browser that has the file asks whether it changed, and is told
		// in a short answer.
		again, _ := p.get(t, path, "If-None-Match", res.Header.Get("ETag"))
		if res.Header.Get("ETag") == "" || again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s again with its ETag %q: %s, want 304", path, res.Header.Get("ETag"), again.Status)
		}
	}
	for _, path := range []string{"/ui/", "/ui/missing.js", "/ui/../ui/app.js", "/ui/index.html", "/ui/api/", "/ui/api/checks"} {
		if res, _ := p.get(t, path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, res.Status)
		}
	}
	for _, path := range []string{"/", "/ui/api/status", "/ui/api/events"} {
		res, err := http.Post(p.url+path, "application/json", strings.NewReader("{}"))
		must(t, err)
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %s, Allow %q; want 405, GET and HEAD", path, res.Status, res.Header.Get("Allow"))
		}
	}
}

// The policy allows no inline script or style and nothing from elsewhere:
// the page's files must need none, or a browser would refuse them.
func TestThePagesFilesNeedNothingThePolicyRefuses(t *testing.T) {
	p := newPage(t, ui.Options{Details: true})
	_, html := p.get(t, "/")
	for _, tag := range regexp.MustCompile(`<script[^>]*>[^<]*`).FindAllString(html, -1) {
		if tag != `<script src="/ui/app.js" defer>` {
			t.Errorf("the page has %q: only its own script file is allowed", tag)
		}
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`(?:src|href)="(?:https?:)?//`),
		regexp.MustCompile(`javascript:`),
	} {
		if m := bad.FindString(html); m != "" {
			t.Errorf("the page has %q, which the policy refuses", m)
		}
	}
	for _, path := range []string{"/ui/app.js", "/ui/style.css"} {
		_, body := p.get(t, path)
		for _, bad := range []string{"innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute(\"style\"", "@import", "url(http", "//cdn"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s uses %q", path, bad)
			}
		}
	}
}

// The status has the levels, every check with its kept results, and the
// service, in the list of services and as the one workload; it is the state
// the probes read, and reading it runs no check.
func TestTheStatusIsTheMonitorsStateAndRunsNothing(t *testing.T) {
	started := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	exit := 3
	p := newPage(t, ui.Options{Details: true, ServiceInfo: health.ServiceInfo{ServiceID: "app-0", Version: "1.2.3"},
		Services: func() []client.Workload {
			return []client.Workload{{Name: "app", PID: 42, Started: started, Restarts: 1,
				LastExit: &health.Event{Type: health.EventServiceExited, Service: "app", PID: 41, ExitCode: &exit, Reason: "crash"}}}
		}})
	runs := p.runs.Load()
	var st client.Status
	for range 50 {
		st, _ = p.status(t)
	}
	if got := p.runs.Load(); got != runs {
		t.Errorf("50 statuses ran db %d times", got-runs)
	}
	if st.ServiceID != "app-0" || st.Version != "1.2.3" || !st.Details || st.Draining || st.LastEventID != p.m.LastEventID() {
		t.Errorf("status %+v", st)
	}
	levels := fmt.Sprint(st.Levels)
	if levels != "[{startup true } {live true } {ready true }]" {
		t.Errorf("levels %s", levels)
	}
	if len(st.Checks) != 3 || st.Checks[0].Name != "boot" || st.Checks[2].Name != "loop" || st.Checks[2].Status != health.Pending {
		t.Fatalf("checks %+v", st.Checks)
	}
	db := st.Checks[1]
	if len(db.History) != 1 || db.Last == nil || db.Last.Output != "db up: password=hunter2" || db.History[0].ObservedUnit != "ms" {
		t.Errorf("db %+v", db)
	}
	if len(st.Services) != 1 || !reflect.DeepEqual(st.Workload, &st.Services[0]) {
		t.Fatalf("services %+v, workload %+v: want the one service in both", st.Services, st.Workload)
	}
	w := st.Services[0]
	if w.Name != "app" || w.PID != 42 || !w.Started.Equal(started) || w.LastExit == nil || *w.LastExit.ExitCode != 3 || w.LastExit.Reason != "crash" {
		t.Errorf("service %+v", w)
	}

	// An event makes the next status new at once, though one was just read.
	p.down.Store(true)
	if _, err := p.m.RunNow(context.Background(), "db"); err != nil {
		t.Fatal(err)
	}
	st, _ = p.status(t)
	if st.Checks[1].Status != health.Fail || len(st.Checks[1].History) != 2 || st.Levels[2].OK ||
		!strings.Contains(st.Levels[2].Reason, "db down") || st.LastEventID != p.m.LastEventID() {
		t.Errorf("after db failed: %+v", st)
	}

	p.m.Drain()
	if st, _ = p.status(t); !st.Draining {
		t.Errorf("draining: %+v", st)
	}
}

// Every service is in the status, in its start order, running or not; the
// one-service form (workload) is there only when there is one, and neither
// when vitals runs none.
func TestTheStatusHasEveryServiceInItsOrder(t *testing.T) {
	started := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	killed := &health.Event{Type: health.EventServiceExited, Service: "worker", PID: 51, Signal: "killed", Reason: "check queue failed"}
	p := newPage(t, ui.Options{Details: true, Services: func() []client.Workload {
		return []client.Workload{
			{Name: "web", PID: 50, Started: started},
			{Name: "worker", Started: started, Restarts: 2, LastExit: killed},
			{Name: "cron", PID: 70, Started: started},
		}
	}})
	st, body := p.status(t)
	var names []string
	for _, w := range st.Services {
		names = append(names, fmt.Sprintf("%s pid %d restarts %d", w.Name, w.PID, w.Restarts))
	}
	if got := strings.Join(names, ", "); got != "web pid 50 restarts 0, worker pid 0 restarts 2, cron pid 70 restarts 0" {
		t.Errorf("services %s", got)
	}
	if !reflect.DeepEqual(st.Services[1].LastExit, killed) {
		t.Errorf("worker's last exit %+v, want %+v", st.Services[1].LastExit, killed)
	}
	if st.Workload != nil || strings.Contains(body, `"workload"`) {
		t.Errorf("several services, and the one workload is %+v", st.Workload)
	}

	none := newPage(t, ui.Options{Details: true})
	if _, body := none.status(t); strings.Contains(body, `"services"`) || strings.Contains(body, `"workload"`) {
		t.Errorf("no service, and the status has some:\n%s", body)
	}
}

// With details off, no answer of the page carries an output: not a
// result's, nor an event's, nor a notice's data.
func TestWithoutDetailsNoOutputReachesThePage(t *testing.T) {
	p := newPage(t, ui.Options{Details: false,
		Services: func() []client.Workload {
			return []client.Workload{{Name: "app", LastExit: &health.Event{Type: health.EventServiceExited, Reason: "check db failed"}}}
		}})
	p.down.Store(true)
	if _, err := p.m.RunNow(context.Background(), "db"); err != nil {
		t.Fatal(err)
	}
	must(t, p.loop.Report(health.Report{Status: health.Warn, Output: "queue full: " + secret, Value: 80, Unit: "percent"}))
	if _, err := p.m.Notify("example.com/reloaded", map[string]string{"password": secret}); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, "db to fail and loop to warn", func(st client.Status) bool {
		return st.Checks[1].Status == health.Fail && st.Checks[2].Status == health.Warn
	})
	st, body := p.status(t)
	_, events := p.get(t, "/ui/api/events")
	stream := p.stream(t, "", func(e health.Event) bool { return e.Type == health.EventNotice })
	for what, text := range map[string]string{"status": body, "events": events, "event stream": stream} {
		if strings.Contains(text, secret) || strings.Contains(text, "observedValue") {
			t.Errorf("the %s shows an output:\n%s", what, text)
		}
	}
	if st.Details || !strings.Contains(body, `"lastExit":{`) || !strings.Contains(body, "check db failed") ||
		!strings.Contains(st.Levels[2].Reason, "reason withheld") || !strings.Contains(events, `"type":"notice"`) {
		t.Errorf("status %+v\nevents %s", st, events)
	}
}

// stream reads the page's event stream, with Last-Event-ID when lastID is
// set, until an event that until accepts; it returns what it read.
func (p *page) stream(t *testing.T, lastID string, until func(health.Event) bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a guard only
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/ui/api/events", nil)
	must(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %s %q", res.Status, res.Header.Get("Content-Type"))
	}
	var read strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		read.WriteString(line + "\n")
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var e health.Event
			must(t, json.Unmarshal([]byte(data), &e))
			if until(e) {
				return read.String()
			}
		}
	}
	t.Fatalf("the stream ended (%v) before the event waited for:\n%s", sc.Err(), read.String())
	return ""
}

// A page that reconnects resumes after the last event it saw.
func TestTheEventStreamResumesAfterTheLastEventSeen(t *testing.T) {
	p := newPage(t, ui.Options{Details: true})
	last := p.m.LastEventID()
	p.down.Store(true)
	if _, err := p.m.RunNow(context.Background(), "db"); err != nil {
		t.Fatal(err)
	}
	read := p.stream(t, fmt.Sprint(last), func(e health.Event) bool { return e.Type == health.EventLevelFailed })
	if !strings.HasPrefix(read, fmt.Sprintf("id: %d\ndata: {", last+1)) || !strings.Contains(read, `"type":"check-failed","check":"db"`) ||
		!strings.Contains(read, secret) {
		t.Errorf("stream after %d:\n%s", last, read)
	}
	_, events := p.get(t, fmt.Sprintf("/ui/api/events?after=%d", last))
	var evs []health.Event
	must(t, json.Unmarshal([]byte(events), &evs))
	if len(evs) != 2 || evs[0].ID != last+1 || evs[0].Type != health.EventCheckFailed {
		t.Errorf("events after %d: %s", last, events)
	}
	for _, bad := range []string{"/ui/api/events?after=x", "/ui/api/events?after=-1"} {
		if res, body := p.get(t, bad); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is not an event id") {
			t.Errorf("GET %s: %s %s", bad, res.Status, body)
		}
	}
	if res, body := p.get(t, "/ui/api/events", "Accept", "text/event-stream", "Last-Event-ID", "x"); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(body, "Last-Event-ID") {
		t.Errorf("a bad Last-Event-ID: %s %s", res.Status, body)
	}
}

// Pages left open hold at most Streams connections: the next stream is
// told to come back later, and gets its place once one has gone.
func TestEventStreamsAreCapped(t *testing.T) {
	p := newPage(t, ui.Options{Details: true, Streams: 1})
	// A HEAD of the stream answers its headers and holds no stream, also
	// on a connection kept alive for the next request.
	c := &http.Client{Timeout: 10 * time.Second} // a guard only
	for range 3 {
		req, err := http.NewRequest(http.MethodHead, p.url+"/ui/api/events", nil)
		must(t, err)
		req.Header.Set("Accept", "text/event-stream")
		res, err := c.Do(req)
		must(t, err)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("HEAD of the stream: %s %s", res.Status, res.Header.Get("Content-Type"))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := p.open(t, ctx)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream, after HEADs: %s", first.Status)
	}
	res, body := p.get(t, "/ui/api/events", "Accept", "text/event-stream")
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "too many event streams open (1)") {
		t.Errorf("a second stream: %s %s", res.Status, body)
	}
	cancel()
	first.Body.Close()
	// The first stream's handler returns once it sees its request end.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		res := p.open(t, context.Background())
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream within 10s of the first one's end: %s", res.Status)
		}
	}
}

// open opens an event stream, for as long as ctx lasts.
func (p *page) open(t *testing.T, ctx context.Context) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/ui/api/events", nil)
	must(t, err)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	return res
}
