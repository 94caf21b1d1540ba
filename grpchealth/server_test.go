package grpchealth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/vitals-dev/vitals/health"
)

const (
	serving    = healthpb.HealthCheckResponse_SERVING
	notServing = healthpb.HealthCheckResponse_NOT_SERVING
	unknown    = healthpb.HealthCheckResponse_SERVICE_UNKNOWN
)

// levelEndpoints are the service names of the levels and the probe endpoint
// each stands for.
var levelEndpoints = map[string]string{
	"": "/readyz", "readiness": "/readyz", "ready": "/readyz",
	"liveness": "/livez", "live": "/livez", "startup": "/startupz",
}

// endpointOf is the path of a check's own probe endpoint.
func endpointOf(c health.CheckState) string {
	return map[health.Level]string{health.Startup: "/startupz/", health.Live: "/livez/", health.Ready: "/readyz/"}[c.Level] + c.Name
}

// httpCode is what the Monitor's probe endpoint at path answers.
func httpCode(m *health.Monitor, path string) int {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

// assertAgreesWithTheEndpoints checks that every level name and every check
// is SERVING over gRPC exactly when its probe endpoint answers 200.
func assertAgreesWithTheEndpoints(t *testing.T, m *health.Monitor, c healthpb.HealthClient) {
	t.Helper()
	paths := map[string]string{}
	for name, path := range levelEndpoints {
		paths[name] = path
	}
	for _, cs := range m.Snapshot().Checks {
		paths[cs.Name] = endpointOf(cs)
	}
	for name, path := range paths {
		got, err := check(t, c, name)
		if err != nil {
			t.Errorf("Check(%q): %v", name, err)
			continue
		}
		code := httpCode(m, path)
		if want := map[bool]healthpb.HealthCheckResponse_ServingStatus{true: serving, false: notServing}[code == http.StatusOK]; got != want {
			t.Errorf("Check(%q) = %v, but %s answers %d", name, got, path, code)
		}
	}
}

func TestCheckAnswersEveryLevelAndCheckAsItsProbeEndpointDoes(t *testing.T) {
	m := newMonitor(t)
	add(t, m, "boot", health.Startup)
	add(t, m, "loop", health.Live)
	add(t, m, "db", health.Ready).failing.Store(true)
	add(t, m, "stale", health.Ready).failing.Store(true)
	// Checks that never run on the unmoving clock stay pending: a pending
	// live check does not fail liveness, a pending ready check fails
	// readiness.
	for _, c := range []health.Check{
		{Name: "beat", Level: health.Live, Checker: &switchable{}, InitialDelay: time.Hour},
		{Name: "queue", Level: health.Ready, Checker: &switchable{}, InitialDelay: time.Hour},
	} {
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	// A passing check that failed once, below its threshold, warns.
	cache := &switchable{}
	if err := m.Add(health.Check{Name: "cache", Level: health.Ready, Checker: cache, FailureThreshold: 2}); err != nil {
		t.Fatal(err)
	}
	c, _ := serve(t, m)

	t.Run("before the monitor starts", func(t *testing.T) {
		assertAgreesWithTheEndpoints(t, m, c)
	})
	start(t, m)
	cache.failing.Store(true)
	if _, err := m.RunNow(context.Background(), "cache"); err != nil {
		t.Fatal(err)
	}
	if err := m.StopCheck("stale"); err != nil {
		t.Fatal(err)
	}
	want := map[string]healthpb.HealthCheckResponse_ServingStatus{
		"": notServing, "readiness": notServing, "ready": notServing,
		"liveness": serving, "live": serving, "startup": serving,
		"boot": serving, "loop": serving, "beat": serving, "cache": serving, "stale": serving,
		"db": notServing, "queue": notServing,
	}
	t.Run("with checks passing, warning, failing, pending and stopped", func(t *testing.T) {
		for name, w := range want {
			if got, err := check(t, c, name); got != w || err != nil {
				t.Errorf("Check(%q) = %v, %v; want %v", name, got, err, w)
			}
		}
		assertAgreesWithTheEndpoints(t, m, c)
	})
	t.Run("once readiness passes", func(t *testing.T) {
		for _, name := range []string{"db", "queue"} {
			if err := m.Remove(name); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"", "readiness", "ready"} {
			if got, err := check(t, c, name); got != serving || err != nil {
				t.Errorf("Check(%q) = %v, %v; want SERVING", name, got, err)
			}
		}
		assertAgreesWithTheEndpoints(t, m, c)
	})
}

func TestCheckFailsWithNotFoundForANameThatIsNeitherALevelNorACheck(t *testing.T) {
	m := newMonitor(t)
	add(t, m, "db", health.Ready)
	c, _ := serve(t, m)
	for _, name := range []string{"nope", "Readiness", "db ", "grpc.health.v1.Health"} {
		_, err := check(t, c, name)
		if status.Code(err) != codes.NotFound {
			t.Errorf("Check(%q): error %v, want NOT_FOUND", name, err)
		}
	}
	_, err := check(t, c, "nope")
	if got, want := status.Convert(err).Message(), `unknown service "nope"`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestALevelNameWinsOverACheckOfTheSameName(t *testing.T) {
	m := newMonitor(t)
	add(t, m, "live", health.Ready).failing.Store(true)
	start(t, m)
	c, _ := serve(t, m)
	if got, err := check(t, c, "live"); got != serving || err != nil {
		t.Errorf(`Check("live") = %v, %v; want the live level's SERVING, not the failing check's`, got, err)
	}
}

func TestDrainTurnsEveryServiceNotServing(t *testing.T) {
	m := newMonitor(t)
	add(t, m, "boot", health.Startup)
	add(t, m, "loop", health.Live)
	add(t, m, "db", health.Ready)
	start(t, m)
	c, _ := serve(t, m)
	m.Drain()
	for _, name := range []string{"", "readiness", "ready", "liveness", "live", "startup", "boot", "loop", "db"} {
		if got, err := check(t, c, name); got != notServing || err != nil {
			t.Errorf("Check(%q) after Drain = %v, %v; want NOT_SERVING", name, got, err)
		}
	}
	list, err := c.List(context.Background(), &healthpb.HealthListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for name, res := range list.GetStatuses() {
		if res.GetStatus() != notServing {
			t.Errorf("List after Drain: %q is %v, want NOT_SERVING", name, res.GetStatus())
		}
	}
	if _, err := check(t, c, "nope"); status.Code(err) != codes.NotFound {
		t.Errorf("Check of an unknown name after Drain: %v, want NOT_FOUND still", err)
	}
	if code := httpCode(m, "/livez"); code != http.StatusOK {
		t.Errorf("/livez answers %d after Drain; the HTTP endpoints keep liveness", code)
	}
}

func TestListAnswersTheLevelNamesAndEveryCheck(t *testing.T) {
	m := newMonitor(t)
	add(t, m, "loop", health.Live)
	add(t, m, "db", health.Ready).failing.Store(true)
	start(t, m)
	c, _ := serve(t, m)
	list, err := c.List(context.Background(), &healthpb.HealthListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]healthpb.HealthCheckResponse_ServingStatus{
		"": notServing, "readiness": notServing, "ready": notServing,
		"liveness": serving, "live": serving, "startup": serving,
		"loop": serving, "db": notServing,
	}
	got := map[string]healthpb.HealthCheckResponse_ServingStatus{}
	for name, res := range list.GetStatuses() {
		got[name] = res.GetStatus()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %v\nwant   %v", got, want)
	}
}

func TestListFailsWithResourceExhaustedPastAHundredServices(t *testing.T) {
	m := newMonitor(t)
	c, _ := serve(t, m)
	// The six level names and 94 checks make 100: the most List answers.
	for i := range 94 {
		add(t, m, fmt.Sprintf("check-%d", i), health.Ready)
	}
	list, err := c.List(context.Background(), &healthpb.HealthListRequest{})
	if err != nil || len(list.GetStatuses()) != 100 {
		t.Fatalf("List of 100 services: %d services, error %v", len(list.GetStatuses()), err)
	}
	add(t, m, "one-more", health.Ready)
	_, err = c.List(context.Background(), &healthpb.HealthListRequest{})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("List of 101 services: error %v, want RESOURCE_EXHAUSTED", err)
	}
	if got, want := status.Convert(err).Message(), "server health list exceeds maximum capacity: 100"; got != want {
		t.Errorf("message %q, want grpc-go's %q", got, want)
	}
	if got, err := check(t, c, "one-more"); got != notServing || err != nil {
		t.Errorf("Check of the 101st service = %v, %v; want its status", got, err)
	}
}
