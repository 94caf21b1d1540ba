package api

import (
	"time"

	"github.com/vitals-dev/vitals/health"
)

// This file is the API's JSON: what the server writes and the client reads.
// Keys are camelCase as in the events and the IETF health format; durations
// are Go's strings ("10s", "1.5ms"); times are RFC 3339.

// Check is one check: its configuration and state, as GET /v1/checks lists it.
type Check struct {
	Name   string        `json:"name"`
	Level  health.Level  `json:"level"`
	Kind   string        `json:"kind"`
	Status health.Status `json:"status"` // pending, pass, warn or fail
	// Stopped is set by POST /v1/checks/stop: the check does not run and is
	// left out of the levels until started again.
	Stopped bool `json:"stopped"`
	// Since is when Status last changed; absent while the check is pending.
	Since            time.Time `json:"since,omitzero"`
	Successes        int       `json:"successes"` // consecutive passing runs, up to now
	Failures         int       `json:"failures"`  // consecutive failing runs, up to now
	SuccessThreshold int       `json:"successThreshold"`
	FailureThreshold int       `json:"failureThreshold"`
	// StableFor is how long the check must have passed before it counts
	// as passing; absent when it counts at once.
	StableFor Duration `json:"stableFor,omitzero"`
	// StableAt is when a check whose runs pass, waiting to be stable, will
	// pass unless a run fails first; absent when it waits for nothing.
	StableAt time.Time `json:"stableAt,omitzero"`
	Runs     int       `json:"runs"` // results recorded since the agent started, or the checks last started over
	Period   Duration  `json:"period"`
	// Timeout is absent for heartbeats and watchdogs, which run nothing.
	Timeout      Duration `json:"timeout,omitzero"`
	InitialDelay Duration `json:"initialDelay"`
	Last         *Result  `json:"last,omitempty"` // absent before the first result
	// History is the kept results, oldest first: GET /v1/checks/NAME only.
	History []Result `json:"history,omitzero"`
}

// Result is one run of a check.
type Result struct {
	Time          time.Time `json:"time"` // when the run started
	Duration      Duration  `json:"duration"`
	OK            bool      `json:"ok"`
	Warn          bool      `json:"warn,omitempty"` // it passed, with a warning: a heartbeat's beat said warn
	Output        string    `json:"output,omitempty"`
	ObservedValue any       `json:"observedValue,omitempty"`
	ObservedUnit  string    `json:"observedUnit,omitempty"`
}

// Health is a level's verdict, as GET /v1/health answers it: whether the
// level's probe endpoint answers 200 now, and if not, why.
type Health struct {
	Level health.Level `json:"level"`
	OK    bool         `json:"ok"`
	// Reason names every check that fails the level, with its reason, as
	// "readyz check failed: db failed: …; mq pending: no result yet".
	Reason string `json:"reason,omitempty"`
}

// Beat is what a beat of a heartbeat may say (POST /v1/checks/NAME/beat):
// a JSON body, or the query parameters of the same names. Every field is
// optional, and a beat that says nothing passes the check.
type Beat struct {
	// Status is pass (the default), warn or fail.
	Status string `json:"status,omitempty"`
	// Output is the result's output: why it warns or fails, or what the
	// workload did.
	Output string `json:"output,omitempty"`
	// ObservedValue is a number the workload observed, such as how long a
	// job took, in ObservedUnit, which it needs.
	ObservedValue *float64 `json:"observedValue,omitempty"`
	ObservedUnit  string   `json:"observedUnit,omitempty"`
}

// Unit is a unit of work begun on a watchdog check, as POST
// /v1/checks/NAME/work answers it: DELETE /v1/checks/NAME/work/ID ends it.
type Unit struct {
	ID uint64 `json:"id"`
}

// Names is the body of POST /v1/checks/stop and /v1/checks/start.
type Names struct {
	Checks []string `json:"checks"`
}

// Error is the body of every answer that is not a success, and what the
// client returns for one.
type Error struct {
	Status  int    `json:"-"` // the HTTP status
	Message string `json:"error"`
}

func (e *Error) Error() string { return e.Message }

// Duration is a time.Duration written as Go writes it.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes the duration as "10s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads what MarshalText writes.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

func checkOf(st health.CheckState, withHistory bool) Check {
	c := Check{
		Name: st.Name, Level: st.Level, Kind: st.Kind, Status: st.Status, Stopped: st.Stopped, Since: st.Since,
		Successes: st.ConsecutiveSuccesses, Failures: st.ConsecutiveFailures,
		SuccessThreshold: st.SuccessThreshold, FailureThreshold: st.FailureThreshold, Runs: st.Runs,
		StableFor: Duration(st.StableFor), StableAt: st.StableAt,
		Period: Duration(st.Period), Timeout: Duration(st.Timeout), InitialDelay: Duration(st.InitialDelay),
	}
	if last, ok := st.Last(); ok {
		r := resultOf(last)
		c.Last = &r
	}
	if withHistory {
		c.History = make([]Result, len(st.History))
		for i, r := range st.History {
			c.History[i] = resultOf(r)
		}
	}
	return c
}

func resultOf(r health.Result) Result {
	return Result{Time: r.Time, Duration: Duration(r.Duration), OK: r.OK, Warn: r.Warn, Output: r.Output,
		ObservedValue: r.ObservedValue, ObservedUnit: r.ObservedUnit}
}
