package kinds

import (
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
)

// WatchdogSpec is a watchdog's block.
type WatchdogSpec struct {
	// Limit is how long a unit of work may run before the check fails;
	// more than 0.
	Limit time.Duration
}

// Watchdog runs nothing: the workload begins and ends units of work through
// the management API (POST /v1/checks/NAME/work, DELETE …/work/ID; vitals
// work run NAME -- COMMAND), and it fails while one has run longer than its
// limit, as health.Watchdog does for a Go program. Its units belong to the
// workload's run: they end when it restarts, as every check starts over.
// Its limit is all its timing, but a stable-for.
var Watchdog = define(Kind{
	Name: "watchdog",
	Summary: "Times the units of work the workload begins and ends through the management API (vitals work run NAME -- COMMAND); " +
		"fails while one has run longer than the limit. An idle watchdog passes.",
	Example:       "{limit: 5m}",
	ComponentType: health.ComponentTypeComponent, // the workload's own work; no check may say otherwise
	// A unit reaching its limit is an event, and Monitor.Watchdog fails it
	// then; the file gives no threshold, its limit decides.
	FailureThreshold: health.EventFailureThreshold,
	CLI: &CLI{Why: "a watchdog times the units of work that the workload begins and ends (vitals work NAME) in the vitals run it feeds, " +
		"and there is no work to time at once: ask that vitals with vitals check NAME"},
}, block[WatchdogSpec]{
	fields: func(s *WatchdogSpec) []config.Field {
		return []config.Field{
			{Key: "limit", Value: config.Duration(&s.Limit), Required: true,
				Doc: "Required, more than 0: how long a unit of work may run; the check fails while one has run longer. " +
					"Longer than the slowest healthy unit, since reaching it is taken for a hang."},
		}
	},
	check: func(d *config.Decoder, n ast.Node, path string, s *WatchdogSpec, _ config.Given) {
		if s.Limit <= 0 {
			d.Errorf(n, path+".limit", "required, and more than 0")
		}
	},
	feed:     config.Units,
	deadline: func(s WatchdogSpec) time.Duration { return s.Limit },
})
