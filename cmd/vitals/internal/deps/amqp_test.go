package deps_test

import (
	"context"
	"regexp"
	"testing"
	"time"

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
