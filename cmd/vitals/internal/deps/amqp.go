package deps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// AMQPSpec is an AMQP 0-9-1 check (RabbitMQ): a connection on which a
// channel opens.
type AMQPSpec struct {
	// URL is amqp:// or amqps:// (TLS), as amqp091-go reads it:
	// amqp://USER:PASSWORD@HOST:PORT/VHOST, with RabbitMQ's query
	// parameters (heartbeat, cacertfile, certfile, keyfile,
	// server_name_indication, auth_mechanism). With no user, guest:guest,
	// which RabbitMQ accepts on loopback only. Required.
	URL string
}

// AMQP builds an AMQP probe. Its connection is kept between runs; each run
// opens a channel and closes it: the broker has accepted the client, the
// readiness that StackStorm's services log as "MQ connection established".
// The connection sends heartbeats, so a broker that went away is noticed
// between runs too. A refused login fails with "authentication failed: "
// before amqp091-go's words; RabbitMQ refuses one only after 3s, and within
// a shorter timeout the output says that the broker answered, then went
// silent, and why that may be. The observed value is the time to open the
// channel in milliseconds, not counting the connection's setup.
func AMQP(s AMQPSpec) (*probe.Prober, error) {
	_, shown, secret, err := parseURL("amqp", s.URL, "amqp", "amqps")
	if err != nil {
		return nil, err
	}
	if _, err := amqp.ParseURI(s.URL); err != nil {
		return nil, probe.Invalid("amqp", "url: %w", secret.hide(err))
	}
	dial := func(ctx context.Context) (conn, error) {
		return dialAMQP(ctx, s.URL)
	}
	return prober("amqp", shown, newKeeper(secret, dial)), nil
}

// dialAMQP connects and logs in under ctx. amqp091-go's handshake takes no
// context: the socket it runs on is bound to ctx instead.
func dialAMQP(ctx context.Context, url string) (conn, error) {
	var raw *answeredConn
	var release func() bool
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("vitals")
	c, err := amqp.DialConfig(url, amqp.Config{
		Properties: props,
		Dial: func(network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			raw, release = &answeredConn{Conn: nc}, bind(ctx, nc)
			return raw, nil
		},
	})
	if raw == nil {
		return nil, err // the dial failed, or the URL
	}
	if !release() {
		if err == nil {
			c.Close()
		}
		if raw.answered.Load() {
			// RabbitMQ refuses a wrong user or password to a client like
			// this one only after 3s (its silent close delay), which is
			// longer than most timeouts.
			return nil, fmt.Errorf("AMQP handshake: the broker answered, then went silent (RabbitMQ takes 3s to refuse a wrong user or password): %w", ctx.Err())
		}
		return nil, fmt.Errorf("AMQP handshake: no answer: %w", ctx.Err())
	}
	if err != nil {
		raw.Close() // amqp091-go leaves it open after some failures (no shared SASL mechanism)
		if errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrSASL) || isAccessRefused(err) {
			return nil, fmt.Errorf("authentication failed: %w", err)
		}
		return nil, fmt.Errorf("AMQP handshake: %w", err)
	}
	return amqpConn{c, raw}, nil
}

// answeredConn is a connection that notes whether the server has sent
// anything on it.
type answeredConn struct {
	net.Conn
	answered atomic.Bool
}

func (c *answeredConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.answered.Store(true)
	}
	return n, err
}

func isAccessRefused(err error) bool {
	var e *amqp.Error
	return errors.As(err, &e) && e.Code == amqp.AccessRefused
}

type amqpConn struct {
	*amqp.Connection
	raw net.Conn // the socket under it
}

func (c amqpConn) roundTrip(ctx context.Context) (health.Observation, error) {
	// amqp091-go's calls take no context: ctx ending closes the socket,
	// which ends them, and the connection with them.
	stop := context.AfterFunc(ctx, func() { c.raw.Close() })
	defer stop()
	start := time.Now()
	ch, err := c.Channel()
	if err != nil {
		return health.Observation{}, callError(ctx, "opening a channel", err)
	}
	obs := latency("channel open", start)
	if err := ch.Close(); err != nil {
		return obs, callError(ctx, "closing the channel", err)
	}
	return obs, nil
}

// callError is what a run reports for err, the error of a call: ctx's own
// when ctx ended, as the closed socket that ended the call is its doing.
func callError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (c amqpConn) broken(error) bool { return c.IsClosed() }

func (c amqpConn) close() error { return c.CloseDeadline(time.Now().Add(closeTimeout)) }
