package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// This file is the calls by which a workload feeds its checks: a beat that
// says how it is, and the units of work of a watchdog.

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

// Report beats a heartbeat check with what b says: its status (pass, warn
// or fail), output and observed value. A fail fails the check at once, a
// warn makes it warn; its ttl counts from this beat as from any other. A
// bad status is an *Error of status 400, a check that is no heartbeat one
// of status 409.
func (c *Client) Report(ctx context.Context, name string, b Beat) error {
	return c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/beat", b, nil)
}

// BeginWork begins a unit of work on a watchdog check and returns its id,
// for EndWork. A check that is no watchdog is an *Error of status 409, as
// is a unit past the agent's bound (health.MaxUnitIDs).
func (c *Client) BeginWork(ctx context.Context, name string) (uint64, error) {
	var out Unit
	err := c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/work", nil, &out)
	return out.ID, err
}

// EndWork ends the unit of work id on a watchdog check. A unit that is not
// running (ended, or cleared when the workload restarted) is an *Error of
// status 410 (Gone); no such check, one of status 404.
func (c *Client) EndWork(ctx context.Context, name string, id uint64) error {
	return c.do(ctx, http.MethodDelete, "/v1/checks/"+url.PathEscape(name)+"/work/"+strconv.FormatUint(id, 10), nil, nil)
}
