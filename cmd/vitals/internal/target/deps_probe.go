//go:build vitals_probe

package target

import (
	"fmt"
	"strings"
)

// The probe build has no dependency targets: they link the clients of
// PostgreSQL, Redis, AMQP and NATS (pgx, go-redis, amqp091-go, nats.go),
// which an exec probe would pay for at every start. It knows their schemes,
// to say where they are (deps.go has them).

const DepsBuilt = false

// DepsHelp is the dependency line of the commands' help on targets.
const DepsHelp = `
  postgres://, redis://, amqp://, nats://  a dependency's login: in the full build of vitals only`

func buildDep(_, target string) (Probe, error) {
	scheme, _, _ := strings.Cut(target, ":")
	return nil, fmt.Errorf("target %q: %s:// targets are in the full build of vitals (built without -tags vitals_probe); this is the probe build", target, strings.ToLower(scheme))
}
