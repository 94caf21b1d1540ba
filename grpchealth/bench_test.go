package grpchealth_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	grpchealthserver "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/grpchealth"
)

// BenchmarkGRPCProbe is one run of the grpc check kind against grpc-go's own
// health server answering SERVING: a new connection, the Check call, and
// closing it, as `vitals probe grpc://` does once per process.
//
//	go test -run '^$' -bench GRPCProbe -benchmem ./grpchealth/
func BenchmarkGRPCProbe(b *testing.B) {
	addr := serveGRPC(b, func(s *grpc.Server) { healthpb.RegisterHealthServer(s, grpchealthserver.NewServer()) })
	p, err := grpchealth.GRPC(grpchealth.GRPCSpec{URL: "grpc://" + addr})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Check(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Check(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
