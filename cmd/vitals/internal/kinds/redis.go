//go:build !vitals_probe

package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
)

// Redis is a PING on a kept connection to a Redis server.
var Redis = define(Kind{
	Name:          "redis",
	Summary:       "A Redis server that answers PING on a kept connection.",
	Example:       "{url: redis://localhost:6379}",
	ComponentType: health.ComponentTypeDatastore, // a cache or a store the workload keeps its data in
	CLI:           redisCLI,
}, urlBlock("Required: redis://USER:PASSWORD@HOST:PORT/DB, rediss:// (TLS) or unix://, as go-redis reads it; USER empty for requirepass only.",
	func(s *deps.RedisSpec) *string { return &s.URL }, deps.Redis))

var redisCLI = urlTargets(CLI{
	Schemes: []string{"redis", "rediss"}, Target: "redis://:PASSWORD@HOST:PORT/DB",
	Help: "a Redis PING, after AUTH (rediss:// for TLS)", Example: "redis://localhost:6379",
}, func(s *deps.RedisSpec) *string { return &s.URL }, deps.Redis)
