package grpchealth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	grpchealthserver "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// serveGRPC serves a gRPC server with what register adds on a free loopback
// port until the test ends, and returns its address.
func serveGRPC(t testing.TB, register func(*grpc.Server), opts ...grpc.ServerOption) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	register(srv)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// serveGRPCHealth serves grpc-go's own health server, with the services
// given serving or not, and returns its address.
func serveGRPCHealth(t *testing.T, statuses map[string]healthpb.HealthCheckResponse_ServingStatus, opts ...grpc.ServerOption) string {
	t.Helper()
	return serveGRPC(t, func(srv *grpc.Server) {
		h := grpchealthserver.NewServer()
		for service, st := range statuses {
			h.SetServingStatus(service, st)
		}
		healthpb.RegisterHealthServer(srv, h)
	}, opts...)
}

// measureGRPC builds a grpc probe and runs it once, as a Monitor would.
func measureGRPC(t *testing.T, spec grpchealth.GRPCSpec, timeout time.Duration) health.Result {
	t.Helper()
	p, err := grpchealth.GRPC(spec)
	if err != nil {
		t.Fatalf("building a probe of %+v: %v", spec, err)
	}
	return health.Run(context.Background(), p, timeout)
}

func TestGRPCPassesWhenTheServiceIsServingAndObservesTheLatency(t *testing.T) {
	addr := serveGRPCHealth(t, map[string]healthpb.HealthCheckResponse_ServingStatus{
		"api": serving, "a b": serving, "other": notServing,
	})
	// The service is the URL's path; none is "", the server as a whole,
	// which grpc-go's server makes SERVING.
	for _, url := range []string{"grpc://" + addr, "grpc://" + addr + "/", "grpc://" + addr + "/api", "grpc://" + addr + "/a%20b"} {
		r := measureGRPC(t, grpchealth.GRPCSpec{URL: url}, 5*time.Second)
		if !r.OK || r.Output != "service healthy" {
			t.Errorf("%s: result %+v, want a pass saying service healthy", url, r)
		}
		if v, ok := r.ObservedValue.(float64); !ok || v <= 0 || r.ObservedUnit != "ms" {
			t.Errorf("%s: observed %v %q, want the latency in ms", url, r.ObservedValue, r.ObservedUnit)
		}
	}
}

func TestGRPCFailsWithTheKubeletsWordsWhenTheServiceIsNotServing(t *testing.T) {
	addr := serveGRPCHealth(t, map[string]healthpb.HealthCheckResponse_ServingStatus{"api": notServing})
	r := measureGRPC(t, grpchealth.GRPCSpec{URL: "grpc://" + addr + "/api"}, 5*time.Second)
	if want := `service unhealthy (responded with "NOT_SERVING")`; r.OK || r.Output != want {
		t.Errorf("result %+v, want a failure saying %s", r, want)
	}
	if r.ObservedUnit != "ms" {
		t.Errorf("result %+v: the server answered, so the latency is observed", r)
	}
}

func TestGRPCFailsOnAServiceTheServerDoesNotKnow(t *testing.T) {
	addr := serveGRPCHealth(t, nil)
	r := measureGRPC(t, grpchealth.GRPCSpec{URL: "grpc://" + addr + "/nope"}, 5*time.Second)
	if want := "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"; r.OK || r.Output != want {
		t.Errorf("result %+v, want a failure saying %s", r, want)
	}
}

func TestGRPCFailsOnAServerWithoutTheHealthService(t *testing.T) {
	addr := serveGRPC(t, func(*grpc.Server) {})
	r := measureGRPC(t, grpchealth.GRPCSpec{URL: "grpc://" + addr}, 5*time.Second)
	want := "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"
	if r.OK || r.Output != want {
		t.Errorf("result %+v, want a failure saying %s", r, want)
	}
}

func TestGRPCFailsAtOnceWithTheReasonWhenNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const timeout = 10 * time.Second
	start := time.Now()
	r := measureGRPC(t, grpchealth.GRPCSpec{URL: "grpc://" + addr}, timeout)
	if prefix := fmt.Sprintf("error: failed to connect service at %q: ", addr); r.OK || !strings.HasPrefix(r.Output, prefix) ||
		!strings.Contains(r.Output, "connection refused") {
		t.Errorf("result %+v, want a failure starting %q and saying the connection was refused", r, prefix)
	}
	if took := time.Since(start); took > timeout/2 {
		t.Errorf("the probe took %v of its %v timeout: a refused connection fails at once", took, timeout)
	}
}

func TestGRPCFailsAtItsTimeoutWhenTheServerNeverSpeaksHTTP2(t *testing.T) {
	ln := probetest.SilentListener(t)
	const timeout = 300 * time.Millisecond
	start := time.Now()
	r := measureGRPC(t, grpchealth.GRPCSpec{URL: "grpc://" + ln.Addr().String()}, timeout)
	took := time.Since(start)
	// The kubelet's words, once (the Monitor adds no "timed out after" of
	// its own), saying how long it had: the run's deadline less the moment
	// it began, 300ms but on a machine too loaded to start it at once.
	re := regexp.MustCompile(`^timeout: failed to connect service "` + regexp.QuoteMeta(ln.Addr().String()) +
		`" within (\d+)ms: context deadline exceeded$`)
	m := re.FindStringSubmatch(r.Output)
	if r.OK || m == nil {
		t.Fatalf("result %+v, want a failure matching %s", r, re)
	}
	if ms, _ := strconv.Atoi(m[1]); ms < 250 || ms > 300 {
		t.Errorf("the probe says it had %sms of its 300ms", m[1])
	}
	if took < timeout || took > timeout+5*time.Second {
		t.Errorf("the probe returned after %v, want at its %v timeout", took, timeout)
	}
}

func TestGRPCSVerifiesTheServerUnlessToldNotTo(t *testing.T) {
	ca := probetest.NewCA(t)
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.Server(t, time.Hour)}})
	addr := serveGRPCHealth(t, nil, grpc.Creds(creds))
	_, port, _ := net.SplitHostPort(addr)
	for _, c := range []struct {
		what string
		spec grpchealth.GRPCSpec
		fail string // what the output contains, "" for a pass
	}{
		{"with the CA file", grpchealth.GRPCSpec{URL: "grpcs://" + addr, TLS: probe.TLSOptions{CAFile: ca.File}}, ""},
		{"by the name localhost", grpchealth.GRPCSpec{URL: "grpcs://localhost:" + port, TLS: probe.TLSOptions{CAFile: ca.File}}, ""},
		{"without verifying", grpchealth.GRPCSpec{URL: "grpcs://" + addr, TLS: probe.TLSOptions{InsecureSkipVerify: true}}, ""},
		{"against the system's roots", grpchealth.GRPCSpec{URL: "grpcs://" + addr}, "certificate signed by unknown authority"},
		{"with a wrong server name", grpchealth.GRPCSpec{URL: "grpcs://" + addr, TLS: probe.TLSOptions{CAFile: ca.File, ServerName: "wrong.example"}},
			"certificate is valid for localhost, not wrong.example"},
		{"in plaintext", grpchealth.GRPCSpec{URL: "grpc://" + addr}, "error: failed to connect service at"},
	} {
		t.Run(c.what, func(t *testing.T) {
			r := measureGRPC(t, c.spec, 10*time.Second)
			switch {
			case c.fail == "" && (!r.OK || r.Output != "service healthy"):
				t.Errorf("result %+v, want a pass", r)
			case c.fail != "" && (r.OK || !strings.Contains(r.Output, c.fail)):
				t.Errorf("result %+v, want a failure saying %q", r, c.fail)
			case c.fail != "" && c.spec.URL[:5] == "grpcs" && !strings.HasPrefix(r.Output, "error: failed to connect service at "):
				t.Errorf("result %+v: a handshake that fails is a connection that fails", r)
			}
		})
	}
}

func TestGRPCSPresentsTheClientCertificate(t *testing.T) {
	ca := probetest.NewCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{ca.Server(t, time.Hour)},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	addr := serveGRPCHealth(t, nil, grpc.Creds(creds))
	certFile, keyFile := ca.Client(t)
	r := measureGRPC(t, grpchealth.GRPCSpec{URL: "grpcs://" + addr,
		TLS: probe.TLSOptions{CAFile: ca.File, CertFile: certFile, KeyFile: keyFile}}, 10*time.Second)
	if !r.OK {
		t.Errorf("with the client certificate: result %+v, want a pass", r)
	}
	r = measureGRPC(t, grpchealth.GRPCSpec{URL: "grpcs://" + addr, TLS: probe.TLSOptions{CAFile: ca.File}}, 10*time.Second)
	if r.OK {
		t.Errorf("without a client certificate: result %+v, want a failure", r)
	}
}

func TestGRPCChecksAServerOfThisPackageAsAMonitorsCheck(t *testing.T) {
	served := newMonitor(t)
	db := add(t, served, "db", health.Ready)
	start(t, served)
	_, addr := serve(t, served)

	p, err := grpchealth.GRPC(grpchealth.GRPCSpec{URL: "grpc://" + addr + "/readiness"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != "grpc" || p.String() != "grpc grpc://"+addr+"/readiness" {
		t.Errorf("Kind %q, String %q", p.Kind(), p.String())
	}
	// On the system clock: the probe's deadline is a real one.
	m := health.New(health.WithLogger(slog.New(slog.DiscardHandler)))
	if err := m.Add(health.Check{Name: "backend", Level: health.Ready, Checker: p, Kind: p.Kind(),
		SuccessThreshold: 1, FailureThreshold: 1, Timeout: 5 * time.Second, Period: time.Hour}); err != nil {
		t.Fatal(err)
	}
	start(t, m)
	if st, _ := m.CheckState("backend"); st.Status != health.Pass {
		t.Fatalf("backend is %v: %+v", st.Status, st.History)
	}
	set(t, served, "db", db, false)
	r, err := m.RunNow(context.Background(), "backend")
	if err != nil {
		t.Fatal(err)
	}
	if want := `service unhealthy (responded with "NOT_SERVING")`; r.OK || r.Output != want {
		t.Errorf("result %+v, want a failure saying %s", r, want)
	}
}

func TestGRPCRejectsABadSpecWhenBuilt(t *testing.T) {
	ca := probetest.NewCA(t)
	for _, c := range []struct {
		spec grpchealth.GRPCSpec
		err  string
	}{
		{grpchealth.GRPCSpec{}, `grpc probe: URL "": scheme must be grpc or grpcs (for TLS)`},
		{grpchealth.GRPCSpec{URL: "http://localhost:50051"}, `grpc probe: URL "http://localhost:50051": scheme must be grpc or grpcs (for TLS)`},
		{grpchealth.GRPCSpec{URL: "grpc://"}, `grpc probe: URL "grpc://" has no host:port`},
		{grpchealth.GRPCSpec{URL: "grpc://localhost"}, `grpc probe: URL "grpc://localhost": port "" is not a number from 1 to 65535`},
		{grpchealth.GRPCSpec{URL: "grpc://localhost:0"}, `grpc probe: URL "grpc://localhost:0": port "0" is not a number from 1 to 65535`},
		{grpchealth.GRPCSpec{URL: "grpc://localhost:grpc"}, `invalid port ":grpc"`},
		{grpchealth.GRPCSpec{URL: "grpc://user:secret@localhost:50051"}, "no user or password"},
		{grpchealth.GRPCSpec{URL: "grpc://localhost:50051/svc?x=1"}, "the service is the path"},
		{grpchealth.GRPCSpec{URL: "grpc://localhost:50051/svc#x"}, "the service is the path"},
		{grpchealth.GRPCSpec{URL: "grpc://localhost:50051", TLS: probe.TLSOptions{InsecureSkipVerify: true}},
			`grpc probe: URL "grpc://localhost:50051": TLS options need a grpcs URL`},
		{grpchealth.GRPCSpec{URL: "grpcs://localhost:50051", TLS: probe.TLSOptions{CAFile: filepath.Join(t.TempDir(), "none.pem")}},
			"grpc probe: CA file: open "},
		{grpchealth.GRPCSpec{URL: "grpcs://localhost:50051", TLS: probe.TLSOptions{CertFile: ca.File}},
			"grpc probe: client certificate needs both a certificate file and a key file"},
		{grpchealth.GRPCSpec{URL: "grpcs://:50051"},
			`grpc probe: URL "grpcs://:50051" has no host to verify the certificate against: set a server name`},
	} {
		_, err := grpchealth.GRPC(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("GRPC(%+v): error %v, want one saying %q", c.spec, err, c.err)
		}
	}
	for _, spec := range []grpchealth.GRPCSpec{
		{URL: "grpc://:50051"},
		{URL: "grpc://[::1]:50051/api"},
		{URL: "grpcs://:50051", TLS: probe.TLSOptions{ServerName: "api.example"}},
		{URL: "grpcs://:50051", TLS: probe.TLSOptions{InsecureSkipVerify: true}},
	} {
		if _, err := grpchealth.GRPC(spec); err != nil {
			t.Errorf("GRPC(%+v): %v", spec, err)
		}
	}
}
