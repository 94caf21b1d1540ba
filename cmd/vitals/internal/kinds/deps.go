//go:build !vitals_probe

package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// urlBlock is the block of a dependency kind: one url, which url finds in
// its spec. Its checker keeps a connection between runs (an io.Closer),
// dialled at the first run.
func urlBlock[S any, C health.Checker](doc string, url func(s *S) *string, build func(S) (C, error)) block[S] {
	return block[S]{
		fields: func(s *S) []config.Field {
			return []config.Field{{Key: "url", Value: config.String(url(s)), Required: true, Doc: doc}}
		},
		build: func(_ string, s S, _ Env) (health.Checker, error) {
			checker, err := build(s)
			if err != nil {
				return nil, err // not a nil C in a non-nil interface
			}
			return checker, nil
		},
	}
}

// urlTargets are the targets of a dependency kind: its URL, which url finds
// in its spec, with the TLS, user and password in it, as in the file; the
// kind takes no flag.
func urlTargets[S any](c CLI, url func(s *S) *string, build func(S) (*probe.Prober, error)) *CLI {
	return takes(c, targets[S]{url: func(target string, s S) (*probe.Prober, error) {
		*url(&s) = target
		return build(s)
	}})
}
