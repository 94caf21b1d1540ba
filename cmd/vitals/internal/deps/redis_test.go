package deps_test

import (
	"regexp"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/probe"
)

var redisFixture = fixture{
	Kind:   depstest.Redis,
	build:  func(url string) (*probe.Prober, error) { return deps.Redis(deps.RedisSpec{URL: url}) },
	passes: regexp.MustCompile(`^PONG in [0-9.]+(µs|ms)$`),
}

func TestARedisURLWithoutThePasswordTheServerWantsFailsAuthentication(t *testing.T) {
	t.Parallel()
	s := redisFixture.Shared(t)
	p := redisFixture.prober(t, "redis://"+s.Addr)
	mustFail(t, p, "run", "^authentication failed: NOAUTH ", depstest.RedisPassword)
}
