package depstest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AMQPConnections is how many connections the RabbitMQ node s has whose
// client named them name (vitals names its own "vitals"), as rabbitmqctl
// lists them: the broker's own count, not the client's.
func (s *Server) AMQPConnections(name string) (int, error) {
	out, err := s.Ctl("--quiet", "list_connections", "client_properties", "--formatter", "json")
	if err != nil {
		return 0, err
	}
	// client_properties is a list of [key, type, value] triples.
	var conns []struct {
		ClientProperties [][]any `json:"client_properties"`
	}
	if err := json.Unmarshal([]byte(out), &conns); err != nil {
		return 0, fmt.Errorf("rabbitmqctl list_connections: %w%s", err, lines(out))
	}
	n := 0
	for _, c := range conns {
		for _, p := range c.ClientProperties {
			if len(p) == 3 && p[0] == "connection_name" && p[2] == name {
				n++
			}
		}
	}
	return n, nil
}

// AMQPChannel is a channel on a connection of the test's own to the broker
// at url, as a service has one; both are closed when the test ends.
func AMQPChannel(t testing.TB, url string) *amqp.Channel {
	t.Helper()
	c, err := amqp.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// Responder is a service that answers pings as an RPC server does, on a
// connection of its own: it declares queue, consumes it, and calls answer
// with each message, in a goroutine of its own so that answer may take its
// time; answer replies with reply, once, more than once or not at all.
// reply publishes body through the default exchange to the message's
// reply-to, with correlationID (the message's, unless the test means
// another). It stops when the test ends.
func Responder(t testing.TB, url, queue string, answer func(ping amqp.Delivery, reply func(correlationID, body string))) {
	t.Helper()
	ch := AMQPChannel(t, url)
	if _, err := ch.QueueDeclare(queue, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	pings, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var publishing sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for ping := range pings { // until the connection closes
			wg.Go(func() {
				answer(ping, func(correlationID, body string) {
					publishing.Lock()
					defer publishing.Unlock()
					// An answer to a reply-to that is gone is dropped by the
					// broker, as it is for a real service.
					ch.Publish("", ping.ReplyTo, false, false, amqp.Publishing{CorrelationId: correlationID, Body: []byte(body)})
				})
			})
		}
	})
	t.Cleanup(func() {
		ch.Close()
		wg.Wait()
	})
}
