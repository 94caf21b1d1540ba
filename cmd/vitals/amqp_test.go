package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
)

// The StackStorm story against a real RabbitMQ: vitals probe and a vitals
// run check find a queue with its consumers (readiness: the workers have
// registered) and ping a service that answers (liveness), each on one kept
// connection, which the broker counts.
func TestProbeAndRunCheckAQueuesConsumersAndPingAService(t *testing.T) {
	s := depstest.AMQP.Private(t)
	url := depstest.AMQP.URL(s.Addr, depstest.AMQPPassword)
	shown := "amqp " + strings.Replace(url, depstest.AMQPPassword, "xxxxx", 1)
	const work, ping = "st2.actionrunner.work", "st2.rulesengine.ping"
	depstest.Responder(t, url, ping, func(p amqp.Delivery, reply func(string, string)) { reply(p.CorrelationId, "pong") })

	vitalsRun(t, "probe", "-v", url, "--queue", work).expect(t, 1, "",
		shown+`: queue "`+work+`" does not exist: Exception (404) Reason: "NOT_FOUND - no queue '`+work+`' in vhost '/'"`)
	vitalsRun(t, "probe", "-v", url, "--queue", ping, "--min-consumers", "1").expect(t, 0,
		"ok: "+shown+`: queue "`+ping+`": 1 consumer, 0 messages`, "")
	vitalsRun(t, "probe", "-v", url, "--queue", ping, "--min-consumers", "2").expect(t, 1, "",
		shown+`: queue "`+ping+`": 1 consumer, 0 messages, fewer than 2 (min-consumers)`)
	vitalsRun(t, "probe", "-v", url, "--ping-routing-key", ping, "--ping-expect", "pong").expect(t, 0,
		"ok: "+shown+`: ping "`+ping+`" answered in `, "")
	vitalsRun(t, "probe", "-v", url, "--ping-routing-key", ping, "--ping-expect", "PONG").expect(t, 1, "",
		shown+`: ping "`+ping+`" answered "pong", without "PONG" (expect)`)
	vitalsRun(t, "probe", "-v", "--timeout", "300ms", url, "--ping-routing-key", work).expect(t, 1, "",
		shown+`: ping "`+work+`": the broker returned it, as no queue takes it: 312 NO_ROUTE`)
	vitalsRun(t, "probe", url, "--min-consumers", "2").expect(t, 2, "", "min-consumers needs queue, the queue whose consumers it counts")
	vitalsRun(t, "probe", url, "--ping-expect", "pong").expect(t, 2, "", "ping needs a routing-key")

	addr := freeAddr(t)
	path := writeConfig(t, fmt.Sprintf(`listen: %s
api: %s
checks:
  workers:
    amqp:
      url: %s
      queue: %s
      min-consumers: 2
    period: 100ms
    failure-threshold: 1
  alive:
    level: live
    amqp:
      url: %s
      ping:
        routing-key: %s
        expect: pong
    period: 100ms
`, addr, filepath.Join(t.TempDir(), "vitals.sock"), url, work, url, ping))
	r := vitalsRun(t, "validate", "--print", "-c", path)
	r.expect(t, 0, "    amqp: {url: "+strings.TrimPrefix(shown, "amqp ")+", queue: "+work+", min-consumers: 2}\n", "")
	r.expect(t, 0, "    amqp: {url: "+strings.TrimPrefix(shown, "amqp ")+", ping: {routing-key: "+ping+", expect: pong}}\n", "")

	logs := startVitals(t, vitals, "run", "-c", path).stderr
	get := func(path string) string {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			return err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return fmt.Sprintf("%d %s", res.StatusCode, b)
	}
	verbose := func() string { return get("/readyz?verbose") }
	waitFor(t, "readiness fails while the queue does not exist", logs, func() bool {
		return strings.Contains(verbose(), `[-]workers failed: queue "`+work+`" does not exist`)
	})
	ch := depstest.AMQPChannel(t, url)
	if _, err := ch.QueueDeclare(work, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		waitFor(t, fmt.Sprintf("readiness fails with %d consumers", i), logs, func() bool {
			return strings.HasPrefix(verbose(), "503 ") && strings.Contains(verbose(), fmt.Sprintf(`queue "%s": %d consumer`, work, i))
		})
		if _, err := depstest.AMQPChannel(t, url).Consume(work, "", false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "readiness passes once 2 workers consume", logs, func() bool { return strings.HasPrefix(verbose(), "200 ") })
	if got := get("/readyz?format=json"); !strings.Contains(got, `"observedValue":2,"observedUnit":"consumers"`) {
		t.Errorf("the health+json answer does not observe 2 consumers: %s", got)
	}
	if got := get("/livez?format=json"); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"observedUnit":"ms"`) {
		t.Errorf("liveness is not the ping's answer: %s", got)
	}
	if n, err := s.AMQPConnections("vitals"); err != nil || n != 2 {
		t.Errorf("RabbitMQ lists %d connections named vitals (%v), want 2: one for each check, kept over all their runs\n%s", n, err, logs)
	}
}
