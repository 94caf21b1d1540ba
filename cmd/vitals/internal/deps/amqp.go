package deps

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// AMQPSpec is an AMQP 0-9-1 check (RabbitMQ): a connection on which a
// channel opens and, on that channel, a queue that has its consumers and a
// service that answers a ping, when the spec asks for them.
type AMQPSpec struct {
	// URL is amqp:// or amqps:// (TLS), as amqp091-go reads it:
	// amqp://USER:PASSWORD@HOST:PORT/VHOST, with RabbitMQ's query
	// parameters (heartbeat, cacertfile, certfile, keyfile,
	// server_name_indication, auth_mechanism). With no user, guest:guest,
	// which RabbitMQ accepts on loopback only. Required.
	URL string
	// Queue is a queue that must exist, looked up at each run with a
	// passive declare, which creates nothing; "" (the default) for none.
	Queue string
	// MinConsumers is the fewest consumers Queue may have: the services
	// that consume it have connected and registered with the broker. 0 (the
	// default): any number; the queue exists. Only with Queue.
	MinConsumers int
	// Ping is a message published at each run that a service must answer
	// within the run's timeout; nil (the default) for none.
	Ping *AMQPPing
}

// AMQPPing is a message to a service through the broker, which the service
// answers as an RPC server does: it publishes its answer through the
// default exchange to the ping's reply-to, with the ping's correlation id.
type AMQPPing struct {
	// Exchange is the exchange the ping is published to; "" (the default)
	// is the default exchange, which routes it to the queue that RoutingKey
	// names.
	Exchange string
	// RoutingKey is the ping's routing key. Required.
	RoutingKey string
	// Body is the ping's body; "" for DefaultPingBody.
	Body string
	// Expect is text that the answer's body must contain; "" (the default)
	// for any answer.
	Expect string
}

// DefaultPingBody is the body of a ping that says none.
const DefaultPingBody = "ping"

// directReplyTo is RabbitMQ's direct reply-to: a channel that consumes it
// (with no acknowledgements) and publishes with it as the reply-to gets the
// answers on that consumer, through no queue. Each run's ping has a channel
// of its own, so the broker drops an answer that comes after its run, whose
// channel is gone; and a ping takes only the answer with its correlation id.
const directReplyTo = "amq.rabbitmq.reply-to"

// maxName is the longest queue name, exchange name or routing key that AMQP
// 0-9-1 carries: a short string, whose length is one byte.
const maxName = 255

// shownAnswer is how much of a ping's answer an output quotes: enough to
// say what the service said, not a payload.
const shownAnswer = 64

// FieldError is what is wrong with one field of a spec. Field is its key
// in the kind's block of vitals.yaml (min-consumers, ping), where the error
// is said.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + " " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

// validate says what is wrong with the queue and the ping of s, each a
// *FieldError.
func (s AMQPSpec) validate() error {
	var errs []error
	field := func(name, format string, args ...any) {
		errs = append(errs, &FieldError{name, fmt.Errorf(format, args...)})
	}
	if len(s.Queue) > maxName {
		field("queue", "is %d bytes long: AMQP carries at most %d", len(s.Queue), maxName)
	}
	switch {
	case s.MinConsumers < 0:
		field("min-consumers", "%d is negative", s.MinConsumers)
	case s.MinConsumers > 0 && s.Queue == "":
		field("min-consumers", "needs queue, the queue whose consumers it counts")
	}
	if p := s.Ping; p != nil {
		switch {
		case p.RoutingKey == "":
			field("ping", "needs a routing-key: with the default exchange, the name of the queue that the service consumes")
		case len(p.RoutingKey) > maxName:
			field("ping", "routing-key is %d bytes long: AMQP carries at most %d", len(p.RoutingKey), maxName)
		}
		if len(p.Exchange) > maxName {
			field("ping", "exchange is %d bytes long: AMQP carries at most %d", len(p.Exchange), maxName)
		}
	}
	return errors.Join(errs...)
}

// AMQP builds an AMQP probe. Its connection is kept between runs; each run
// opens a channel, does its checks on it and closes it. With no queue and
// no ping, that is all: the broker has accepted the client, the readiness
// that StackStorm's services log as "MQ connection established"; the
// observed value is the time to open the channel in milliseconds, not
// counting the connection's setup. With Queue, a passive declare finds the
// queue and its counts of consumers and messages: the run fails when it
// does not exist (the broker's 404 NOT_FOUND closes the channel, never the
// connection) or has fewer than MinConsumers consumers, and the observed
// value is its consumers. With Ping, the run publishes the ping (mandatory,
// so that one that no queue takes comes back at once; expiring at the end
// of the run, so that pings a service does not read do not pile up in its
// queue) with RabbitMQ's direct reply-to and a correlation id of its own,
// and passes when the answer with that id comes within the run's timeout
// and contains Expect; the observed value is the round trip in
// milliseconds. A ping unanswered at the timeout leaves the connection
// open: the next run uses it. The connection sends heartbeats, so a
// broker that went away is noticed between runs too. A refused login fails
// with "authentication failed: " before amqp091-go's words; RabbitMQ
// refuses one only after 3s, and within a shorter timeout the output says
// that the broker answered, then went silent, and why that may be.
func AMQP(s AMQPSpec) (*probe.Prober, error) {
	_, shown, secret, err := parseURL("amqp", s.URL, "amqp", "amqps")
	if err != nil {
		return nil, err
	}
	if _, err := amqp.ParseURI(s.URL); err != nil {
		return nil, probe.Invalid("amqp", "url: %w", secret.hide(err))
	}
	if err := s.validate(); err != nil {
		return nil, &probe.SpecError{Kind: "amqp", Err: err}
	}
	if s.Ping != nil {
		p := *s.Ping
		if p.Body == "" {
			p.Body = DefaultPingBody
		}
		s.Ping = &p
	}
	dial := func(ctx context.Context) (conn, error) {
		return dialAMQP(ctx, s)
	}
	return prober("amqp", shown, newKeeper(secret, dial)), nil
}

// dialAMQP connects and logs in under ctx. amqp091-go's handshake takes no
// context: the socket it runs on is bound to ctx instead.
func dialAMQP(ctx context.Context, s AMQPSpec) (conn, error) {
	var raw *answeredConn
	var release func() bool
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("vitals")
	c, err := amqp.DialConfig(s.URL, amqp.Config{
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
	return amqpConn{c, raw, s}, nil
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
	raw  net.Conn // the socket under it
	spec AMQPSpec
}

func (c amqpConn) roundTrip(ctx context.Context) (health.Observation, error) {
	start := time.Now()
	var ch *amqp.Channel
	if err := c.call(ctx, "opening a channel", func() (err error) { ch, err = c.Channel(); return err }); err != nil {
		return health.Observation{}, err
	}
	obs, err := c.checks(ctx, ch, latency("channel open", start))
	if ctx.Err() != nil {
		// The run is over: its channel's goodbye would outlast it. A broker
		// that does not answer that either is one whose connection the
		// heartbeats end, and the goodbye with it.
		go ch.Close()
		return obs, err
	}
	// A channel that an error closed already (404 NOT_FOUND) closes at once.
	if cerr := c.call(ctx, "closing the channel", ch.Close); err == nil {
		err = cerr
	}
	return obs, err
}

// checks does the checks of the spec on ch, a channel of this run, and
// returns the observation of the last: opened is the channel's own.
func (c amqpConn) checks(ctx context.Context, ch *amqp.Channel, opened health.Observation) (health.Observation, error) {
	obs := opened
	if c.spec.Queue != "" {
		q, err := c.queue(ctx, ch)
		if err != nil {
			return q, err
		}
		obs = q
	}
	if p := c.spec.Ping; p != nil {
		o, err := c.ping(ctx, ch, *p)
		if c.spec.Queue != "" && err == nil {
			o.Message = obs.Message + "; " + o.Message
		}
		return o, err
	}
	return obs, nil
}

// queue looks the spec's queue up with a passive declare, and observes its
// consumers.
func (c amqpConn) queue(ctx context.Context, ch *amqp.Channel) (health.Observation, error) {
	name := c.spec.Queue
	var q amqp.Queue
	err := c.call(ctx, fmt.Sprintf("queue %q", name), func() (err error) {
		// Passive: the broker says whether the queue exists and ignores
		// every other field.
		q, err = ch.QueueDeclarePassive(name, false, false, false, false, nil)
		return err
	})
	var e *amqp.Error
	switch {
	case errors.As(err, &e) && e.Code == amqp.NotFound:
		return health.Observation{}, fmt.Errorf("queue %q does not exist: %w", name, e)
	case err != nil:
		return health.Observation{}, err
	}
	obs := health.Observation{Value: q.Consumers, Unit: "consumers",
		Message: fmt.Sprintf("queue %q: %s, %s", name, plural(q.Consumers, "consumer"), plural(q.Messages, "message"))}
	if q.Consumers < c.spec.MinConsumers {
		return obs, fmt.Errorf("%s, fewer than %d (min-consumers)", obs.Message, c.spec.MinConsumers)
	}
	return obs, nil
}

// ping publishes p on ch, a channel of this run, and waits for its answer
// until ctx ends.
func (c amqpConn) ping(ctx context.Context, ch *amqp.Channel, p AMQPPing) (health.Observation, error) {
	what := fmt.Sprintf("ping %q", p.RoutingKey)
	if p.Exchange != "" {
		what += fmt.Sprintf(" on exchange %q", p.Exchange)
	}
	// Buffered: the channel has one ping, so at most one of each comes.
	returned := ch.NotifyReturn(make(chan amqp.Return, 1))
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	var answers <-chan amqp.Delivery
	err := c.call(ctx, what+": consuming "+directReplyTo, func() (err error) {
		answers, err = ch.Consume(directReplyTo, "", true, false, false, false, nil)
		return err
	})
	if err != nil {
		return health.Observation{}, err
	}
	id := rand.Text()
	msg := amqp.Publishing{ContentType: "text/plain", AppId: "vitals", ReplyTo: directReplyTo, CorrelationId: id, Body: []byte(p.Body)}
	if deadline, ok := ctx.Deadline(); ok {
		msg.Expiration = strconv.FormatInt(max(1, time.Until(deadline).Milliseconds()), 10)
	}
	start := time.Now()
	if err := c.call(ctx, what+": publishing", func() error { return ch.Publish(p.Exchange, p.RoutingKey, true, false, msg) }); err != nil {
		return health.Observation{}, err
	}
	var others []string // the correlation ids of answers to other pings
	for {
		select {
		case d, ok := <-answers:
			if !ok {
				return health.Observation{}, fmt.Errorf("%s: the channel closed: %w", what, closedBy(closed))
			}
			if d.CorrelationId != id {
				others = append(others, d.CorrelationId)
				continue
			}
			obs := latency(what+" answered", start)
			obs.Message += ": " + quoted(d.Body)
			if !strings.Contains(string(d.Body), p.Expect) {
				return obs, fmt.Errorf("%s answered %s, without %q (expect)", what, quoted(d.Body), p.Expect)
			}
			return obs, nil
		case r := <-returned:
			return health.Observation{}, fmt.Errorf("%s: the broker returned it, as no queue takes it: %d %s", what, r.ReplyCode, r.ReplyText)
		case e := <-closed:
			return health.Observation{}, fmt.Errorf("%s: the channel closed: %w", what, orClosed(e))
		case <-ctx.Done():
			err := fmt.Errorf("%s: no answer with correlation id %s: %w", what, id, ctx.Err())
			if n := len(others); n > 0 {
				err = fmt.Errorf("%w; %s with another correlation id came (%q): the service must answer with the ping's", err, plural(n, "answer"), others[n-1])
			}
			// The service owes the answer; the connection is as good as it was.
			return health.Observation{}, unanswered{err}
		}
	}
}

// closedBy is why a channel closed, as its NotifyClose says once it has.
func closedBy(closed <-chan *amqp.Error) error {
	select {
	case e := <-closed:
		return orClosed(e)
	default:
		return amqp.ErrClosed
	}
}

// orClosed is e, or amqp.ErrClosed for a channel closed without an error.
func orClosed(e *amqp.Error) error {
	if e == nil {
		return amqp.ErrClosed
	}
	return e
}

// quoted is a ping's answer as an output shows it: quoted, and cut at
// shownAnswer bytes.
func quoted(body []byte) string {
	if len(body) > shownAnswer {
		return fmt.Sprintf("%q…", body[:shownAnswer])
	}
	return fmt.Sprintf("%q", body)
}

// plural writes n things: "1 consumer", "2 consumers".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// call runs f, a call of amqp091-go, under ctx: amqp091-go's calls take no
// context, so ctx ending closes the socket, which ends f and the connection
// with it. what says what f does, for its error.
func (c amqpConn) call(ctx context.Context, what string, f func() error) error {
	stop := context.AfterFunc(ctx, func() { c.raw.Close() })
	err := f()
	if !stop() || err != nil && ctx.Err() != nil {
		// The closed socket that ended the call, or will end the next, is
		// ctx's doing.
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (c amqpConn) broken(error) bool { return c.IsClosed() }

func (c amqpConn) close() error { return c.CloseDeadline(time.Now().Add(closeTimeout)) }
