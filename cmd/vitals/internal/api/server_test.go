package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// agent is a Monitor on a fake clock served by the API on a real socket:
//
//	boot  startup  passes
//	db    ready    passes while up is true; fails at the first failure; every run counted
//	loop  live     a heartbeat (ttl 1m)
//
// and the watchdogs and services it is asked for.
type agent struct {
	m         *health.Monitor
	clock     *healthtest.Clock
	up        atomic.Bool
	runs      atomic.Int64
	loop      *health.Heartbeat
	watchdogs map[string]*health.Watchdog
	services  map[string]*service
	client    *client.Client
	http      *http.Client
	base      string
	probes    *httptest.Server // the Monitor's probe endpoints
}

// newAgent serves the agent on addr (a socket of the test's when ""), with
// a watchdog for each name in watchdogs: live, limit 1m, its units ending
// on Reset, as the agent's are.
func newAgent(t *testing.T, addr, token string, watchdogs ...string) *agent {
	t.Helper()
	return serveAgent(t, addr, token, watchdogs, nil)
}

// serveAgent is newAgent with a service (see service) for each name in
// services, in their order.
func serveAgent(t *testing.T, addr, token string, watchdogs, services []string, opts ...api.Option) *agent {
	t.Helper()
	a := &agent{clock: healthtest.NewClock(time.Time{})}
	a.up.Store(true)
	a.m = health.New(health.WithClock(a.clock), health.WithJitter(0), health.WithLogger(slog.New(slog.DiscardHandler)))
	must(t, a.m.Add(health.Check{Name: "boot", Level: health.Startup, Kind: "file",
		Checker: health.CheckerFunc(func(context.Context) error { return nil })}))
	must(t, a.m.Add(health.Check{Name: "db", Level: health.Ready, Kind: "tcp", FailureThreshold: 1,
		Checker: health.CheckerFunc(func(context.Context) error {
			n := a.runs.Add(1)
			if !a.up.Load() {
				return fmt.Errorf("db down (run %d)", n)
			}
			return nil
		})}))
	var err error
	a.loop, err = a.m.Heartbeat("loop", time.Minute, health.Live)
	must(t, err)
	a.watchdogs = map[string]*health.Watchdog{}
	for _, name := range watchdogs {
		a.watchdogs[name], err = a.m.Watchdog(name, time.Minute, health.Live, health.EndUnitsOnReset())
		must(t, err)
	}
	a.services = map[string]*service{}
	var supervised []api.Service
	for _, name := range services {
		a.services[name] = &service{m: a.m, name: name, running: true}
		supervised = append(supervised, a.services[name])
	}

	if addr == "" {
		addr = vitalstest.SocketPath(t)
	}
	ln, err := api.Listen(addr)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: api.New(a.m, &api.FedChecks{Heartbeats: map[string]*health.Heartbeat{"loop": a.loop}, Watchdogs: a.watchdogs}, token,
		append([]api.Option{api.WithServices(supervised)}, opts...)...),
		BaseContext: func(net.Listener) context.Context { return ctx }, ConnContext: api.ConnContext}
	go srv.Serve(ln)
	a.probes = httptest.NewServer(a.m.Handler())
	t.Cleanup(func() {
		cancel()
		srv.Close()
		a.probes.Close()
	})
	a.m.Start(ctx)

	a.client, err = client.New(addr, token)
	must(t, err)
	network, address := "unix", addr
	a.base = "http://vitals"
	if strings.HasPrefix(addr, "tcp://") { // the port the listener got
		network, address, a.base = "tcp", ln.Addr().String(), "http://"+ln.Addr().String()
		a.client, err = client.New("tcp://"+address, token)
		must(t, err)
	}
	a.http = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, address)
	}}}
	a.waitFor(t, "db passes", func(c client.Check) bool { return c.Name == "db" && c.Status == health.Pass })
	return a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// call makes one request and returns the status, the headers and the body.
func (a *agent) call(t *testing.T, method, path, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	must(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := a.http.Do(req)
	must(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	must(t, err)
	return res.StatusCode, res.Header, string(b)
}

// expect makes a request and checks its status; for JSON answers, it
// decodes the body into out, and an error's body must be {"error": ...}
// containing want.
func (a *agent) expect(t *testing.T, method, path, body string, code int, want string, out any) {
	t.Helper()
	got, h, b := a.call(t, method, path, body)
	if got != code || !strings.Contains(b, want) {
		t.Fatalf("%s %s: %d %s\nwant %d with %q", method, path, got, b, code, want)
	}
	if code == http.StatusNoContent {
		return
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	if code >= 400 {
		var e map[string]string
		if err := json.Unmarshal([]byte(b), &e); err != nil || len(e) != 1 || e["error"] == "" {
			t.Fatalf("%s %s: error body %s is not {\"error\": ...}", method, path, b)
		}
	}
	if out != nil {
		if err := json.Unmarshal([]byte(b), out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// waitFor polls the API until a check satisfies cond.
func (a *agent) waitFor(t *testing.T, what string, cond func(client.Check) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		checks, err := a.client.Checks(context.Background(), 0)
		must(t, err)
		for _, c := range checks {
			if cond(c) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s: %+v", what, checks)
		}
	}
}

func (a *agent) readyz(t *testing.T) int {
	t.Helper()
	res, err := http.Get(a.probes.URL + "/readyz")
	must(t, err)
	res.Body.Close()
	return res.StatusCode
}

func TestChecksListsEveryCheckWithItsStatusTimingAndLastResult(t *testing.T) {
	a := newAgent(t, "", "")
	var checks []map[string]any
	a.expect(t, "GET", "/v1/checks", "", 200, `"name":"boot"`, &checks)
	if len(checks) != 3 {
		t.Fatalf("%d checks: %v", len(checks), checks)
	}
	db := checks[1]
	for key, want := range map[string]any{
		"name": "db", "level": "ready", "kind": "tcp", "status": "pass", "stopped": false,
		"successes": 1.0, "failures": 0.0, "successThreshold": 1.0, "failureThreshold": 1.0, "runs": 1.0,
		"period": "10s", "timeout": "1s", "initialDelay": "0s", "since": healthtest.Epoch.Format(time.RFC3339),
	} {
		if db[key] != want {
			t.Errorf("db %s = %#v, want %#v", key, db[key], want)
		}
	}
	last, _ := db["last"].(map[string]any)
	if last["ok"] != true || last["time"] != healthtest.Epoch.Format(time.RFC3339) || last["duration"] != "0s" {
		t.Errorf("db last = %v", db["last"])
	}
	if _, ok := db["history"]; ok {
		t.Errorf("the list shows a history: %v", db)
	}
	loop := checks[2]
	if loop["kind"] != "heartbeat" || loop["status"] != "pending" || loop["level"] != "live" {
		t.Errorf("loop = %v", loop)
	}
	for _, absent := range []string{"timeout", "since", "last", "stableFor", "stableAt"} {
		if _, ok := loop[absent]; ok {
			t.Errorf("a pending heartbeat has %s: %v", absent, loop)
		}
	}

	var live []client.Check
	a.expect(t, "GET", "/v1/checks?level=live", "", 200, "", &live)
	if len(live) != 1 || live[0].Name != "loop" {
		t.Errorf("?level=live: %+v", live)
	}
	a.expect(t, "GET", "/v1/checks?level=alive", "", 200, `"loop"`, nil) // Pebble's word
	a.expect(t, "GET", "/v1/checks?level=sometimes", "", 400, `level: unknown level \"sometimes\"`, nil)
}

func TestACheckWaitingToBeStableSaysForHowLongAndUntilWhen(t *testing.T) {
	a := newAgent(t, "", "")
	must(t, a.m.Add(health.Check{Name: "mq", Level: health.Ready, Kind: "amqp", StableFor: 30 * time.Second,
		Checker: health.CheckerFunc(func(context.Context) error { return nil })}))
	a.waitFor(t, "mq ran", func(c client.Check) bool { return c.Name == "mq" && c.Runs == 1 })
	var mq map[string]any
	a.expect(t, "GET", "/v1/checks/mq", "", 200, "", &mq)
	for key, want := range map[string]any{
		"status": "pending", "stableFor": "30s", "stableAt": healthtest.Epoch.Add(30 * time.Second).Format(time.RFC3339),
	} {
		if mq[key] != want {
			t.Errorf("mq %s = %#v, want %#v", key, mq[key], want)
		}
	}
	c, err := a.client.Check(context.Background(), "mq")
	must(t, err)
	if time.Duration(c.StableFor) != 30*time.Second || !c.StableAt.Equal(healthtest.Epoch.Add(30*time.Second)) {
		t.Errorf("the client read stable for %v, at %v", c.StableFor, c.StableAt)
	}
}

func TestOneCheckHasItsHistoryAndAnUnknownOneIs404(t *testing.T) {
	a := newAgent(t, "", "")
	a.up.Store(false)
	_, err := a.client.Run(context.Background(), "db")
	must(t, err)
	c, err := a.client.Check(context.Background(), "db")
	must(t, err)
	if len(c.History) != 2 || !c.History[0].OK || c.History[1].OK || c.History[1].Output != "db down (run 2)" ||
		c.Last == nil || c.Last.Output != "db down (run 2)" || c.Status != health.Fail {
		t.Fatalf("db: %+v", c)
	}
	var loop map[string]any
	a.expect(t, "GET", "/v1/checks/loop", "", 200, "", &loop)
	if h, ok := loop["history"].([]any); !ok || len(h) != 0 {
		t.Errorf("a check with no result yet has history %#v, want []", loop["history"])
	}
	a.expect(t, "GET", "/v1/checks/nope", "", 404, `no such check \"nope\"`, nil)
	var e *client.Error
	if _, err := a.client.Check(context.Background(), "nope"); !errors.As(err, &e) || e.Status != 404 {
		t.Fatalf("client: %v", err)
	}
}

func TestRunAnswersWithAFreshResultThatCounts(t *testing.T) {
	a := newAgent(t, "", "")
	a.up.Store(false)
	var r client.Result
	a.expect(t, "POST", "/v1/checks/db/run", "", 200, "", &r)
	if r.OK || r.Output != "db down (run 2)" || !r.Time.Equal(a.clock.Now()) {
		t.Fatalf("result %+v", r)
	}
	if a.readyz(t) != 503 {
		t.Fatal("the failed run did not count: /readyz still passes")
	}
	a.up.Store(true)
	if r, err := a.client.Run(context.Background(), "db"); err != nil || !r.OK || a.runs.Load() != 3 {
		t.Fatalf("run %+v, %v; %d runs", r, err, a.runs.Load())
	}
	a.expect(t, "POST", "/v1/checks/nope/run", "", 404, `no such check \"nope\"`, nil)
}

func TestBeatMakesAHeartbeatPass(t *testing.T) {
	a := newAgent(t, "", "")
	a.expect(t, "POST", "/v1/checks/loop/beat", "", 204, "", nil)
	a.waitFor(t, "loop passes", func(c client.Check) bool { return c.Name == "loop" && c.Status == health.Pass })
	must(t, a.client.Beat(context.Background(), "loop"))
	a.expect(t, "POST", "/v1/checks/db/beat", "", 409, `check \"db\" is a tcp check, not a heartbeat`, nil)
	a.expect(t, "POST", "/v1/checks/nope/beat", "", 404, `no such check \"nope\"`, nil)
}

func TestABeatSaysPassWarnOrFailInItsBodyOrItsQuery(t *testing.T) {
	a := newAgent(t, "", "")
	isNow := func(status health.Status) func(client.Check) bool {
		return func(c client.Check) bool { return c.Name == "loop" && c.Status == status }
	}
	a.expect(t, "POST", "/v1/checks/loop/beat", `{"status": "fail", "output": "disk full"}`, 204, "", nil)
	a.waitFor(t, "loop fails", isNow(health.Fail))
	if c, err := a.client.Check(context.Background(), "loop"); err != nil || c.Last == nil || c.Last.OK || c.Last.Output != "disk full" {
		t.Fatalf("after a beat that said fail: %+v, %v", c.Last, err)
	}
	a.expect(t, "POST", "/v1/checks/loop/beat?status=warn&output=queue+80%25+full", "", 204, "", nil)
	a.waitFor(t, "loop warns", isNow(health.Warn))
	if c, _ := a.client.Check(context.Background(), "loop"); c.Last == nil || !c.Last.OK || !c.Last.Warn || c.Last.Output != "queue 80% full" {
		t.Fatalf("after a beat that said warn: %+v", c.Last)
	}
	took := 4.5
	must(t, a.client.Report(context.Background(), "loop", client.Beat{Output: "backup done", ObservedValue: &took, ObservedUnit: "s"}))
	a.waitFor(t, "loop passes", isNow(health.Pass))
	if c, _ := a.client.Check(context.Background(), "loop"); c.Last == nil || !c.Last.OK || c.Last.Warn || c.Last.Output != "backup done" ||
		c.Last.ObservedValue != 4.5 || c.Last.ObservedUnit != "s" {
		t.Fatalf("after a beat that said pass with a value: %+v", c.Last)
	}
	for _, bad := range []struct{ path, body, want string }{
		{"/v1/checks/loop/beat", `{"status": "up"}`, `beat of check \"loop\": status \"up\": want pass, warn or fail`},
		{"/v1/checks/loop/beat?status=down", "", `status \"down\": want pass, warn or fail`},
		{"/v1/checks/loop/beat?status=fail", `{"output": "x"}`, "in a JSON body or in the query, not both"},
		{"/v1/checks/loop/beat?msg=OK", "", `unknown parameter \"msg\" (want status, output, observedValue, observedUnit)`},
		{"/v1/checks/loop/beat", `{"note": "x"}`, `unknown field \"note\"`},
		{"/v1/checks/loop/beat?observedValue=12", "", "observedValue 12 needs its observedUnit"},
		{"/v1/checks/loop/beat?observedValue=fast&observedUnit=ms", "", `observedValue \"fast\" is not a finite number`},
		{"/v1/checks/loop/beat?observedValue=NaN&observedUnit=ms", "", `observedValue \"NaN\" is not a finite number`},
		{"/v1/checks/loop/beat?observedValue=-Inf&observedUnit=ms", "", `observedValue \"-Inf\" is not a finite number`},
		{"/v1/checks/loop/beat", `{"observedUnit": "ms"}`, `observedUnit \"ms\" without an observedValue`},
	} {
		a.expect(t, "POST", bad.path, bad.body, 400, bad.want, nil)
	}
	var e *client.Error
	if err := a.client.Report(context.Background(), "loop", client.Beat{Status: "sideways"}); !errors.As(err, &e) || e.Status != 400 {
		t.Fatalf("client, a bad status: %v", err)
	}
	if st, _ := a.m.CheckState("loop"); st.Status != health.Pass {
		t.Fatalf("after bad beats: %v, want pass: a refused beat changes nothing", st.Status)
	}
}

func TestUnitsOfWorkBeginAndEndOnAWatchdog(t *testing.T) {
	a := newAgent(t, "", "", "jobs")
	var u client.Unit
	code, h, body := a.call(t, "POST", "/v1/checks/jobs/work", "")
	if code != 201 || h.Get("Location") != "/v1/checks/jobs/work/1" || json.Unmarshal([]byte(body), &u) != nil || u.ID != 1 {
		t.Fatalf("POST work: %d %v %s, want 201 with id 1 and its Location", code, h, body)
	}
	second, err := a.client.BeginWork(context.Background(), "jobs")
	if err != nil || second != 2 {
		t.Fatalf("BeginWork: %d, %v; want 2", second, err)
	}
	a.clock.Advance(time.Minute)
	a.waitFor(t, "jobs fails", func(c client.Check) bool {
		return c.Name == "jobs" && c.Status == health.Fail && c.Last != nil &&
			c.Last.Output == "2 of 2 units of work have run longer than 1m0s; the oldest, unit 1, began 1m0s ago"
	})
	a.expect(t, "DELETE", "/v1/checks/jobs/work/1", "", 204, "", nil)
	must(t, a.client.EndWork(context.Background(), "jobs", second))
	a.waitFor(t, "jobs passes once its units ended", func(c client.Check) bool { return c.Name == "jobs" && c.Status == health.Pass })

	a.expect(t, "DELETE", "/v1/checks/jobs/work/1", "", 410,
		`no unit of work 1 is running on check \"jobs\": it has ended, or the workload has restarted since it began`, nil)
	a.expect(t, "DELETE", "/v1/checks/jobs/work/one", "", 400, `unit of work \"one\": want the id that POST /v1/checks/jobs/work answered`, nil)
	a.expect(t, "POST", "/v1/checks/db/work", "", 409, `check \"db\" is a tcp check, not a watchdog: it has no units of work`, nil)
	a.expect(t, "DELETE", "/v1/checks/loop/work/1", "", 409, `check \"loop\" is a heartbeat check, not a watchdog`, nil)
	a.expect(t, "POST", "/v1/checks/nope/work", "", 404, `no such check \"nope\"`, nil)
	a.expect(t, "GET", "/v1/checks/jobs/work", "", 405, "use POST", nil)
	a.expect(t, "POST", "/v1/checks/jobs/beat", "", 409, `check \"jobs\" is a watchdog check, not a heartbeat`, nil)

	// The units belong to the workload's run: they end when its checks start over.
	third, err := a.client.BeginWork(context.Background(), "jobs")
	must(t, err)
	a.m.Reset("the workload restarted")
	var e *client.Error
	if err := a.client.EndWork(context.Background(), "jobs", third); !errors.As(err, &e) || e.Status != 410 {
		t.Fatalf("EndWork of a unit of the run before: %v, want 410", err)
	}
	if n := a.watchdogs["jobs"].Running(); n != 0 {
		t.Fatalf("%d units running after the workload restarted", n)
	}
}

func TestAWatchdogKeepsAtMostMaxUnitIDsUnitsOfWork(t *testing.T) {
	a := newAgent(t, "", "", "jobs")
	for range health.MaxUnitIDs - 1 {
		if _, err := a.watchdogs["jobs"].BeginID(); err != nil {
			t.Fatal(err)
		}
	}
	a.expect(t, "POST", "/v1/checks/jobs/work", "", 201, `{"id":1000}`, nil)
	a.expect(t, "POST", "/v1/checks/jobs/work", "", 409,
		`watchdog \"jobs\": 1000 units of work begun by id are running, the most it keeps: too many units of work: end one (DELETE /v1/checks/jobs/work/ID), or restart the workload`, nil)
	a.expect(t, "DELETE", "/v1/checks/jobs/work/7", "", 204, "", nil)
	a.expect(t, "POST", "/v1/checks/jobs/work", "", 201, `{"id":1001}`, nil)
}

func TestStopLeavesAFailingCheckOutOfReadinessAndStartPutsItBack(t *testing.T) {
	a := newAgent(t, "", "")
	a.up.Store(false)
	a.client.Run(context.Background(), "db")
	if a.readyz(t) != 503 {
		t.Fatal("/readyz passes with db failing")
	}
	var stopped []client.Check
	a.expect(t, "POST", "/v1/checks/stop", `{"checks": ["db"]}`, 200, "", &stopped)
	if len(stopped) != 1 || !stopped[0].Stopped || stopped[0].Status != health.Fail {
		t.Fatalf("stopped: %+v", stopped)
	}
	if a.readyz(t) != 200 {
		t.Fatal("/readyz fails with db stopped")
	}
	a.expect(t, "POST", "/v1/checks/start", `{"checks": ["db", "nope", "other"]}`, 404,
		`no such check \"nope\", \"other\": nothing was changed`, nil)
	if a.readyz(t) != 200 {
		t.Fatal("a start with an unknown name started db")
	}
	a.expect(t, "POST", "/v1/checks/start", `{"checks": ["db"]}`, 200, `"stopped":false`, nil)
	if a.readyz(t) != 503 {
		t.Fatal("/readyz passes with db started again, failing")
	}
	a.expect(t, "POST", "/v1/checks/stop", `{"checks": []}`, 400, "no checks named", nil)
	a.expect(t, "POST", "/v1/checks/stop", `{"names": ["db"]}`, 400, `unknown field \"names\"`, nil)
	a.expect(t, "POST", "/v1/checks/stop", `db`, 400, `want a body {\"checks\": [NAME...]}`, nil)
}

func TestANameRepeatedInAStopIsAnsweredOnceAndTheAnswerStaysSmall(t *testing.T) {
	a := newAgent(t, "", "")
	// Close to the 1 MiB a body may have: one name, 80,000 times over.
	repeated := func(names ...string) string {
		quoted := make([]string, 80_000)
		for i := range quoted {
			quoted[i] = strconv.Quote(names[i%len(names)])
		}
		return `{"checks": [` + strings.Join(quoted, ",") + `]}`
	}
	for _, path := range []string{"/v1/checks/stop", "/v1/checks/start"} {
		body := repeated("db", "boot")
		code, _, answer := a.call(t, "POST", path, body)
		var got []client.Check
		if err := json.Unmarshal([]byte(answer), &got); code != 200 || err != nil {
			t.Fatalf("POST %s: %d %.200s", path, code, answer)
		}
		if len(got) != 2 || got[0].Name != "db" || got[1].Name != "boot" {
			t.Fatalf("POST %s answered %d checks, want db and boot once each, in the order named", path, len(got))
		}
		// Two checks' worth, whatever the request's size.
		if len(answer) > 4<<10 {
			t.Fatalf("POST %s: an answer of %d bytes to a request of %d", path, len(answer), len(body))
		}
	}
	// Unknown names too: the 404 quotes a few, and says how many more.
	unknown := make([]string, 50)
	for i := range unknown {
		unknown[i] = fmt.Sprintf("nope-%d", i)
	}
	code, _, answer := a.call(t, "POST", "/v1/checks/stop", repeated(append(unknown, "db")...))
	if code != 404 || len(answer) > 1<<10 || !strings.Contains(answer, `no such check \"nope-0\", \"nope-1\"`) ||
		!strings.Contains(answer, `\"nope-9\" and 40 more: nothing was changed`) {
		t.Fatalf("%d %.300s", code, answer)
	}
	if st, _ := a.m.CheckState("db"); st.Stopped {
		t.Fatal("a stop with unknown names stopped db")
	}
}

func TestHealthSaysWhetherALevelPassesAndWhy(t *testing.T) {
	a := newAgent(t, "", "")
	var h client.Health
	a.expect(t, "GET", "/v1/health", "", 200, "", &h)
	if !h.OK || h.Level != health.Ready || h.Reason != "" {
		t.Fatalf("%+v", h)
	}
	a.up.Store(false)
	a.client.Run(context.Background(), "db")
	h, err := a.client.Health(context.Background(), health.Ready)
	if err != nil || h.OK || h.Reason != "readyz check failed: db failed: db down (run 2)" {
		t.Fatalf("%+v, %v", h, err)
	}
	a.expect(t, "GET", "/v1/health?level=live", "", 200, `{"level":"live","ok":true}`, nil)
	a.expect(t, "GET", "/v1/health?level=x", "", 400, "unknown level", nil)
}

func TestEventsAfterAnID(t *testing.T) {
	a := newAgent(t, "", "")
	var all []health.Event
	a.expect(t, "GET", "/v1/events", "", 200, "", &all)
	// check-passed boot, level-passed startup, check-passed db, level-passed ready
	if len(all) != 4 || all[0].ID != 1 || all[2].Type != health.EventCheckPassed || all[2].Check != "db" || all[2].To != health.Pass {
		t.Fatalf("events %+v", all)
	}
	var some []health.Event
	a.expect(t, "GET", "/v1/events?after=2", "", 200, "", &some)
	if len(some) != 2 || some[0].ID != 3 {
		t.Fatalf("after=2: %+v", some)
	}
	a.expect(t, "GET", "/v1/events?after=4", "", 200, "[]\n", nil)
	a.expect(t, "GET", "/v1/events?after=five", "", 400, `after: \"five\" is not an event id`, nil)
	a.expect(t, "GET", "/v1/events?wait=soon", "", 400, `wait \"soon\": want a duration`, nil)
	evs, err := a.client.Events(context.Background(), 3, 0)
	if err != nil || len(evs) != 1 || evs[0].ID != 4 {
		t.Fatalf("client: %+v, %v", evs, err)
	}
}

func TestAWaitForEventsAnswersEmptyWhenItEnds(t *testing.T) {
	a := newAgent(t, "", "")
	start := time.Now()
	a.expect(t, "GET", "/v1/events?after=4&wait=150ms", "", 200, "[]\n", nil)
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("answered after %v, before the wait ended", took)
	}
}

func TestAWaitForEventsAnswersAsSoonAsOneComes(t *testing.T) {
	a := newAgent(t, "", "")
	go func() {
		time.Sleep(50 * time.Millisecond)
		a.m.Emit(health.Event{Type: health.EventStopping})
	}()
	start := time.Now()
	evs, err := a.client.Events(context.Background(), 4, time.Minute)
	if err != nil || len(evs) != 1 || evs[0].ID != 5 || evs[0].Type != health.EventStopping {
		t.Fatalf("%+v, %v", evs, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("answered after %v", took)
	}
}

// sse reads server-sent events: each event's id: and data: lines.
type sse struct{ r *bufio.Reader }

func (a *agent) stream(t *testing.T, path string, header ...string) *sse {
	t.Helper()
	// A missing event fails the test at this deadline instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", a.base+path, nil)
	must(t, err)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := a.http.Do(req)
	must(t, err)
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	return &sse{bufio.NewReader(res.Body)}
}

// next returns the next event's id line and its decoded data.
func (s *sse) next(t *testing.T) (string, health.Event) {
	t.Helper()
	var id string
	var e health.Event
	for {
		line, err := s.r.ReadString('\n')
		must(t, err)
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimSpace(line)
		case strings.HasPrefix(line, "data: "):
			must(t, json.Unmarshal([]byte(line[len("data: "):]), &e))
		case line == "\n" && id != "":
			return id, e
		}
	}
}

func TestTheEventStreamHasIDLinesAndResumesAfterLastEventID(t *testing.T) {
	a := newAgent(t, "", "")
	s := a.stream(t, "/v1/events?after=2")
	for _, want := range []uint64{3, 4} {
		if id, e := s.next(t); id != fmt.Sprintf("id: %d", want) || e.ID != want {
			t.Fatalf("%s %+v, want id %d", id, e, want)
		}
	}
	a.m.Emit(health.Event{Type: health.EventStopping})
	if id, e := s.next(t); id != "id: 5" || e.Type != health.EventStopping {
		t.Fatalf("%s %+v", id, e)
	}
	// A reconnecting EventSource sends the last id it saw, which wins over the query.
	again := a.stream(t, "/v1/events?after=0", "Last-Event-ID", "4")
	if id, _ := again.next(t); id != "id: 5" {
		t.Fatalf("resumed at %s, want id: 5", id)
	}
	code, _, body := a.call(t, "GET", "/v1/events", "", "Accept", "text/event-stream", "Last-Event-ID", "x")
	if code != 400 || !strings.Contains(body, `Last-Event-ID: \"x\" is not an event id`) {
		t.Fatalf("%d %s", code, body)
	}
}

func TestAWrongMethodIs405AndAnUnknownPathIs404(t *testing.T) {
	a := newAgent(t, "", "")
	code, h, body := a.call(t, "DELETE", "/v1/checks", "")
	if code != 405 || h.Get("Allow") != "GET, HEAD" || body != `{"error":"method DELETE not allowed on /v1/checks: use GET, HEAD"}`+"\n" {
		t.Fatalf("%d %v %s", code, h, body)
	}
	a.expect(t, "GET", "/v1/checks/db/run", "", 405, "use POST", nil)
	a.expect(t, "POST", "/v1/events", "", 405, "use GET, HEAD", nil)
	a.expect(t, "GET", "/v1/nope", "", 404, "no such path: /v1/nope", nil)
	a.expect(t, "GET", "/", "", 404, "no such path: /", nil)
}

func TestATCPAPINeedsTheToken(t *testing.T) {
	a := newAgent(t, "tcp://127.0.0.1:0", "s3cret")
	a.expect(t, "GET", "/v1/checks", "", 401, "this API needs a bearer token", nil)
	code, h, _ := a.call(t, "GET", "/v1/checks", "", "Authorization", "Bearer wrong")
	if code != 401 || h.Get("WWW-Authenticate") != `Bearer realm="vitals"` {
		t.Fatalf("a wrong token: %d %v", code, h)
	}
	if code, _, _ := a.call(t, "GET", "/v1/nope", ""); code != 401 {
		t.Fatalf("an unknown path without a token: %d, want 401 before anything else", code)
	}
	if code, _, body := a.call(t, "GET", "/v1/checks", "", "Authorization", "Bearer s3cret"); code != 200 || !strings.Contains(body, `"db"`) {
		t.Fatalf("the right token: %d %s", code, body)
	}
	if _, err := a.client.Checks(context.Background(), 0); err != nil {
		t.Fatalf("the client with the token: %v", err)
	}
	wrong, err := client.New("tcp://"+a.base[len("http://"):], "s3cre")
	must(t, err)
	var e *client.Error
	if _, err := wrong.Checks(context.Background(), 0); !errors.As(err, &e) || e.Status != 401 || e.Message != "wrong bearer token" {
		t.Fatalf("the client with a wrong token: %v", err)
	}
}

// A notice posted is an event of the log like the others: answered with
// its event, read after its id, streamed; the client records one too.
func TestANoticeIsRecordedInTheEventLog(t *testing.T) {
	a := newAgent(t, "", "")
	s := a.stream(t, "/v1/events?after=4")
	var e health.Event
	a.expect(t, "POST", "/v1/notices", `{"key": "example.com/config-reloaded", "data": {"generation": "4", "path": "/etc/app.conf"}}`, 200, "", &e)
	want := health.Event{ID: 5, Time: a.clock.Now(), Type: health.EventNotice, Key: "example.com/config-reloaded",
		Data: map[string]string{"generation": "4", "path": "/etc/app.conf"}}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("answered %+v, want %+v", e, want)
	}
	if id, streamed := s.next(t); id != "id: 5" || !reflect.DeepEqual(streamed, want) {
		t.Fatalf("streamed %s %+v", id, streamed)
	}
	var evs []health.Event
	a.expect(t, "GET", "/v1/events?after=4", "", 200, `"type":"notice","key":"example.com/config-reloaded","data":{"generation":"4","path":"/etc/app.conf"}`, &evs)
	if len(evs) != 1 || !reflect.DeepEqual(evs[0], want) {
		t.Fatalf("after 4: %+v", evs)
	}
	e, err := a.client.Notify(context.Background(), "leader-elected", nil)
	if err != nil || e.ID != 6 || e.Type != health.EventNotice || e.Key != "leader-elected" || e.Data != nil {
		t.Fatalf("the client's notice: %+v %v", e, err)
	}
}

// A notice the library refuses is a 400 that says why, and records
// nothing; so is a body that is not a notice.
func TestABadNoticeIs400AndRecordsNothing(t *testing.T) {
	a := newAgent(t, "", "")
	for _, tc := range []struct{ body, want string }{
		{`{"key": "Config Reloaded"}`, `notice key \"Config Reloaded\": want lower-case words`},
		{`{"key": ""}`, "no notice key"},
		{`{"data": {"a": "b"}}`, "no notice key"},
		{`{"key": "reloaded", "data": {"a b": "c"}}`, `data name \"a b\": want letters, digits and - _ .`},
		{`{"key": "reloaded", "data": {"log": "` + strings.Repeat("x", 1025) + `"}}`, "data log: a value of 1025 bytes: at most 1024"},
		{`{"key": "reloaded", "data": {"generation": 4}}`, `want a body {\"key\": KEY, \"data\": {NAME: VALUE...}, \"repeatAfter\": DURATION}, the values strings: json: cannot unmarshal number`},
		{`{"key": "reloaded", "type": "custom"}`, `unknown field \"type\"`},
		{`reloaded`, `want a body {\"key\": KEY`},
	} {
		a.expect(t, "POST", "/v1/notices", tc.body, 400, tc.want, nil)
	}
	if id := a.m.LastEventID(); id != 4 {
		t.Fatalf("the last event is %d: a refused notice was recorded", id)
	}
	var e *client.Error
	if _, err := a.client.Notify(context.Background(), "Bad", nil); !errors.As(err, &e) || e.Status != 400 || !strings.HasPrefix(e.Message, `notice key "Bad"`) {
		t.Fatalf("the client: %v", err)
	}
	a.expect(t, "GET", "/v1/notices", "", 405, "use POST", nil)
}
