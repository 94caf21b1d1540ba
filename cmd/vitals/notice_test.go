package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// The commands of these tests, on the agent's socket.
func (a *agent) vitals(t *testing.T, args ...string) run {
	t.Helper()
	return vitalsRun(t, append(args, "--api", a.sock)...)
}

// A workload tells its manager something no check sees: vitals notify
// records a notice, which vitals events prints (text and JSON), the event
// stream streams, a hook on notice gets with its key and data, and
// /metrics counts. A bad key or NAME=VALUE exits 2, naming it, and sends
// nothing; the agent itself refuses what the command would not send.
func TestANoticeReachesTheEventsTheStreamAHookAndTheMetrics(t *testing.T) {
	got := filepath.Join(t.TempDir(), "hook")
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf(`hooks:
  - name: charm
    on: [notice]
    exec: [sh, -c, 'printf "%%s %%s\n" "$VITALS_EVENT_KEY" "$VITALS_EVENT_DATA" >> %s']
checks:
  up: {file: {path: %s}, period: 100ms}
`, got, os.Args[0])
	}, "sleep")
	pidIn(t, a.ready)
	a.waitEvent(t, "up passed", func(e health.Event) bool { return e.Type == health.EventCheckPassed })
	evs := a.events(t, 0)
	stream := openStream(t, a.sock, evs[len(evs)-1].ID)

	r := a.vitals(t, "notify", "example.com/config-reloaded", "generation=4", "path=/etc/app conf")
	r.expect(t, 0, ": example.com/config-reloaded\n", "")
	var id uint64
	if _, err := fmt.Sscanf(r.stdout, "recorded notice %d:", &id); err != nil {
		t.Fatalf("notify printed %q", r.stdout)
	}
	want := map[string]string{"generation": "4", "path": "/etc/app conf"}

	// vitals events: its JSON, and its line.
	r = a.vitals(t, "events", "--after", fmt.Sprint(id-1), "-o", "json")
	var e health.Event
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || e.ID != id || e.Type != health.EventNotice ||
		e.Key != "example.com/config-reloaded" || !reflect.DeepEqual(e.Data, want) {
		t.Fatalf("events -o json: %v %q", err, r.stdout)
	}
	r = a.vitals(t, "events", "--after", fmt.Sprint(id-1))
	if line := fmt.Sprintf(`%d  %s  notice  example.com/config-reloaded generation=4 path="/etc/app conf"`, id, e.Time.Format("2006-01-02T15:04:05.000Z07:00")); r.code != 0 || r.stdout != line+"\n" {
		t.Fatalf("events: exit %d %q, want %q", r.code, r.stdout, line)
	}
	// The stream, as it came.
	if streamed := stream.next(t); streamed.ID != id || streamed.Key != e.Key || !reflect.DeepEqual(streamed.Data, want) {
		t.Fatalf("streamed %+v", streamed)
	}
	// The hook, with its key and data.
	waitFor(t, "the hook's line", a.logs, func() bool {
		b, _ := os.ReadFile(got)
		return string(b) == `example.com/config-reloaded {"generation":"4","path":"/etc/app conf"}`+"\n"
	})
	waitFor(t, "the hook's delivery counted", a.logs, func() bool {
		return strings.Contains(a.vitals(t, "hooks").stdout, "charm  exec  sh      notice  1 ")
	})
	// /metrics.
	res, err := http.Get("http://" + a.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metrics), `vitals_notices_total{key="example.com/config-reloaded"} 1`+"\n") {
		t.Errorf("/metrics counts no notice:\n%s", metrics)
	}

	// What is refused: by the command, before anything is sent, exit 2.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"Config-Reloaded"}, `vitals: notice key "Config-Reloaded": want lower-case words`},
		{[]string{"example.com"}, `vitals: notice key "example.com": want`},
		{[]string{"reloaded", "generation"}, `vitals: argument "generation": want NAME=VALUE`},
		{[]string{"reloaded", "=4"}, `vitals: argument "=4": want NAME=VALUE`},
		{[]string{"reloaded", "a b=c"}, `vitals: argument "a b=c": data name "a b": want letters, digits and - _ .`},
		{[]string{"reloaded", "log=" + strings.Repeat("x", 1025)}, `data log: a value of 1025 bytes: at most 1024`},
		{[]string{"reloaded", "a=1", "a=2"}, `vitals: argument "a=2": a is given twice, first as "a=1"`},
		{nil, "vitals: requires at least 1 arg(s), only received 0"},
	} {
		r := a.vitals(t, append([]string{"notify"}, tc.args...)...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "Run 'vitals notify --help' for usage.") {
			t.Errorf("notify %.60q: exit %d, %q %q; want 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	// By the agent: 400, with the API's error.
	res, err = socketClient(a.sock).Post("http://vitals/v1/notices", "application/json",
		strings.NewReader(`{"key": "reloaded", "data": {"bad name": "x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || string(body) != `{"error":"data name \"bad name\": want letters, digits and - _ . (at most 64 bytes)"}`+"\n" {
		t.Errorf("a bad notice: %d %s", res.StatusCode, body)
	}
	if evs := a.events(t, id); len(evs) != 0 {
		t.Errorf("events after the notice, of which none was recorded: %s", eventLines(evs))
	}
}

// stream is an event stream of the API (Accept: text/event-stream).
type stream struct{ r *bufio.Reader }

// openStream streams the events after id after from the socket, until the
// test ends.
func openStream(t *testing.T, sock string, after uint64) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard only
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://vitals/v1/events?after=%d", after), nil)
	req.Header.Set("Accept", "text/event-stream")
	c := socketClient(sock)
	c.Timeout = 0
	res, err := c.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the event stream: %v", err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return &stream{bufio.NewReader(res.Body)}
}

// next is the next event streamed.
func (s *stream) next(t *testing.T) health.Event {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var e health.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatal(err)
			}
			return e
		}
	}
}

// vitals stop and start take checks out of their levels and put them back,
// each a check-stopped or check-started event; an unknown check exits 2 and
// changes nothing. vitals hooks says when there are none.
func TestStopStartAndHooksCommands(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "peer1.conf")
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf("checks:\n  up: {file: {path: %s}, period: 100ms}\n  peer-config: {file: {path: %s}, period: 100ms, failure-threshold: 1}\n",
			os.Args[0], missing)
	}, "sleep")
	pidIn(t, a.ready)
	a.waitEvent(t, "peer-config failed", func(e health.Event) bool { return e.Type == health.EventCheckFailed })
	a.vitals(t, "health").expect(t, 1, "", "peer-config failed")

	a.vitals(t, "stop", "peer-config", "peer-config").expect(t, 0, "stopped peer-config (ready, fail)\n", "")
	waitReadyzIs(t, a.addr, 200, a.logs)
	a.vitals(t, "checks").expect(t, 0, "fail (stopped)", "")
	a.vitals(t, "stop", "nope", "up").expect(t, 2, "", `vitals: no such check "nope": nothing was changed`)
	if c := a.vitals(t, "check", "up"); !strings.Contains(c.stdout, "status:        pass") || strings.Contains(c.stdout, "stopped:") {
		t.Fatalf("a stop with an unknown check stopped up:\n%s", c.stdout)
	}
	a.vitals(t, "stop").expect(t, 2, "", "vitals: requires at least 1 arg(s), only received 0\nRun 'vitals stop --help' for usage.")

	r := a.vitals(t, "start", "peer-config", "-o", "json")
	var checks []client.Check
	if err := json.Unmarshal([]byte(r.stdout), &checks); err != nil || r.code != 0 || len(checks) != 1 || checks[0].Stopped {
		t.Fatalf("start -o json: %v %+v", err, r)
	}
	waitReadyzIs(t, a.addr, 503, a.logs)
	a.vitals(t, "start", "nope").expect(t, 2, "", `vitals: no such check "nope": nothing was changed`)
	a.vitals(t, "events").expect(t, 0, "  check-stopped  peer-config (ready)\n", "")
	a.vitals(t, "events").expect(t, 0, "  check-started  peer-config (ready)\n", "")

	a.vitals(t, "hooks").expect(t, 0, "no hooks: the agent's file has none\n", "")
	a.vitals(t, "hooks", "-o", "json").expect(t, 0, "[]\n", "")
}

// A program imports the client package and calls the agent with it: on the
// socket, and through a proxy that serves the API under a path of its own,
// as an http:// URL. Errors carry the agent's status and message.
func TestThePublicClientAgainstARealAgent(t *testing.T) {
	a := startAgent(t, func(a *agent) string {
		return fmt.Sprintf("checks:\n  up: {file: {path: %s}, period: 100ms}\n  loop: {heartbeat: {ttl: 1h}, level: live}\n", os.Args[0])
	}, "sleep")
	pid := pidIn(t, a.ready)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard only
	defer cancel()
	proxy := httptest.NewServer(http.StripPrefix("/pods/app-0", &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "vitals"}) },
		Transport: socketClient(a.sock).Transport,
	}))
	t.Cleanup(proxy.Close)

	for _, addr := range []string{a.sock, proxy.URL + "/pods/app-0/"} {
		c, err := client.New(addr, "")
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "up passes", a.logs, func() bool { ch, err := c.Check(ctx, "up"); return err == nil && ch.Status == health.Pass })
		if err := c.Beat(ctx, "loop"); err != nil {
			t.Fatalf("%s: beat: %v", addr, err)
		}
		checks, err := c.Checks(ctx, health.Live)
		if err != nil || len(checks) != 1 || checks[0].Name != "loop" || checks[0].Kind != "heartbeat" {
			t.Fatalf("%s: live checks %+v, %v", addr, checks, err)
		}
		if r, err := c.Run(ctx, "up"); err != nil || !r.OK {
			t.Fatalf("%s: run: %+v %v", addr, r, err)
		}
		e, err := c.Notify(ctx, "example.com/config-reloaded", map[string]string{"generation": "4"})
		if err != nil || e.Type != health.EventNotice || e.Data["generation"] != "4" {
			t.Fatalf("%s: notify: %+v %v", addr, e, err)
		}
		if evs, err := c.Events(ctx, e.ID-1, 0); err != nil || len(evs) != 1 || !reflect.DeepEqual(evs[0], e) {
			t.Fatalf("%s: events after %d: %+v %v", addr, e.ID-1, evs, err)
		}
		stopped, err := c.StopChecks(ctx, "up")
		if err != nil || len(stopped) != 1 || !stopped[0].Stopped {
			t.Fatalf("%s: stop: %+v %v", addr, stopped, err)
		}
		if _, err := c.StartChecks(ctx, "up"); err != nil {
			t.Fatalf("%s: start: %v", addr, err)
		}
		if h, err := c.Health(ctx, health.Live); err != nil || !h.OK {
			t.Fatalf("%s: health: %+v %v", addr, h, err)
		}
		if hooks, err := c.Hooks(ctx); err != nil || len(hooks) != 0 {
			t.Fatalf("%s: hooks %+v %v", addr, hooks, err)
		}
		var refused *client.Error
		if _, err := c.Check(ctx, "nope"); !errors.As(err, &refused) || refused.Status != 404 || refused.Message != `no such check "nope"` {
			t.Fatalf("%s: an unknown check: %#v", addr, err)
		}
		if err := c.Beat(ctx, "up"); !errors.As(err, &refused) || refused.Status != 409 {
			t.Fatalf("%s: a beat of a file check: %#v", addr, err)
		}
	}
	c, _ := client.New(a.sock, "")
	e, err := c.RestartService(ctx)
	if err != nil || e.Type != health.EventServiceStarted || e.PID == pid || e.Restarts != 1 {
		t.Fatalf("restart: %+v %v", e, err)
	}
	// The new instance writes its pid as it starts, maybe after the answer:
	// the cleanup kills the workload whose pid the file holds.
	waitFor(t, "the new instance's pid in its file", a.logs, func() bool {
		b, _ := os.ReadFile(a.ready)
		return string(b) == strconv.Itoa(e.PID)
	})
}
