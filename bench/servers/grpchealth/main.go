// Command grpchealth serves grpc-go's own health service
// (google.golang.org/grpc/health), which answers SERVING for the server as a
// whole (the service ""), and nothing else: the server that P7's probes,
// `vitals probe grpc://` and grpc-health-probe, ask.
package main

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/bench/servers/internal/serve"
)

func main() {
	serve.Checks() // parses -addr; grpc-go's health server has no checks
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	serve.Exit(srv.Serve(serve.Listen()))
}
