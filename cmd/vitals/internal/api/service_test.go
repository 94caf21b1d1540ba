package api_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// service is a supervised service as the agent's supervisor drives it: it
// runs (run 0) until restarted; a restart emits its exit, then its next
// run's start (pid 100 + the run), unless held, until released.
type service struct {
	m    *health.Monitor
	name string

	mu      sync.Mutex
	run     int
	running bool
	busy    bool          // a stop or restart is under way: Restart refuses
	held    chan struct{} // when set, a restart's start waits until it is closed
	asked   []string      // every Restart: "REASON, run N, now BOOL"
}

func (s *service) Name() string { return s.name }

func (s *service) Current() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run, s.running
}

func (s *service) RestartNow(reason string, run int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, fmt.Sprintf("%s, run %d", reason, run))
	if !s.running || s.busy || run != s.run {
		return false
	}
	s.running = false
	held := s.held
	go func() {
		s.m.Emit(health.Event{Type: health.EventServiceExited, Service: s.name, PID: 100 + run, Restarts: run, Reason: reason})
		if held != nil {
			<-held
		}
		s.mu.Lock()
		s.run, s.running = run+1, true
		s.mu.Unlock()
		s.m.Emit(health.Event{Type: health.EventServiceStarted, Service: s.name, PID: 100 + run + 1, Restarts: run + 1})
	}()
	return true
}

// hold makes the next restarts wait before their start, until release.
func (s *service) hold(t *testing.T) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := make(chan struct{})
	s.held = held
	release = sync.OnceFunc(func() { close(held) })
	t.Cleanup(release)
	return release
}

func (s *service) restartsAsked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// restarted is what a restart in the background answered.
type restarted struct {
	e   health.Event
	err error
}

// restartInBackground restarts name through the client, and answers on the
// channel returned.
func (a *agent) restartInBackground(name string) <-chan restarted {
	out := make(chan restarted, 1)
	go func() {
		e, err := a.client.RestartNamedService(context.Background(), name)
		out <- restarted{e, err}
	}()
	return out
}

// waitEvent reads the events that f follows until one satisfies cond.
func waitEvent(t *testing.T, f *health.Follower, what string, cond func(health.Event) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a guard only
	defer cancel()
	for {
		evs, _, err := f.Next(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if slices.ContainsFunc(evs, cond) {
			return
		}
	}
}

func answer(t *testing.T, answered <-chan restarted) restarted {
	t.Helper()
	select {
	case r := <-answered:
		return r
	case <-time.After(10 * time.Second): // a guard only
		t.Fatal("no answer within 10s")
		return restarted{}
	}
}

// A restart by name restarts that service at once, and no other, and
// answers once it runs again, with its new run's start.
func TestARestartByNameRestartsThatServiceAndAnswersWithItsNewStart(t *testing.T) {
	a := serveAgent(t, "", "", nil, []string{"web", "worker"})
	e, err := a.client.RestartNamedService(context.Background(), "worker")
	if err != nil || e.Type != health.EventServiceStarted || e.Service != "worker" || e.PID != 101 || e.Restarts != 1 {
		t.Fatalf("answered %+v, %v; want worker's start, pid 101, restart 1", e, err)
	}
	if got := a.services["worker"].restartsAsked(); !slices.Equal(got, []string{"restart requested, run 0"}) {
		t.Errorf("worker was asked %q: want one restart of run 0, at once", got)
	}
	if got := a.services["web"].restartsAsked(); len(got) != 0 {
		t.Errorf("web was asked %q: want nothing", got)
	}
	a.expect(t, "POST", "/v1/services/worker/restart", "", 200, `"type":"service-started"`, &e)
	if e.Service != "worker" || e.Restarts != 2 {
		t.Errorf("the second restart answered %+v: want worker's restart 2", e)
	}
	a.expect(t, "GET", "/v1/services/worker/restart", "", 405, "use POST", nil)
}

// The answer is the start of the service restarted: another service's
// start meanwhile, however many restarts it counts, is not it.
func TestARestartIsAnsweredByTheStartOfItsOwnService(t *testing.T) {
	a := serveAgent(t, "", "", nil, []string{"web", "worker"})
	release := a.services["worker"].hold(t)
	f := a.m.Follow(a.m.LastEventID())
	answered := a.restartInBackground("worker")
	waitEvent(t, f, "worker's exit", func(e health.Event) bool { return e.Type == health.EventServiceExited && e.Service == "worker" })
	a.m.Emit(health.Event{Type: health.EventServiceStarted, Service: "web", PID: 200, Restarts: 3})
	release()
	r := answer(t, answered)
	if r.err != nil || r.e.Service != "worker" || r.e.Restarts != 1 {
		t.Fatalf("answered %+v, %v; want worker's start, restart 1", r.e, r.err)
	}
}

// An agent that stops while the service is down does not start it again:
// the restart says so rather than wait.
func TestARestartThatTheAgentsStopOvertakesIs409(t *testing.T) {
	a := serveAgent(t, "", "", nil, []string{"worker"})
	a.services["worker"].hold(t)
	f := a.m.Follow(a.m.LastEventID())
	answered := a.restartInBackground("worker")
	waitEvent(t, f, "worker's exit", func(e health.Event) bool { return e.Type == health.EventServiceExited })
	a.m.Emit(health.Event{Type: health.EventStopping})
	r := answer(t, answered)
	var e *client.Error
	if !errors.As(r.err, &e) || e.Status != 409 || e.Message != "the agent is stopping: worker will not start again" {
		t.Fatalf("answered %+v, %v; want 409", r.e, r.err)
	}
}

// An agent with one service restarts it without its name, as before it
// could run several; with its name too.
func TestTheOneServiceIsRestartedWithoutItsName(t *testing.T) {
	a := serveAgent(t, "", "", nil, []string{"app"})
	e, err := a.client.RestartService(context.Background())
	if err != nil || e.Service != "app" || e.Restarts != 1 {
		t.Fatalf("answered %+v, %v; want app's restart 1", e, err)
	}
	if e, err = a.client.RestartNamedService(context.Background(), "app"); err != nil || e.Service != "app" || e.Restarts != 2 {
		t.Fatalf("by name: answered %+v, %v; want app's restart 2", e, err)
	}
}

// A restart that cannot be done changes nothing, and says why: which
// services there are, when it names none or another.
func TestARestartThatCannotBeDoneSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		services []string
		state    func(*service) // of the last service
		path     string
		code     int
		want     string
	}{
		{"several, none named", []string{"web", "worker", "cron"}, nil, "/v1/service/restart",
			400, "this agent runs 3 services: name one (vitals restart NAME, POST /v1/services/NAME/restart): web, worker, cron"},
		{"an unknown name", []string{"web", "worker"}, nil, "/v1/services/db/restart",
			404, `no service \"db\": this agent runs web, worker`},
		{"no service", nil, nil, "/v1/service/restart",
			404, "no service: this agent runs no workload (give service: or services: in its file, or a command after --)"},
		{"no service, one named", nil, nil, "/v1/services/app/restart",
			404, `no service \"app\": this agent runs no workload`},
		{"between an exit and its restart", []string{"web", "worker"}, func(s *service) { s.running = false }, "/v1/services/worker/restart",
			409, "worker is not running: it is between an exit and its restart, or has stopped"},
		{"a restart under way", []string{"app"}, func(s *service) { s.busy = true }, "/v1/service/restart",
			409, "app is being stopped or restarted already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := serveAgent(t, "", "", nil, tc.services)
			if tc.state != nil {
				tc.state(a.services[tc.services[len(tc.services)-1]])
			}
			last := a.m.LastEventID()
			a.expect(t, "POST", tc.path, "", tc.code, tc.want, nil)
			if id := a.m.LastEventID(); id != last {
				t.Errorf("events up to %d after the refusal, %d before", id, last)
			}
			for name, s := range a.services {
				if run, _ := s.Current(); run != 0 {
					t.Errorf("%s is at run %d after the refusal", name, run)
				}
			}
		})
	}
	// The client says the agent's words.
	a := serveAgent(t, "", "", nil, []string{"web", "worker"})
	var e *client.Error
	if _, err := a.client.RestartService(context.Background()); !errors.As(err, &e) || e.Status != 400 || e.Message !=
		"this agent runs 2 services: name one (vitals restart NAME, POST /v1/services/NAME/restart): web, worker" {
		t.Errorf("RestartService: %v", err)
	}
	if _, err := a.client.RestartNamedService(context.Background(), "a b/c"); !errors.As(err, &e) || e.Status != 404 ||
		e.Message != `no service "a b/c": this agent runs web, worker` {
		t.Errorf("RestartNamedService: %v", err)
	}
}
