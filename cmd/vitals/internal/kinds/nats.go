//go:build !vitals_probe

package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
)

// NATS is a round trip on a kept connection to a NATS server.
var NATS = define(Kind{
	Name:          "nats",
	Summary:       "A NATS server that answers a round trip on a kept connection.",
	Example:       "{url: nats://localhost:4222}",
	ComponentType: health.ComponentTypeSystem, // a broker: a system the workload sends its messages through, not one it keeps them in
	CLI:           natsCLI,
}, urlBlock("Required: nats://USER:PASSWORD@HOST:PORT, nats://TOKEN@HOST:PORT or tls:// (TLS), as nats.go reads it; one server.",
	func(s *deps.NATSSpec) *string { return &s.URL }, deps.NATS))

// NATS over TLS is nats:// too (nats.go turns to TLS when the server
// requires it): tls:// is the TLS handshake.
var natsCLI = urlTargets(CLI{
	Schemes: []string{"nats"}, Target: "nats://USER:PASSWORD@HOST:PORT",
	Help: "a NATS server that answers a flush (TLS when the server wants it)", Example: "nats://localhost:4222",
}, func(s *deps.NATSSpec) *string { return &s.URL }, deps.NATS)
