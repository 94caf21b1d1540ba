package supervise

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/supervise/workloadtest"
	"github.com/vitals-dev/vitals/health"
)

// group starts a Group of the test binary as workloads, one per name, each
// doing what[name]; it returns the group, its events and the services'
// ready files.
func group(t *testing.T, names []string, what map[string][]string, policy map[string]Spec) (*Group, *events, map[string]string) {
	t.Helper()
	t.Setenv(workloadtest.Env, "1")
	dir := t.TempDir()
	ready := map[string]string{}
	var specs []Spec
	for _, name := range names {
		ready[name] = filepath.Join(dir, name)
		spec := policy[name]
		spec.Name = name
		spec.StopTimeout = cmpOr(spec.StopTimeout, 10*time.Second)
		spec.Command = append([]string{os.Args[0], what[name][0], ready[name]}, what[name][1:]...)
		specs = append(specs, spec)
	}
	ev := &events{}
	reaper := NewReaper(false)
	t.Cleanup(reaper.Close)
	g, err := StartGroup(specs, ev.emit, slog.New(slog.NewTextHandler(io.Discard, nil)), reaper)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Stop("stopping", "", 0) })
	return g, ev, ready
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// serviceEvents are the services of the events of type typ, in order.
func serviceEvents(ev *events, typ health.EventType) []string {
	var out []string
	for _, e := range ev.list() {
		if e.Type == typ {
			out = append(out, e.Service)
		}
	}
	return out
}

// A group starts its services in its order and stops them in reverse; a
// stop while one waits out its backoff ends that one at once; vitals's code
// is the first that is not 0 of those it stopped.
func TestAGroupStartsInOrderAndStopsInReverse(t *testing.T) {
	sleep := []string{"sleep"}
	g, ev, ready := group(t, []string{"a", "b", "c"}, map[string][]string{"a": sleep, "b": {"exits", "1"}, "c": sleep},
		map[string]Spec{"b": {Service: config.Service{Restart: config.RestartOnFailure, BackoffInitial: time.Hour}}})
	workloadtest.WaitPID(t, ready["a"])
	workloadtest.WaitPID(t, ready["c"])
	if got := serviceEvents(ev, health.EventServiceStarted); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("started %v, want a, b, c", got)
	}
	waitFor(t, "b's crash", func() bool { return len(serviceEvents(ev, health.EventServiceExited)) == 1 })
	g.Stop("stopping", "", 0) // b waits an hour to restart: it ends at once
	if got := serviceEvents(ev, health.EventServiceExited); !slices.Equal(got, []string{"b", "c", "a"}) {
		t.Fatalf("exited %v, want b (its crash), then c and a in reverse", got)
	}
	if code := g.Code(); code != 143 {
		t.Errorf("code %d, want a's 143 (SIGTERM), the first that is not 0 in the services' order", code)
	}
	select {
	case <-g.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed once every service has ended")
	}
	select {
	case <-g.Ended():
		t.Fatal("Ended closed by a stop: no service ended vitals")
	default:
	}
}

// A service that ends for good with exit ends the group, whose code is its;
// one that a rule leaves down does not, and its code is not the group's.
func TestAGroupEndsWithTheServiceThatExits(t *testing.T) {
	g, _, ready := group(t, []string{"a", "b", "job"}, map[string][]string{"a": {"sleep"}, "b": {"exits", "3"}, "job": {"exits", "5"}},
		map[string]Spec{"b": {Service: config.Service{Restart: config.RestartAlways, RestartRules: []config.RestartRule{{Action: config.RuleExit, In: true, Codes: []int{3}}}}},
			"job": {Service: config.Service{RestartRules: []config.RestartRule{{Action: config.RuleIgnore, In: true, Codes: []int{5}}}}}})
	workloadtest.WaitPID(t, ready["a"])
	select {
	case <-g.Ended():
	case <-time.After(20 * time.Second):
		t.Fatal("b's exit 3 did not end the group")
	}
	if by := g.EndedBy(); by == nil || by.Name() != "b" || g.Code() != 3 {
		t.Fatalf("ended by %v with code %d, want b with 3", by, g.Code())
	}
	job := g.Service("job")
	select {
	case <-job.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("job did not end")
	}
	if sv := job; sv.Outcome().Action != ActionIgnore {
		t.Fatalf("job: %+v, want left down by its rule", sv.Outcome())
	}
}

// A service that a rule left down ended as the file wanted: its code is
// not the code of a stop.
func TestACodeALeftDownServiceGaveIsNotTheStops(t *testing.T) {
	g, _, ready := group(t, []string{"job", "a"}, map[string][]string{"job": {"exits", "5"}, "a": {"sleep"}},
		map[string]Spec{"job": {Service: config.Service{RestartRules: []config.RestartRule{{Action: config.RuleIgnore, In: true, Codes: []int{5}}}}}})
	workloadtest.WaitPID(t, ready["a"])
	<-g.Service("job").Done()
	g.Stop("stopping", "", 0)
	if code := g.Code(); code != 143 {
		t.Fatalf("code %d, want a's 143: job's 5 was left down by its rule", code)
	}
}
