package grpchealth

import (
	"context"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// WatchWith is a Watch stream whose sending the test controls, for the tests
// of a client that reads slowly or not at all.
func (s *Server) WatchWith(ctx context.Context, service string, send func(healthpb.HealthCheckResponse_ServingStatus) error) error {
	return s.watch(ctx, service, send)
}
