package grpchealth_test

import (
	"context"
	"log"
	"net"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// A gRPC service serves its Monitor's verdicts as grpc.health.v1.Health, for
// the kubelet's gRPC probes (port: 50051, service: liveness or readiness),
// grpc-health-probe and gRPC clients' own health checking.
func ExampleNewServer() {
	m := health.New()
	// m.Add(...) the service's checks, then:
	m.Start(context.Background())

	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, grpchealth.NewServer(m))
	ln, err := net.Listen("tcp", ":50051")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)
	// On SIGTERM, m.Drain() turns every service NOT_SERVING at once.
}

// A check of a gRPC dependency over TLS, verified with a private CA.
func ExampleGRPC() {
	p, err := grpchealth.GRPC(grpchealth.GRPCSpec{
		URL: "grpcs://backend.internal:8443/payments.v1.Payments",
		TLS: probe.TLSOptions{CAFile: "/etc/ssl/private-ca.pem"},
	})
	if err != nil {
		log.Fatal(err)
	}
	m := health.New()
	m.Add(health.Check{Name: "payments", Level: health.Ready, Checker: p, Kind: p.Kind(), Timeout: 2 * time.Second})
}
