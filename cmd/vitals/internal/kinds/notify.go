package kinds

import (
	"errors"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
)

// NotifySpec is a notify check's block.
type NotifySpec struct {
	// Watchdog is how long the workload may go without saying WATCHDOG=1
	// or READY=1; 0 for no watchdog: the check waits for READY=1.
	Watchdog time.Duration
}

// Notify hears the workload say it is ready, as daemons say it to systemd
// (sd_notify's READY=1, on the socket vitals names in NOTIFY_SOCKET) or to
// s6 (a newline on service.notification-fd), and, with a watchdog, that it
// is alive (WATCHDOG=1). What it says in STATUS= is the check's output
// (package notify).
var Notify = define(Kind{
	Name: "notify",
	Summary: "The workload's own word, as daemons give it to systemd (sd_notify: READY=1, WATCHDOG=1, STATUS=) or s6 (notification-fd): " +
		"passes once this run said READY=1; with watchdog, fails when no WATCHDOG=1 or READY=1 came within it.",
	Example:       "{}",
	ComponentType: health.ComponentTypeComponent, // the workload's word on itself
	// A watchdog that runs out and WATCHDOG=trigger are events at a
	// moment, which run the check then: it fails then. A check that waits
	// for READY=1 fails until it comes: the kubelet's threshold.
	FailureThreshold: health.EventFailureThreshold,
	EventsWhen:       "with watchdog",
	CLI: &CLI{Why: "a notify check hears the workload that vitals run starts, on the socket vitals names to it in NOTIFY_SOCKET, " +
		"and vitals probe and vitals wait start no workload: give it as a notify: check in vitals.yaml"},
}, block[NotifySpec]{
	events: func(s NotifySpec) bool { return s.Watchdog > 0 },
	fields: func(s *NotifySpec) []config.Field {
		return []config.Field{
			{Key: "watchdog", Value: config.Duration(&s.Watchdog),
				Doc: "More than 0: the check fails when the workload said neither WATCHDOG=1 nor READY=1 for this long (since it started), and at once on WATCHDOG=trigger; " +
					"vitals tells the workload in WATCHDOG_USEC (the shortest of its checks') and WATCHDOG_PID, as systemd does. " +
					"Without it the check passes once this run of the workload said READY=1 (or wrote a newline to service.notification-fd), until STOPPING=1. " +
					"STATUS= is the output either way."},
		}
	},
	check: func(d *config.Decoder, n ast.Node, path string, s *NotifySpec, given config.Given) {
		if given["watchdog"] != nil && s.Watchdog <= 0 {
			d.Errorf(given["watchdog"], path+".watchdog", "more than 0, or left out for none")
		}
	},
	build: func(name string, s NotifySpec, env Env) (health.Checker, error) {
		if env.Notify == nil {
			return nil, ErrNoWorkloadToHear
		}
		return env.Notify(name, s.Watchdog), nil
	},
})

// ErrNoWorkloadToHear is a notify check's build with no workload to hear
// (no Env.Notify): the agent says it at the check, where the file has it,
// when neither the file nor the command line gives a workload.
var ErrNoWorkloadToHear = errors.New("a notify check hears what the workload says of itself: give service: in the file, or the command after --")
