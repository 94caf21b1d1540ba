package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
)

// urlBlock is the block of a dependency kind: one url, which url finds in
// its spec. Its checker keeps a connection between runs (an io.Closer),
// dialled at the first run.
func urlBlock[S any](doc string, url func(s *S) *string, build func(S) (*deps.Prober, error)) block[S] {
	return block[S]{
		fields: func(s *S) []config.Field {
			return []config.Field{{Key: "url", Value: config.String(url(s)), Doc: doc}}
		},
		build: func(_ string, s S, _ Env) (health.Checker, error) { return build(s) },
	}
}
