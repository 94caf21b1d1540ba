// Package grpchealth speaks the gRPC Health Checking Protocol
// (grpc.health.v1.Health) for vitals, both ways:
//
//   - Server answers Check, Watch and List from a health.Monitor, so that a
//     gRPC workload's health is its checks' and its kubelet gRPC probes,
//     grpc-health-probe and gRPC's client-side health checking all read the
//     same verdicts as /livez, /readyz and /startupz.
//   - GRPC is the grpc check kind: it asks a gRPC server for a service's
//     health, as the kubelet's gRPC probe does, in plaintext or over TLS.
//
// Register the server as grpc-go's own health server is registered:
//
//	srv := grpc.NewServer()
//	healthpb.RegisterHealthServer(srv, grpchealth.NewServer(m))
//
// and add a check of a gRPC dependency as any other check:
//
//	p, err := grpchealth.GRPC(grpchealth.GRPCSpec{URL: "grpc://localhost:50051/readiness"})
//	m.Add(health.Check{Name: "backend", Level: health.Ready, Checker: p, Kind: p.Kind()})
//
// Package grpchealth is a module of its own, above the root module's health
// and probe packages, which use the standard library only: a service that
// imports package health gets no grpc version forced on it.
package grpchealth
