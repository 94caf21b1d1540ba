package grpchealth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/grpchealth/grpchealthtest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/health/healthtest"
)

// healthProbe is the path of the grpc-health-probe binary TestMain built.
var healthProbe string

func TestMain(m *testing.M) {
	path, err := grpchealthtest.HealthProbe()
	if err != nil {
		// No silent skip: without the real client, the server is not tested
		// as the kubelet's users test it.
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	healthProbe = path
	os.Exit(m.Run())
}

// settle bounds how long a test waits for something to happen. It is a
// guard against hanging, never a measurement.
const settle = 10 * time.Second

// switchable is a checker that passes until the test makes it fail.
type switchable struct{ failing atomic.Bool }

func (s *switchable) Check(context.Context) error {
	if s.failing.Load() {
		return errors.New("switched off")
	}
	return nil
}

// newMonitor returns a Monitor on a fake clock that the tests never move:
// each check runs once when the Monitor starts, and then only when a test
// runs it (set).
func newMonitor(t testing.TB, opts ...health.Option) *health.Monitor {
	t.Helper()
	opts = append([]health.Option{health.WithClock(healthtest.NewClock(time.Time{})), health.WithJitter(0),
		health.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	return health.New(opts...)
}

// add adds a check that passes or fails at one result (both thresholds 1),
// passing until told otherwise.
func add(t testing.TB, m *health.Monitor, name string, level health.Level) *switchable {
	t.Helper()
	sw := &switchable{}
	if err := m.Add(health.Check{Name: name, Level: level, Checker: sw, SuccessThreshold: 1, FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	return sw
}

// start starts m until the test ends and waits until every check has run
// once, but those that wait for a startup level that has not passed and
// those with an initial delay, which the unmoving clock never ends.
func start(t testing.TB, m *health.Monitor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	t.Cleanup(func() {
		cancel()
		<-m.Done()
	})
	waitFor(t, "every check's first run", func() bool {
		snap := m.Snapshot()
		for _, c := range snap.Checks {
			gated := c.Level != health.Startup && !snap.Startup
			if c.Runs == 0 && !c.Stopped && !gated && c.InitialDelay == 0 {
				return false
			}
		}
		return true
	})
}

// set makes the check pass or fail, and runs it: its status follows at once.
func set(t testing.TB, m *health.Monitor, name string, sw *switchable, pass bool) {
	t.Helper()
	sw.failing.Store(!pass)
	r, err := m.RunNow(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK != pass {
		t.Fatalf("check %q: result %+v, want ok=%v", name, r, pass)
	}
}

// waitFor polls cond until it holds, failing the test after settle.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(settle)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, settle)
		}
		time.Sleep(time.Millisecond)
	}
}

// serve serves m's health over gRPC on a free loopback port until the test
// ends, and returns a client of it and the server's address.
func serve(t testing.TB, m *health.Monitor) (healthpb.HealthClient, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, grpchealth.NewServer(m))
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn), ln.Addr().String()
}

// check calls Check for service and returns its status, or the error.
func check(t testing.TB, c healthpb.HealthClient, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	res, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	return res.GetStatus(), err
}
