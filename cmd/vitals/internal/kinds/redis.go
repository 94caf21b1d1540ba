package kinds

import "github.com/vitals-dev/vitals/cmd/vitals/internal/deps"

// Redis is a PING on a kept connection to a Redis server.
var Redis = define(Kind{
	Name:    "redis",
	Summary: "A Redis server that answers PING on a kept connection.",
	Example: "{url: redis://localhost:6379}",
}, urlBlock("Required: redis://USER:PASSWORD@HOST:PORT/DB, rediss:// (TLS) or unix://, as go-redis reads it; USER empty for requirepass only.",
	func(s *deps.RedisSpec) *string { return &s.URL }, deps.Redis))
