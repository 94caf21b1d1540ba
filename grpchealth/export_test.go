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

// FedUpTo returns the id of the last event the feed of the Server's streams
// holds, 0 when none is open: the feed's goroutine may lag behind the
// Monitor, and a test that wants a stream to fall behind the feed waits for
// it to catch up.
func (s *Server) FedUpTo() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feed == nil {
		return 0
	}
	s.feed.mu.RLock()
	defer s.feed.mu.RUnlock()
	return s.feed.last
}
