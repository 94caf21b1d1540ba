//go:build !vitals_probe

package target

import (
	"fmt"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
)

// The full build's dependency targets: postgres://, redis://, amqp://,
// nats://, each the kind of vitals.yaml of the same name (package deps),
// with the URL as the kind's url. The probe build leaves them out
// (deps_probe.go), as they link the clients of the four.

// DepsBuilt says whether this build has the dependency targets.
const DepsBuilt = true

// DepsHelp is the dependency lines of the commands' help on targets.
const DepsHelp = `
  postgres://USER:PASSWORD@HOST:PORT/DB  a PostgreSQL login that answers SELECT 1 (postgresql:// too)
  redis://:PASSWORD@HOST:PORT/DB         a Redis PING, after AUTH (rediss:// for TLS)
  amqp://USER:PASSWORD@HOST:PORT/VHOST   an AMQP broker (RabbitMQ) that opens a channel (amqps:// for TLS)
  nats://USER:PASSWORD@HOST:PORT         a NATS server that answers a flush (TLS when the server wants it)`

// buildDep makes the probe of a dependency's URL: its TLS, user and
// password are in the URL, as in vitals.yaml, and the kind takes no flag.
func buildDep(kind, target string) (Probe, error) {
	switch kind {
	case "postgres":
		return built(deps.Postgres(deps.PostgresSpec{URL: target}))
	case "redis":
		return built(deps.Redis(deps.RedisSpec{URL: target}))
	case "amqp":
		return built(deps.AMQP(deps.AMQPSpec{URL: target}))
	case "nats":
		return built(deps.NATS(deps.NATSSpec{URL: target}))
	}
	return nil, fmt.Errorf("target %q: no kind %q", target, kind)
}
