//go:build !vitals_probe

package kinds

import (
	"errors"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// AMQP is a kept connection to an AMQP 0-9-1 broker, such as RabbitMQ, on
// which each run opens a channel and, as the block asks, finds a queue with
// enough consumers and pings a service that must answer.
var AMQP = define(Kind{
	Name: "amqp",
	Summary: "An AMQP 0-9-1 broker (RabbitMQ) that keeps a connection and opens a channel on it; " +
		"optionally a queue that exists with its consumers, and a service that answers a ping.",
	Example:       "{url: amqp://localhost:5672}",
	ComponentType: health.ComponentTypeSystem, // a broker: a system the workload sends its messages through, not one it keeps them in
	// min-consumers counts the consumers of queue (deps.AMQPSpec).
	Rules: config.Schema{"dependentRequired": map[string][]string{"min-consumers": {"queue"}}},
	CLI:   amqpCLI,
}, block[deps.AMQPSpec]{
	fields: amqpFields,
	// What is wrong with a field is said at the field: the probe is built as
	// it will be, and its field errors placed.
	check: func(d *config.Decoder, n ast.Node, path string, s *deps.AMQPSpec, given config.Given) {
		p, err := deps.AMQP(*s)
		if err == nil {
			p.Close()
			return
		}
		var se *probe.SpecError
		if errors.As(err, &se) {
			err = se.Err
		}
		for _, err := range unjoin(err) {
			var fe *deps.FieldError
			if errors.As(err, &fe) && given[fe.Field] != nil {
				d.Errorf(given[fe.Field], path+"."+fe.Field, "%v", fe.Err)
			} else {
				d.Errorf(n, path, "%v", err)
			}
		}
	},
	build: func(_ string, s deps.AMQPSpec, _ Env) (health.Checker, error) {
		p, err := deps.AMQP(s)
		if err != nil {
			return nil, err // not a nil *probe.Prober in a non-nil interface
		}
		return p, nil
	},
})

func amqpFields(s *deps.AMQPSpec) []config.Field {
	return []config.Field{
		{Key: "url", Value: config.String(&s.URL), Required: true,
			Doc: "Required: amqp://USER:PASSWORD@HOST:PORT/VHOST or amqps:// (TLS), as amqp091-go reads it; with no user, guest:guest, which RabbitMQ accepts on loopback only."},
		{Key: "queue", Value: config.String(&s.Queue),
			Doc: "A queue that must exist, looked up at each run with a passive declare, which creates nothing. The output says its consumers and messages; the observed value is its consumers."},
		{Key: "min-consumers", Value: config.Count(&s.MinConsumers),
			Doc: "The fewest consumers queue may have: the services that consume it have connected and registered. Only with queue; by default any."},
		{Key: "ping", Value: config.Value{Type: "mapping", Read: func(d *config.Decoder, n ast.Node, path string) {
			s.Ping = &deps.AMQPPing{}
			d.Fields(n, path, pingFields(s.Ping))
		}}, Fields: pingFields(&deps.AMQPPing{}),
			Doc: "A message published at each run, with RabbitMQ's direct reply-to and a correlation id of its own, that a service must answer within the check's timeout, as an RPC server does (below). The observed value is the round trip."},
	}
}

func pingFields(p *deps.AMQPPing) []config.Field {
	return []config.Field{
		{Key: "routing-key", Value: config.String(&p.RoutingKey), Required: true,
			Doc: "Required: the ping's routing key; with the default exchange, the name of the queue the service consumes."},
		{Key: "exchange", Value: config.String(&p.Exchange),
			Doc: "The exchange the ping is published to; by default the default exchange, which routes it to the queue that routing-key names."},
		{Key: "body", Value: config.String(&p.Body), Default: deps.DefaultPingBody, Doc: "The ping's body, as text."},
		{Key: "expect", Value: config.String(&p.Expect),
			Doc: "Text that the body of the answer, sent to the ping's reply-to with its correlation id, must contain; by default any answer passes."},
	}
}

// amqpArgs are what an amqp target is built from: the spec, and its ping
// as the --ping- flags give it.
type amqpArgs struct {
	spec deps.AMQPSpec
	ping deps.AMQPPing
}

var amqpCLI = takes(CLI{
	Schemes: []string{"amqp", "amqps"}, Target: "amqp://USER:PASSWORD@HOST:PORT/VHOST",
	Help: "an AMQP broker (RabbitMQ) that opens a channel (amqps:// for TLS); with --queue, a queue that has --min-consumers; " +
		"with --ping-routing-key, a service that answers a ping",
	Example: "amqp://localhost:5672",
}, targets[amqpArgs]{
	flags: func(a *amqpArgs) []Flag {
		return []Flag{
			{Name: "queue", Value: stringFlag(&a.spec.Queue), Usage: "a queue that must exist (a passive declare, which creates nothing)"},
			{Name: "min-consumers", Value: intFlag(&a.spec.MinConsumers), Usage: "the fewest consumers --queue may have (default any)"},
			{Name: "ping-routing-key", Value: stringFlag(&a.ping.RoutingKey),
				Usage: "publish a ping with this routing key, which a service must answer to its reply-to, with its correlation id, within --timeout"},
			{Name: "ping-exchange", Value: stringFlag(&a.ping.Exchange), Usage: "the exchange of the ping (default the default exchange)"},
			{Name: "ping-body", Value: stringFlag(&a.ping.Body), Usage: "the body of the ping (default " + deps.DefaultPingBody + ")"},
			{Name: "ping-expect", Value: stringFlag(&a.ping.Expect), Usage: "text that the answer to the ping must contain (default any answer)"},
		}
	},
	url: func(target string, a amqpArgs) (*probe.Prober, error) {
		a.spec.URL = target
		if a.ping != (deps.AMQPPing{}) {
			a.spec.Ping = &a.ping
		}
		return deps.AMQP(a.spec)
	},
})
