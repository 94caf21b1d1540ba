package deps_test

import (
	"regexp"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/probe"
)

var postgresFixture = fixture{
	Kind:   depstest.Postgres,
	build:  func(url string) (*probe.Prober, error) { return deps.Postgres(deps.PostgresSpec{URL: url}) },
	passes: regexp.MustCompile(`^SELECT 1 in [0-9.]+(µs|ms)$`),
}
