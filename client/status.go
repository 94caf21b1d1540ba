package client

import (
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Status is the agent's status page as JSON: GET /ui/api/status on the
// probe listener (listen:, beside /readyz), not on the management API. It is
// what the page shows, for scripts too: the levels, every check with its
// kept results, and the services. Decode it into this type; the agent's
// events, on the same listener, are GET /ui/api/events.
//
// As JSON, each check's kept results are written compactly (results), not
// as the list of GET /v1/checks/NAME (history), its last result is the last
// of them, and the fields with their usual value (not stopped, thresholds
// of 1 and 3, …) are left out: see results.go. Status's MarshalJSON and
// UnmarshalJSON turn one into the other, so that in Go each Check has all
// its fields, its History and Last, with starts to the millisecond and
// durations to the tenth of a millisecond.
type Status struct {
	// ServiceID and Version are the file's service-info, as the IETF
	// health+json answers of the probe endpoints give them.
	ServiceID string `json:"serviceId,omitempty"`
	Version   string `json:"version,omitempty"`
	// Started is when this vitals started: a reader that sees it change
	// knows that the agent started again, and that its event ids began
	// again from 1.
	Started time.Time `json:"started"`
	// Time is when the status was taken: the last time anything in it
	// changed, since an unchanged status is the same status (its ETag
	// too).
	Time time.Time `json:"time"`
	// Levels are the verdicts of startup, live and ready, in that order.
	Levels []Health `json:"levels"`
	// Draining is set once vitals is stopping: readiness fails from then on.
	Draining bool `json:"draining"`
	// Checks are every check with its kept results (History, oldest
	// first), in the order of the file.
	Checks []Check `json:"checks"`
	// Services are the services vitals supervises, in their start order;
	// absent when it runs none.
	Services []Workload `json:"services,omitempty"`
	// Workload is the one service, when vitals runs exactly one: the form of
	// the status from before an agent ran several, kept for the scripts that
	// read it. Absent otherwise; read Services.
	Workload *Workload `json:"workload,omitempty"`
	// LastEventID is the id of the last event emitted when the status was
	// taken: the events after it are news to this status.
	LastEventID uint64 `json:"lastEventId"`
	// Details is false when the agent withholds outputs (details: false):
	// then no result, event or notice on the status page's routes carries
	// one (no output, observed value or notice data), as the probe
	// endpoints say "reason withheld".
	Details bool `json:"details"`
}

// Workload is one of the services the agent supervises, as the status page
// shows it.
type Workload struct {
	// Name is the service's name, which the events call it: its key under
	// services:, or the base name of service:'s command.
	Name string `json:"name"`
	// PID is the pid of the run that runs now; absent between an exit and
	// a restart, and once it has exited for good.
	PID int `json:"pid,omitempty"`
	// Started is when its latest run started, and Restarts how many runs
	// came before it.
	Started  time.Time `json:"started,omitzero"`
	Restarts int       `json:"restarts"`
	// LastExit is the service-exited event of its latest exit: its pid,
	// exit code or signal, and reason. Absent before the first.
	LastExit *health.Event `json:"lastExit,omitempty"`
}
