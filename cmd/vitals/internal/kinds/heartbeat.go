package kinds

import (
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
)

// HeartbeatSpec is a heartbeat's block.
type HeartbeatSpec struct {
	// TTL is how long after the last beat the check fails; more than 0.
	TTL time.Duration
}

// Heartbeat runs nothing: the workload beats it through the management API
// (POST /v1/checks/NAME/beat), and it fails the moment no beat came within
// its ttl; a beat may say pass, warn or fail, with an output. Its ttl is all
// its timing: it has no period, timeout or thresholds, but may have a
// stable-for.
var Heartbeat = define(Kind{
	Name:          "heartbeat",
	Summary:       "Beaten by the workload through the management API (vitals beat NAME), each beat passing it or saying warn or fail; fails when no beat came within the ttl.",
	Example:       "{ttl: 1m}",
	ComponentType: health.ComponentTypeComponent, // beaten by the workload: one of its loops; no check may say otherwise
	// Its ttl passing is an event, and Monitor.Heartbeat fails it then;
	// the file gives no threshold, its ttl decides.
	FailureThreshold: health.EventFailureThreshold,
	CLI: &CLI{Why: "a heartbeat is beaten by the workload (vitals beat NAME) and judged by the vitals run it beats, " +
		"and there is no beat to look at once: ask that vitals with vitals check NAME"},
}, block[HeartbeatSpec]{
	fields: func(s *HeartbeatSpec) []config.Field {
		return []config.Field{
			{Key: "ttl", Value: config.Duration(&s.TTL), Required: true,
				Doc: "Required, more than 0: how long after the last beat (or the start) the check fails."},
		}
	},
	check: func(d *config.Decoder, n ast.Node, path string, s *HeartbeatSpec, _ config.Given) {
		if s.TTL <= 0 {
			d.Errorf(n, path+".ttl", "required, and more than 0")
		}
	},
	feed:     config.Beats,
	deadline: func(s HeartbeatSpec) time.Duration { return s.TTL },
})
