//go:build !vitals_probe

package kinds_test

import (
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// An amqp block reads its queue, its min-consumers and its ping, with the
// ping's body by default "ping" once built.
func TestAnAMQPBlockReadsItsQueueAndPing(t *testing.T) {
	yaml := strings.Join([]string{
		"checks:",
		"  workers:",
		"    amqp:",
		"      url: amqp://st2:s3cret@rabbitmq:5672/",
		"      queue: st2.actionrunner.work",
		"      min-consumers: 2",
		"  alive:",
		"    level: live",
		"    amqp:",
		"      url: amqp://st2:s3cret@rabbitmq:5672/",
		"      ping:",
		"        routing-key: st2.rulesengine.ping",
		"        exchange: st2.ping",
		"        expect: pong",
	}, "\n")
	c, err := config.Parse("vitals.yaml", []byte(yaml), noEnv, kinds.All)
	if err != nil {
		t.Fatal(err)
	}
	want := []deps.AMQPSpec{
		{URL: "amqp://st2:s3cret@rabbitmq:5672/", Queue: "st2.actionrunner.work", MinConsumers: 2},
		{URL: "amqp://st2:s3cret@rabbitmq:5672/", Ping: &deps.AMQPPing{RoutingKey: "st2.rulesengine.ping", Exchange: "st2.ping", Expect: "pong"}},
	}
	for i, ch := range c.Checks {
		got := ch.Spec.(deps.AMQPSpec)
		if got.URL != want[i].URL || got.Queue != want[i].Queue || got.MinConsumers != want[i].MinConsumers ||
			(got.Ping == nil) != (want[i].Ping == nil) || got.Ping != nil && *got.Ping != *want[i].Ping {
			t.Errorf("%s: spec %+v (ping %+v)\nwant %+v (ping %+v)", ch.Name, got, got.Ping, want[i], want[i].Ping)
		}
		if _, err := kinds.All.Build(ch, kinds.Env{}); err != nil {
			t.Errorf("%s: %v", ch.Name, err)
		}
	}
	if got := c.Checks[1].Source; got != "{url: amqp://st2:s3cret@rabbitmq:5672/, ping: {routing-key: st2.rulesengine.ping, exchange: st2.ping, expect: pong}}" {
		t.Errorf("the block as vitals validate --print shows it: %s", got)
	}
}

// What is wrong with an amqp block is said at the field, every error at
// once.
func TestABadAMQPBlockSaysWhatAndWhere(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block []string
		want  []string
	}{
		{"min-consumers without a queue", []string{"min-consumers: 2"},
			[]string{`vitals.yaml:5:22: checks.mq.amqp.min-consumers: needs queue, the queue whose consumers it counts`}},
		{"min-consumers of none", []string{"queue: work", "min-consumers: 0"},
			[]string{`vitals.yaml:6:22: checks.mq.amqp.min-consumers: 0 is not at least 1`}},
		{"min-consumers not a number", []string{"queue: work", "min-consumers: all"},
			[]string{`vitals.yaml:6:22: checks.mq.amqp.min-consumers: want a whole number, got "all"`}},
		{"a queue name longer than AMQP carries", []string{"queue: " + strings.Repeat("q", 256)},
			[]string{`vitals.yaml:5:14: checks.mq.amqp.queue: is 256 bytes long: AMQP carries at most 255`}},
		{"a ping without a routing key", []string{"ping: {expect: pong}"},
			[]string{`vitals.yaml:5:13: checks.mq.amqp.ping: needs a routing-key: with the default exchange, the name of the queue that the service consumes`}},
		{"a ping that is not a mapping", []string{"ping: st2.ping"},
			[]string{`vitals.yaml:5:13: checks.mq.amqp.ping: want a mapping of body, exchange, expect, routing-key, got "st2.ping"`}},
		{"a ping's field misspelled", []string{"ping:", "        routing-key: st2.ping", "        expected: pong"},
			[]string{`vitals.yaml:7:15: checks.mq.amqp.ping.expected: unknown field "expected" (want body, exchange, expect, routing-key)`}},
		{"expect without a ping", []string{"expect: pong"},
			[]string{`vitals.yaml:5:7: checks.mq.amqp.expect: unknown field "expect" (want min-consumers, ping, queue, url)`}},
		{"all at once", []string{"min-consumers: 3", "ping: {body: hello}"}, []string{
			`vitals.yaml:5:22: checks.mq.amqp.min-consumers: needs queue, the queue whose consumers it counts`,
			`vitals.yaml:6:13: checks.mq.amqp.ping: needs a routing-key: with the default exchange, the name of the queue that the service consumes`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			yaml := "checks:\n  mq:\n    amqp:\n      url: amqp://mq:5672/\n      " + strings.Join(tt.block, "\n      ") + "\n"
			_, err := config.Parse("vitals.yaml", []byte(yaml), noEnv, kinds.All)
			if err == nil || err.Error() != strings.Join(tt.want, "\n") {
				t.Errorf("%s\nerror\n%v\nwant\n%s", yaml, err, strings.Join(tt.want, "\n"))
			}
		})
	}
}
