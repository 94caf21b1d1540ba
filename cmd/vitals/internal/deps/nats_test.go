package deps_test

import (
	"regexp"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/probe"
)

var natsFixture = fixture{
	Kind:   depstest.NATS,
	build:  func(url string) (*probe.Prober, error) { return deps.NATS(deps.NATSSpec{URL: url}) },
	passes: regexp.MustCompile(`^flush in [0-9.]+(µs|ms)$`),
}
