package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// logLines is a slog.Handler that keeps every line as MESSAGE k=v..., for
// the test to read while the agent writes.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }

func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	return nil
}

// find is the first line that has s, or "".
func (l *logLines) find(s string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// parse reads a file that listens on 127.0.0.1:0 and a fresh socket, with
// more.
func parse(t *testing.T, more string) *config.Config {
	t.Helper()
	c, err := config.Parse("vitals.yaml", []byte(fmt.Sprintf("listen: 127.0.0.1:0\napi: %s\n%s", vitalstest.SocketPath(t), more)), os.LookupEnv, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// agentRun is an agent whose Run goes on in the background.
type agentRun struct {
	a      *Agent
	logs   *logLines
	clock  *healthtest.Clock
	signal context.CancelFunc // the first stop signal
	again  chan struct{}      // the second
	now    context.CancelFunc // the third
	addr   string             // the probe endpoints'
	done   chan struct{}      // closed when Run returned
	code   int
	err    error
}

// start runs c with the fake clock and waits for the agent to say it runs.
func start(t *testing.T, c *config.Config, command ...string) *agentRun {
	t.Helper()
	return startReloading(t, c, nil, command...)
}

// startReloading is start with the agent's Options.Reload.
func startReloading(t *testing.T, c *config.Config, reload func() (*config.Config, error), command ...string) *agentRun {
	t.Helper()
	r := &agentRun{logs: &logLines{}, clock: healthtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		again: make(chan struct{}), done: make(chan struct{})}
	now, hurry := context.WithCancel(context.Background())
	ctx, signal := context.WithCancel(context.Background())
	r.signal, r.now = signal, hurry
	a, err := New(c, Options{Command: command, Logger: slog.New(r.logs), Clock: r.clock, Again: r.again, Now: now, Reload: reload})
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	go func() {
		defer close(r.done)
		r.code, r.err = a.Run(ctx)
	}()
	t.Cleanup(func() {
		signal()
		hurry()
		<-r.done
	})
	for {
		if line := r.logs.find("vitals running"); line != "" {
			r.addr = strings.Fields(line[strings.Index(line, "listen=")+len("listen="):])[0]
			return r
		}
		select {
		case <-r.done:
			if r.logs.find("vitals running") == "" {
				t.Fatalf("Run returned %d, %v; logs:\n%s", r.code, r.err, r.logs)
			}
		case <-time.After(time.Millisecond):
		}
	}
}

// readyz is /readyz's status code.
func (r *agentRun) readyz(t *testing.T) int {
	t.Helper()
	res, err := http.Get("http://" + r.addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// waitFor polls until ok; the test's own timeout is the only bound.
func waitFor(ok func() bool) {
	for !ok() {
		time.Sleep(time.Millisecond)
	}
}

// events are the types of the Monitor's events so far, with the check or
// level they are about.
func (r *agentRun) events() []string {
	var out []string
	for _, e := range r.a.monitor.Events(0) {
		s := string(e.Type)
		switch {
		case e.Check != "":
			s += " " + e.Check
		case e.Type == health.EventLevelFailed || e.Type == health.EventLevelPassed:
			s += " " + e.Level.String()
		}
		out = append(out, s)
	}
	return out
}

// emitted waits until an event of type typ has been emitted.
func (r *agentRun) emitted(typ health.EventType) {
	waitFor(func() bool {
		return slices.ContainsFunc(r.a.monitor.Events(0), func(e health.Event) bool { return e.Type == typ })
	})
}

// ended waits for Run to return.
func (r *agentRun) ended(t *testing.T) (int, error) {
	t.Helper()
	<-r.done
	return r.code, r.err
}

// after is what comes after the first event of type typ in events.
func after(events []string, typ health.EventType) []string {
	i := slices.IndexFunc(events, func(e string) bool { return strings.HasPrefix(e, string(typ)) })
	if i < 0 {
		return nil
	}
	return events[i:]
}

func TestNewStartsNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sock := vitalstest.SocketPath(t)
	c, err := config.Parse("vitals.yaml", []byte(fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n"+
		"hooks:\n  - on: [stopping]\n    webhook: {url: \"http://127.0.0.1:1/\"}\n", addr, sock)), os.LookupEnv, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	before := vitalsGoroutines()
	if _, err := New(c, Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	if after := vitalsGoroutines(); len(after) > len(before) {
		t.Errorf("New started goroutines:\n%s", strings.Join(after, "\n\n"))
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the API's socket: %v, want none", err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the probe endpoints' port is taken: %v", err)
	}
	ln.Close()
}

func TestOnASignalReadinessFailsThroughTheDrainOnTheClock(t *testing.T) {
	r := start(t, parse(t, "drain: 1h\nchecks:\n  loop: {level: live, heartbeat: {ttl: 2h}}\n"))
	if code := r.readyz(t); code != http.StatusOK {
		t.Fatalf("/readyz %d before the signal, want 200", code)
	}
	pending := r.clock.Pending()
	r.signal()
	r.emitted(health.EventStopping)
	if code := r.readyz(t); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d once stopping, want 503", code)
	}
	r.clock.WaitPending(context.Background(), pending+1) // the drain's timer
	select {
	case <-r.done:
		t.Fatal("Run returned before the drain ended")
	default:
	}
	if code := r.readyz(t); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d through the drain, want 503", code)
	}
	r.clock.Advance(time.Hour)
	if code, err := r.ended(t); code != 0 || err != nil {
		t.Fatalf("Run: %d, %v", code, err)
	}
	want := []string{"stopping", "level-failed ready"}
	if got := after(r.events(), health.EventStopping); !slices.Equal(got, want) {
		t.Errorf("events from the stop %q, want %q", got, want)
	}
	if r.logs.find(`stopping: readiness fails from now on why=signal drain=1h0m0s`) == "" || r.logs.find("stopped code=0") == "" {
		t.Errorf("logs:\n%s", r.logs)
	}
	if _, err := os.Stat(r.a.cfg.API); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the API's socket after the stop: %v, want none", err)
	}
}

func TestASecondSignalEndsTheDrain(t *testing.T) {
	r := start(t, parse(t, "drain: 1h\nchecks:\n  loop: {heartbeat: {ttl: 1h}}\n"))
	r.signal()
	r.emitted(health.EventStopping)
	close(r.again)
	if code, err := r.ended(t); code != 0 || err != nil {
		t.Fatalf("Run: %d, %v", code, err)
	}
	if r.logs.find("a second signal: the drain ends now") == "" {
		t.Errorf("logs:\n%s", r.logs)
	}
}

func TestAThirdSignalEndsTheHooksGrace(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer receiver.Close()
	defer close(release)
	r := start(t, parse(t, fmt.Sprintf("checks:\n  loop: {heartbeat: {ttl: 1h}}\nhooks:\n  - on: [stopping]\n    webhook: {url: %q, timeout: 1h}\n", receiver.URL)))
	r.signal()
	<-arrived // the stopping event's delivery, which the receiver holds
	r.now()
	if code, err := r.ended(t); code != 0 || err != nil {
		t.Fatalf("Run: %d, %v", code, err)
	}
	if r.logs.find("a third signal: the workload's group is killed, and vitals stops without waiting") == "" ||
		!strings.Contains(r.logs.find("hooks did not finish delivering"), "context canceled") {
		t.Errorf("logs:\n%s", r.logs)
	}
}

func TestACheckWithOnFailureExitStopsTheAgentWithCodeOne(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	r := start(t, parse(t, fmt.Sprintf("checks:\n  peer: {file: {path: %s}, failure-threshold: 1, on-failure: exit}\n", missing)))
	if code, err := r.ended(t); code != ExitFailed || err != nil {
		t.Fatalf("Run: %d, %v; want %d", code, err, ExitFailed)
	}
	if got := after(r.events(), health.EventStopping); len(got) == 0 {
		t.Errorf("no stopping event: %q", r.events())
	}
	if r.logs.find("why=check peer failed") == "" {
		t.Errorf("logs:\n%s", r.logs)
	}
}

// The workload stops after the drain; the hooks, stopped after it, still
// deliver its exit; vitals exits with its code.
func TestTheWorkloadStopsAfterTheDrainAndTheHooksDeliverItsExit(t *testing.T) {
	var mu sync.Mutex
	var delivered []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var e health.Event
		json.NewDecoder(req.Body).Decode(&e)
		mu.Lock()
		delivered = append(delivered, string(e.Type))
		mu.Unlock()
	}))
	defer receiver.Close()
	r := start(t, parse(t, fmt.Sprintf("checks:\n  loop: {level: live, heartbeat: {ttl: 1h}}\n"+
		"hooks:\n  - on: [stopping, service-exited]\n    webhook: {url: %q}\n", receiver.URL)), "sleep", "3600")
	r.emitted(health.EventServiceStarted)
	r.signal()
	if code, err := r.ended(t); code != 128+15 || err != nil {
		t.Fatalf("Run: %d, %v; want 143, sleep killed by SIGTERM", code, err)
	}
	want := []string{"stopping", "level-failed ready", "service-exited"}
	if got := after(r.events(), health.EventStopping); !slices.Equal(got, want) {
		t.Errorf("events from the stop %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(delivered, []string{"stopping", "service-exited"}) {
		t.Errorf("the hook got %q, want the stopping event and the workload's exit", delivered)
	}
}

func TestWhatIsNotThereWhereVitalsRunsStartsNothing(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct {
		name    string
		file    string
		command []string
		config  bool // a *ConfigError, else a *RunError
		want    string
	}{
		{"a log check with no workload", "checks:\n  started: {log: {pattern: up}}\n", nil, true,
			"vitals.yaml:4:18: checks.started.log: a log check reads the workload's output: give service: in the file, or the command after --"},
		{"a connection check with no workload", "checks:\n  mq: {connection: {remote: \"localhost:5672\"}}\n", nil, true,
			"vitals.yaml:4:20: checks.mq.connection: counts the sockets of the workload's processes, as it names no others (pid-file, process or any-process): give service: in the file, or the command after --"},
		{"a notify check with no workload", "checks:\n  up: {notify: {}}\n", nil, true,
			"vitals.yaml:4:16: checks.up.notify: a notify check hears what the workload says of itself: give service: in the file, or the command after --"},
		{"a restart with no workload", "checks:\n  ui: {tcp: {address: \"localhost:1\"}, on-failure: restart}\n", nil, true,
			"vitals.yaml: checks.ui.on-failure: restart needs a workload to restart: give service: in the file, or the command after --"},
		{"a command not on PATH", "checks:\n  a: {heartbeat: {ttl: 1h}}\n", []string{"no-such-command-here"}, true,
			`vitals.yaml: the command after --: exec: "no-such-command-here": executable file not found in $PATH`},
		{"a command with a secret, redacted", "service: {command: [/no/such/s3cretpassw0rd], env: {DB_PASSWORD: s3cretpassw0rd}}\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n", nil, true,
			`vitals.yaml: service.command: exec: "/no/such/xxxxx": stat /no/such/xxxxx: no such file or directory`},
		{"a service dir that is not there", "service: {command: [sleep, \"1\"], dir: /no/such/dir}\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n", nil, true,
			`vitals.yaml: service.dir: "/no/such/dir" is not a directory here`},
		{"a gRPC port taken", fmt.Sprintf("grpc-listen: %s\nchecks:\n  a: {heartbeat: {ttl: 1h}}\n", taken.Addr()), nil, false,
			fmt.Sprintf("vitals run: serve gRPC health on %s (grpc-listen: in vitals.yaml): listen tcp %s: bind: address already in use", taken.Addr(), taken.Addr())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := parse(t, tc.file)
			a, err := New(c, Options{Command: tc.command, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Run(context.Background())
			if tc.config != errors.As(err, new(*ConfigError)) || !tc.config && !errors.As(err, new(*RunError)) || err.Error() != tc.want {
				t.Fatalf("%#v\nwant %s (a config error: %v)", err, tc.want, tc.config)
			}
			if _, err := os.Stat(c.API); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the API's socket: %v, want none", err)
			}
		})
	}
}

// The file's service-info tops the health+json answers, and each check has
// its kind's component type or its own, with its value's unit.
func TestTheHealthJSONSaysTheServiceAndEachChecksComponentType(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "peer1.conf")
	if err := os.WriteFile(conf, []byte("[Peer]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, parse(t, fmt.Sprintf(`service-info: {service-id: checkout, version: "2", release-id: 1.4.2}
checks:
  peer-config: {file: {path: %q}}
  upstream: {file: {path: %q}, component-type: system}
  loop: {level: live, heartbeat: {ttl: 1h}}
`, conf, conf)))
	waitFor(func() bool { return r.readyz(t) == http.StatusOK })
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr+"/readyz", nil)
	req.Header.Set("Accept", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got struct {
		ServiceID, Version, ReleaseID string
		Checks                        map[string][]struct {
			ComponentType string
			ObservedValue any
			ObservedUnit  string
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s, %v: want JSON as application/json", res.Header.Get("Content-Type"), err)
	}
	if got.ServiceID != "checkout" || got.Version != "2" || got.ReleaseID != "1.4.2" {
		t.Errorf("serviceId %q, version %q, releaseId %q; want the file's", got.ServiceID, got.Version, got.ReleaseID)
	}
	for name, want := range map[string]string{"peer-config": "component", "upstream": "system", "loop": "component"} {
		if c := got.Checks[name]; len(c) != 1 || c[0].ComponentType != want {
			t.Errorf("checks.%s %+v, want componentType %s", name, c, want)
		}
	}
	if c := got.Checks["peer-config"]; len(c) != 1 || c[0].ObservedValue == nil || c[0].ObservedUnit != "s" {
		t.Errorf("checks.peer-config %+v, want the file's age in s", c)
	}
}

// vitalsGoroutines are the stacks of the goroutines that run vitals's code,
// but the one that asks: what a part started. Counting every goroutine
// would count a timer of an earlier test's HTTP client or process that
// fires meanwhile.
func vitalsGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var stacks []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && strings.Contains(g, "github.com/vitals-dev/vitals/") {
			stacks = append(stacks, g)
		}
	}
	return stacks
}
