package api_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/health"
)

// slow is a rate no test outlasts (one request every 1000s): a bucket is
// its burst, and nothing more, however slowly the test runs.
const slow = 0.001

// from makes requests to a's TCP API from the loopback address src, as
// another client.
func (a *agent) from(t *testing.T, src, method, path, body string) (int, http.Header, string) {
	t.Helper()
	addr := strings.TrimPrefix(a.base, "http://")
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		return d.DialContext(ctx, "tcp", addr)
	}}}
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	must(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	res, err := c.Do(req)
	must(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	must(t, err)
	return res.StatusCode, res.Header, string(b)
}

// Beyond a client's burst, a notice is 429 with a Retry-After, and records
// nothing; another client still has its own; beyond the overall burst,
// every client is refused.
func TestNoticesBeyondTheLimitsAre429WithRetryAfter(t *testing.T) {
	a := serveAgent(t, "tcp://127.0.0.1:0", "tok", nil, nil, api.WithLimits(api.Limits{
		NoticesPerClient: api.Limit{Rate: slow, Burst: 2}, Notices: api.Limit{Rate: slow, Burst: 3},
		ReportsPerClient: api.Limit{Rate: slow, Burst: 100}, Reports: api.Limit{Rate: slow, Burst: 100}}))
	notice := `{"key": "flood"}`
	for i := range 2 {
		if code, _, b := a.from(t, "127.0.0.1", "POST", "/v1/notices", notice); code != 200 {
			t.Fatalf("notice %d of the first client: %d %s, want 200 within its burst", i+1, code, b)
		}
	}
	before := a.m.LastEventID()
	code, h, b := a.from(t, "127.0.0.1", "POST", "/v1/notices", notice)
	if code != 429 || !strings.Contains(b, "too many notices: try again in") {
		t.Fatalf("the first client's third notice: %d %s, want 429 saying when to try again", code, b)
	}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After %q, want seconds", h.Get("Retry-After"))
	}
	if a.m.LastEventID() != before {
		t.Fatal("a refused notice was recorded")
	}
	if code, _, b := a.from(t, "127.0.0.2", "POST", "/v1/notices", notice); code != 200 {
		t.Fatalf("another client's first notice: %d %s, want 200: its own bucket", code, b)
	}
	if code, _, b := a.from(t, "127.0.0.3", "POST", "/v1/notices", notice); code != 429 {
		t.Fatalf("a third client's first notice past the overall burst: %d %s, want 429", code, b)
	}
	var e *client.Error
	if _, err := a.client.Notify(context.Background(), "flood", nil); !errors.As(err, &e) || e.Status != 429 || e.RetryAfter <= 0 {
		t.Fatalf("the client past the limit: %v, want a 429 with its RetryAfter", err)
	}
}

// Plain beats are never limited; beats that say something are, as notices.
func TestBeatsThatSaySomethingAreLimitedAndPlainOnesNever(t *testing.T) {
	a := serveAgent(t, "", "", nil, nil, api.WithLimits(api.Limits{
		NoticesPerClient: api.Limit{Rate: slow, Burst: 100}, Notices: api.Limit{Rate: slow, Burst: 100},
		ReportsPerClient: api.Limit{Rate: slow, Burst: 2}, Reports: api.Limit{Rate: slow, Burst: 100}}))
	for range 2 {
		a.expect(t, "POST", "/v1/checks/loop/beat?status=warn&output=slow", "", 204, "", nil)
	}
	a.expect(t, "POST", "/v1/checks/loop/beat?status=fail&output=stuck", "", 429, "too many beats that say something", nil)
	for range 20 {
		a.expect(t, "POST", "/v1/checks/loop/beat", "", 204, "", nil)
	}
	if st, _ := a.m.CheckState("loop"); st.Status != health.Pass {
		t.Fatalf("loop is %v after plain beats, want pass: the refused failure recorded nothing", st.Status)
	}
}

// A notice that repeats its key within repeatAfter counts an occurrence of
// the event before it; a bad repeatAfter is a 400.
func TestANoticeWithRepeatAfterCountsAnOccurrence(t *testing.T) {
	a := newAgent(t, "", "")
	first, err := a.client.NotifyRepeating(context.Background(), "db/backup-done", map[string]string{"n": "1"}, 0)
	must(t, err)
	again, err := a.client.NotifyRepeating(context.Background(), "db/backup-done", map[string]string{"n": "2"}, time.Minute)
	if err != nil || again.ID != first.ID || again.Occurrences != 2 || again.Data["n"] != "2" {
		t.Fatalf("a repeat within a minute: %+v %v, want event %d counting 2 with the new data", again, err, first.ID)
	}
	if a.m.LastEventID() != first.ID {
		t.Fatal("a repeat added an event")
	}
	a.expect(t, "POST", "/v1/notices", `{"key": "db/backup-done", "repeatAfter": "soon"}`, 400, `repeatAfter \"soon\": want a duration`, nil)
}
