//go:build !vitals_probe

package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
)

// AMQP is a kept connection to an AMQP 0-9-1 broker, such as RabbitMQ.
var AMQP = define(Kind{
	Name:          "amqp",
	Summary:       "An AMQP 0-9-1 broker (RabbitMQ) that keeps a connection and opens a channel on it.",
	Example:       "{url: amqp://localhost:5672}",
	ComponentType: health.ComponentTypeSystem, // a broker: a system the workload sends its messages through, not one it keeps them in
	CLI:           amqpCLI,
}, urlBlock("Required: amqp://USER:PASSWORD@HOST:PORT/VHOST or amqps:// (TLS), as amqp091-go reads it; with no user, guest:guest, which RabbitMQ accepts on loopback only.",
	func(s *deps.AMQPSpec) *string { return &s.URL }, deps.AMQP))

var amqpCLI = urlTargets(CLI{
	Schemes: []string{"amqp", "amqps"}, Target: "amqp://USER:PASSWORD@HOST:PORT/VHOST",
	Help: "an AMQP broker (RabbitMQ) that opens a channel (amqps:// for TLS)", Example: "amqp://localhost:5672",
}, func(s *deps.AMQPSpec) *string { return &s.URL }, deps.AMQP)
