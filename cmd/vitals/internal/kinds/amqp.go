package kinds

import "github.com/vitals-dev/vitals/cmd/vitals/internal/deps"

// AMQP is a kept connection to an AMQP 0-9-1 broker, such as RabbitMQ.
var AMQP = define(Kind{
	Name:    "amqp",
	Summary: "An AMQP 0-9-1 broker (RabbitMQ) that keeps a connection and opens a channel on it.",
	Example: "{url: amqp://localhost:5672}",
}, urlBlock("Required: amqp://USER:PASSWORD@HOST:PORT/VHOST or amqps:// (TLS), as amqp091-go reads it; with no user, guest:guest, which RabbitMQ accepts on loopback only.",
	func(s *deps.AMQPSpec) *string { return &s.URL }, deps.AMQP))
