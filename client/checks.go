package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Check is one check: its configuration and state, as GET /v1/checks lists
// it. Keys are camelCase, as in the events and the IETF health format.
type Check struct {
	Name   string        `json:"name"`
	Level  health.Level  `json:"level"`
	Kind   string        `json:"kind"`
	Status health.Status `json:"status"` // pending, pass, warn or fail
	// Stopped is set by StopChecks: the check does not run and is left out
	// of the levels until started again.
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
	// History is the kept results, oldest first: Check (GET
	// /v1/checks/NAME) only.
	History []Result `json:"history,omitzero"`
}

// Result is one run of a check.
type Result struct {
	Time     time.Time `json:"time"` // when the run started
	Duration Duration  `json:"duration"`
	OK       bool      `json:"ok"`
	Warn     bool      `json:"warn,omitempty"` // it passed, with a warning: a heartbeat's beat said warn
	// Undecided: the run decided nothing yet (a rate whose window has one
	// sample so far), and counted neither as a pass nor as a failure; its
	// output says what the check waits for. OK is false.
	Undecided     bool   `json:"undecided,omitempty"`
	Output        string `json:"output,omitempty"`
	ObservedValue any    `json:"observedValue,omitempty"`
	ObservedUnit  string `json:"observedUnit,omitempty"`
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

// Names is the body of POST /v1/checks/stop and /v1/checks/start.
type Names struct {
	Checks []string `json:"checks"`
}

// Checks lists the checks of a level, or every check for level 0, in the
// order of the agent's file (GET /v1/checks).
func (c *Client) Checks(ctx context.Context, level health.Level) ([]Check, error) {
	path := "/v1/checks"
	if level != 0 {
		path += "?level=" + level.String()
	}
	var out []Check
	return out, c.do(ctx, http.MethodGet, path, nil, &out)
}

// Check returns one check with its kept results (GET /v1/checks/NAME); an
// unknown check is an *Error of status 404.
func (c *Client) Check(ctx context.Context, name string) (Check, error) {
	var out Check
	return out, c.do(ctx, http.MethodGet, "/v1/checks/"+url.PathEscape(name), nil, &out)
}

// Run runs a check now and returns its result, which counts toward the
// check's thresholds like any other (POST /v1/checks/NAME/run).
func (c *Client) Run(ctx context.Context, name string) (Result, error) {
	var out Result
	return out, c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/run", nil, &out)
}

// Beat beats a heartbeat check (POST /v1/checks/NAME/beat); a check that is
// no heartbeat is an *Error of status 409.
func (c *Client) Beat(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/beat", nil, nil)
}

// StopChecks stops the named checks (POST /v1/checks/stop): a stopped check
// does not run and is left out of the levels, kept to look at, until
// StartChecks. It returns the checks as they are now, each once, in the
// order first named. When a name is unknown, nothing is changed, and the
// error is an *Error of status 404 that quotes it.
func (c *Client) StopChecks(ctx context.Context, names ...string) ([]Check, error) {
	var out []Check
	return out, c.do(ctx, http.MethodPost, "/v1/checks/stop", Names{Checks: names}, &out)
}

// StartChecks starts stopped checks again (POST /v1/checks/start), as
// StopChecks stops them; a check that runs already is left as it is.
func (c *Client) StartChecks(ctx context.Context, names ...string) ([]Check, error) {
	var out []Check
	return out, c.do(ctx, http.MethodPost, "/v1/checks/start", Names{Checks: names}, &out)
}

// Health returns a level's verdict (GET /v1/health); level 0 is the
// agent's default, ready.
func (c *Client) Health(ctx context.Context, level health.Level) (Health, error) {
	path := "/v1/health"
	if level != 0 {
		path += "?level=" + level.String()
	}
	var out Health
	return out, c.do(ctx, http.MethodGet, path, nil, &out)
}
