package deps_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

var amqpFixture = fixture{
	Kind:   depstest.AMQP,
	build:  func(url string) (*probe.Prober, error) { return deps.AMQP(deps.AMQPSpec{URL: url}) },
	passes: regexp.MustCompile(`^channel open in [0-9.]+(µs|ms)$`),
}

func TestAWrongAMQPPasswordWithinRabbitMQsDelaySaysWhyItTimedOut(t *testing.T) {
	t.Parallel()
	s := amqpFixture.Shared(t)
	const wrong = "wrong-Pw-0815"
	p := amqpFixture.prober(t, amqpFixture.URL(s.Addr, wrong))
	r := health.Run(context.Background(), p, time.Second) // the default timeout, below RabbitMQ's 3s
	want := "timed out after 1s: AMQP handshake: the broker answered, then went silent (RabbitMQ takes 3s to refuse a wrong user or password): context deadline exceeded"
	if r.OK || r.Output != want {
		t.Fatalf("ok %v, output %q\nwant %q", r.OK, r.Output, want)
	}
}

// amqpProber builds the probe of spec against the broker at addr, closed
// when the test ends.
func amqpProber(t *testing.T, addr string, spec deps.AMQPSpec) *probe.Prober {
	t.Helper()
	spec.URL = depstest.AMQP.URL(addr, depstest.AMQPPassword)
	p, err := deps.AMQP(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// amqpURL is the URL of the broker at addr, as a service logs in to it.
func amqpURL(addr string) string { return depstest.AMQP.URL(addr, depstest.AMQPPassword) }

// queueName is a queue of this test's own on a shared broker.
func queueName(t *testing.T) string { return strings.ReplaceAll(t.Name(), "/", ".") }

// expect runs p with timeout and fails the test unless the run's ok and
// output are as wanted (output a regular expression, matched whole) and it
// observed unit, if any.
func expect(t *testing.T, p *probe.Prober, timeout time.Duration, when string, ok bool, output, unit string) health.Result {
	t.Helper()
	r := health.Run(context.Background(), p, timeout)
	if r.OK != ok || !regexp.MustCompile("^(?:"+output+")$").MatchString(r.Output) {
		t.Fatalf("%s: ok %v, output %q\nwant ok %v, output matching %s", when, r.OK, r.Output, ok, output)
	}
	if r.ObservedUnit != unit {
		t.Fatalf("%s: observed %v %q, want a value in %q", when, r.ObservedValue, r.ObservedUnit, unit)
	}
	return r
}

// ms is a duration as a latency's output writes it.
const ms = `[0-9.]+(µs|ms|s)`

// A queue that does not exist fails the run: the broker's 404 closes the
// run's channel, and the connection goes on to find the queue once it is
// declared, without dialling again.
func TestAQueueThatDoesNotExistFailsUntilItIsDeclared(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	proxy := newCountingProxy(t, s.Addr)
	p := amqpProber(t, proxy.addr(), deps.AMQPSpec{Queue: queue})
	notFound := regexp.QuoteMeta(`queue "` + queue + `" does not exist: Exception (404) Reason: "NOT_FOUND - no queue '` + queue + `' in vhost '/'"`)
	expect(t, p, runTimeout, "before the queue is declared", false, notFound, "")
	expect(t, p, runTimeout, "again", false, notFound, "")

	if _, err := depstest.AMQPChannel(t, amqpURL(s.Addr)).QueueDeclare(queue, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	r := expect(t, p, runTimeout, "once declared", true, regexp.QuoteMeta(`queue "`+queue+`": 0 consumers, 0 messages`), "consumers")
	if r.ObservedValue != 0 {
		t.Errorf("observed %v consumers, want 0", r.ObservedValue)
	}
	if n := proxy.connections(); n != 1 {
		t.Errorf("the runs dialled %d connections, want 1: a 404 closes a channel, not the connection", n)
	}
}

// min-consumers passes once enough services consume the queue: the
// readiness of a service that has registered its consumer.
func TestMinConsumersPassesOnceEnoughServicesConsumeTheQueue(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	url := amqpURL(s.Addr)
	if _, err := depstest.AMQPChannel(t, url).QueueDeclare(queue, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	publisher := depstest.AMQPChannel(t, url)
	for range 3 {
		if err := publisher.Publish("", queue, false, false, amqp.Publishing{Body: []byte("work")}); err != nil {
			t.Fatal(err)
		}
	}
	p := amqpProber(t, s.Addr, deps.AMQPSpec{Queue: queue, MinConsumers: 2})
	for consumers := range 3 {
		q := regexp.QuoteMeta(fmt.Sprintf(`queue %q: %s, `, queue, map[int]string{0: "0 consumers", 1: "1 consumer", 2: "2 consumers"}[consumers]))
		var r health.Result
		if consumers < 2 {
			r = expect(t, p, runTimeout, fmt.Sprintf("with %d consumers", consumers), false, q+`[0-9]+ messages?, fewer than 2 \(min-consumers\)`, "consumers")
		} else {
			r = expect(t, p, runTimeout, "with 2 consumers", true, q+`[0-9]+ messages?`, "consumers")
		}
		if r.ObservedValue != consumers {
			t.Errorf("observed %v consumers, want %d", r.ObservedValue, consumers)
		}
		// Another service registers its consumer (without acknowledging,
		// so that the messages stay with it).
		if _, err := depstest.AMQPChannel(t, url).Consume(queue, "", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// pong answers every ping with body.
func pong(body string) func(amqp.Delivery, func(string, string)) {
	return func(ping amqp.Delivery, reply func(string, string)) { reply(ping.CorrelationId, body) }
}

// A ping passes when the service answers in time with what it expects: the
// liveness that StackStorm's maintainers describe, a ping to the MQ and a
// pong back.
func TestAPingAnsweredInTimePasses(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	depstest.Responder(t, amqpURL(s.Addr), queue, func(ping amqp.Delivery, reply func(string, string)) {
		if ping.ReplyTo == "" || ping.CorrelationId == "" || ping.Expiration == "" {
			reply(ping.CorrelationId, fmt.Sprintf("a ping with reply-to %q, correlation id %q, expiration %q", ping.ReplyTo, ping.CorrelationId, ping.Expiration))
			return
		}
		reply(ping.CorrelationId, "pong to "+string(ping.Body))
	})
	p := amqpProber(t, s.Addr, deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: queue, Expect: "pong"}})
	want := regexp.QuoteMeta(`ping "`+queue+`" answered in `) + ms + regexp.QuoteMeta(`: "pong to ping"`)
	expect(t, p, runTimeout, "a ping", true, want, "ms")
	expect(t, p, runTimeout, "another", true, want, "ms")

	// With a queue too, the output says both; the observed value is the
	// ping's.
	p = amqpProber(t, s.Addr, deps.AMQPSpec{Queue: queue, MinConsumers: 1, Ping: &deps.AMQPPing{Exchange: "amq.direct", RoutingKey: queue, Body: "are you there?"}})
	if err := depstest.AMQPChannel(t, amqpURL(s.Addr)).QueueBind(queue, queue, "amq.direct", false, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, p, runTimeout, "a ping through amq.direct", true, regexp.QuoteMeta(`queue "`+queue+`": 1 consumer, 0 messages; ping "`+queue+`" on exchange "amq.direct" answered in `)+ms+`: "pong to are you there\?"`, "ms")
}

// An answer without what the ping expects fails the run, saying what came.
func TestAPingAnsweredWrongFails(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	depstest.Responder(t, amqpURL(s.Addr), queue, pong("error: not connected to the database"))
	p := amqpProber(t, s.Addr, deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: queue, Expect: "pong"}})
	expect(t, p, runTimeout, "a wrong answer", false,
		regexp.QuoteMeta(`ping "`+queue+`" answered "error: not connected to the database", without "pong" (expect)`), "ms")
}

// A ping that no service answers fails at the timeout and keeps the
// connection: the service is what failed, not the broker.
func TestAPingUnansweredFailsAtTheTimeoutAndKeepsTheConnection(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	var pings atomic.Int64
	depstest.Responder(t, amqpURL(s.Addr), queue, func(amqp.Delivery, func(string, string)) { pings.Add(1) })
	proxy := newCountingProxy(t, s.Addr)
	p := amqpProber(t, proxy.addr(), deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: queue}})
	for i := range 3 {
		expect(t, p, 300*time.Millisecond, fmt.Sprintf("ping %d", i+1), false,
			`timed out after 300ms: `+regexp.QuoteMeta(`ping "`+queue+`": no answer with correlation id `)+`\w+: context deadline exceeded`, "")
	}
	if n := proxy.connections(); n != 1 {
		t.Errorf("3 unanswered pings dialled %d connections, want 1", n)
	}
	if n := pings.Load(); n != 3 {
		t.Errorf("the service got %d pings, want 3", n)
	}
}

// A late answer never passes a later ping: each ping takes only the answer
// with its own correlation id, and says when others came.
func TestALateAnswerDoesNotPassALaterPing(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	var mu sync.Mutex
	var first string            // the correlation id of the first ping
	lateSent := make(chan bool) // closed once the first ping's late answer is sent
	depstest.Responder(t, amqpURL(s.Addr), queue, func(ping amqp.Delivery, reply func(string, string)) {
		mu.Lock()
		isFirst := first == ""
		if isFirst {
			first = ping.CorrelationId
		}
		stale := first
		mu.Unlock()
		if isFirst {
			time.Sleep(time.Second) // past the run's timeout
			reply(ping.CorrelationId, "late pong")
			close(lateSent)
			return
		}
		// A stale answer reaches the later ping's reply-to too (a service
		// that answers from a backlog), before the answer to it.
		reply(stale, "late pong")
		time.Sleep(50 * time.Millisecond)
		reply(ping.CorrelationId, "pong")
	})
	p := amqpProber(t, s.Addr, deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: queue, Expect: "pong"}})
	expect(t, p, 300*time.Millisecond, "the first ping", false, `timed out after 300ms: ping "\S+": no answer with correlation id \w+: context deadline exceeded`, "")
	<-lateSent
	expect(t, p, runTimeout, "the second ping", true, regexp.QuoteMeta(`ping "`+queue+`" answered in `)+ms+`: "pong"`, "ms")
}

// An answer with another correlation id than the ping's is no answer to it.
func TestAnAnswerWithAnotherCorrelationIDIsNoAnswer(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	depstest.Responder(t, amqpURL(s.Addr), queue, func(ping amqp.Delivery, reply func(string, string)) {
		reply("not-"+ping.CorrelationId, "pong")
	})
	p := amqpProber(t, s.Addr, deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: queue}})
	expect(t, p, 500*time.Millisecond, "a ping", false,
		`timed out after 500ms: ping "\S+": no answer with correlation id (\w+): context deadline exceeded; 1 answer with another correlation id came \("not-\w+"\): the service must answer with the ping's`, "")
}

// A ping that no queue takes, or sent to an exchange that does not exist,
// fails at once, saying why, and the connection goes on.
func TestAPingThatCannotBeDeliveredFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Shared(t)
	queue := queueName(t)
	proxy := newCountingProxy(t, s.Addr)
	for _, tt := range []struct {
		ping deps.AMQPPing
		want string
	}{
		{deps.AMQPPing{RoutingKey: queue}, `ping "` + queue + `": the broker returned it, as no queue takes it: 312 NO_ROUTE`},
		{deps.AMQPPing{Exchange: "nowhere", RoutingKey: queue}, `ping "` + queue + `" on exchange "nowhere": the channel closed: Exception (404) Reason: "NOT_FOUND - no exchange 'nowhere' in vhost '/'"`},
	} {
		p := amqpProber(t, proxy.addr(), deps.AMQPSpec{Ping: &tt.ping})
		for _, when := range []string{"a ping", "another"} {
			// Within the timeout: the broker said so, at once.
			expect(t, p, runTimeout, when, false, regexp.QuoteMeta(tt.want), "")
		}
	}
	if n := proxy.connections(); n != 2 {
		t.Errorf("two probes dialled %d connections, want 2", n)
	}
}

// However many runs, passing or failing, a probe holds one connection to
// the broker, as the broker counts them: those it lists now, and those its
// log says it accepted. After a restart of the broker it dials again, once.
func TestTheBrokerSeesOneConnectionOverManyRuns(t *testing.T) {
	t.Parallel()
	s := depstest.AMQP.Private(t)
	queue := "st2.actionrunner"
	url := amqpURL(s.Addr)
	depstest.Responder(t, url, queue, pong("pong"))
	checks := map[string]*probe.Prober{
		"consumers": amqpProber(t, s.Addr, deps.AMQPSpec{Queue: queue, MinConsumers: 1}),
		"ping":      amqpProber(t, s.Addr, deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: queue, Expect: "pong"}}),
		"missing":   amqpProber(t, s.Addr, deps.AMQPSpec{Queue: "st2.missing"}),
		"slow":      amqpProber(t, s.Addr, deps.AMQPSpec{Ping: &deps.AMQPPing{RoutingKey: "st2.silent"}}),
	}
	depstest.Responder(t, url, "st2.silent", func(amqp.Delivery, func(string, string)) {})
	connections := func(want, ever int, when string) {
		t.Helper()
		n, err := s.AMQPConnections("vitals")
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("%s: RabbitMQ lists %d connections named vitals, want %d", when, n, want)
		}
		// Logged as each is accepted, before rabbitmqctl lists it.
		if n := strings.Count(s.Log(), "has a client-provided name: vitals"); n != ever {
			t.Fatalf("%s: RabbitMQ's log has %d connections named vitals, want %d:\n%s", when, n, ever, s.Log())
		}
	}
	for range 10 {
		for name, p := range checks {
			timeout := runTimeout
			if name == "slow" {
				timeout = 200 * time.Millisecond
			}
			r := health.Run(context.Background(), p, timeout)
			if r.OK != (name == "consumers" || name == "ping") {
				t.Fatalf("%s: ok %v, output %q", name, r.OK, r.Output)
			}
		}
	}
	connections(len(checks), len(checks), "after 10 runs of each of 4 probes")

	s.Stop()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	// The responders' connections went with the broker: the queue is gone.
	expect(t, checks["consumers"], runTimeout, "after a restart", false, `queue "st2.actionrunner" does not exist: .*`, "")
	connections(1, len(checks)+1, "after a restart and one run")
}
