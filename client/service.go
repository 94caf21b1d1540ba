package client

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// RestartService restarts the agent's one service at once (POST
// /v1/service/restart) and returns its service-started event, once it runs
// again. An agent that runs several answers 400, naming them (restart one
// with RestartNamedService); one with no workload 404, one whose service is
// not running (between an exit and its restart) 409.
func (c *Client) RestartService(ctx context.Context) (health.Event, error) {
	var out health.Event
	return out, c.do(ctx, http.MethodPost, "/v1/service/restart", nil, &out)
}

// RestartNamedService restarts the agent's service name at once (POST
// /v1/services/NAME/restart) and returns its service-started event, once it
// runs again. An agent that runs no such service answers 404, naming those
// it runs; one whose service is not running (between an exit and its
// restart) 409.
func (c *Client) RestartNamedService(ctx context.Context, name string) (health.Event, error) {
	var out health.Event
	return out, c.do(ctx, http.MethodPost, "/v1/services/"+url.PathEscape(name)+"/restart", nil, &out)
}

// Hook is where one of the agent's hooks stands, as GET /v1/hooks lists it.
type Hook struct {
	Name   string             `json:"name"`
	Kind   string             `json:"kind"`   // exec, webhook or pebble-notice
	Target string             `json:"target"` // the command's name, the URL (its password and secret parts hidden), or Pebble's socket
	On     []health.EventType `json:"on"`
	// Delivered and Failed count the events delivered and given up on (after
	// every attempt a webhook or a Pebble notice gets).
	Delivered uint64 `json:"delivered"`
	Failed    uint64 `json:"failed"`
	// Missed counts the events the hook never saw: the log dropped them
	// while the hook was busy with older ones. They count whatever their
	// type, since they are gone.
	Missed uint64 `json:"missed"`
	// Coalesced counts the events the hook left out when it fell behind,
	// delivering the latest of each check, level and notice key instead.
	Coalesced uint64 `json:"coalesced,omitempty"`
	// LastDeliveredID is the ID of the last event delivered; 0: none yet.
	LastDeliveredID uint64 `json:"lastDeliveredId,omitempty"`
	// LastError is why the last failed attempt failed, and LastErrorTime when.
	LastError     string    `json:"lastError,omitempty"`
	LastErrorTime time.Time `json:"lastErrorTime,omitzero"`
	// Failing is set when the hook gave up on its latest event, and cleared
	// by the next event it delivers.
	Failing bool `json:"failing"`
}

// Hooks returns where each of the agent's hooks stands, in the order of its
// file (GET /v1/hooks).
func (c *Client) Hooks(ctx context.Context) ([]Hook, error) {
	var out []Hook
	return out, c.do(ctx, http.MethodGet, "/v1/hooks", nil, &out)
}

// Reloaded is what a reload of the agent's file changed (POST /v1/reload):
// the checks added, changed (started over, pending), retimed (their timing
// or thresholds alone changed: they keep their status and history) and
// removed, each in the file's order, and the other parts of the file that
// changed (by key: details, hooks, kubernetes…). All empty: the file
// changed nothing.
type Reloaded struct {
	Added    []string `json:"added,omitempty"`
	Changed  []string `json:"changed,omitempty"`
	Retimed  []string `json:"retimed,omitempty"`
	Removed  []string `json:"removed,omitempty"`
	Sections []string `json:"sections,omitempty"`
	// Restarted is the services restarted because their command,
	// environment or directory changed.
	Restarted []string `json:"restarted,omitempty"`
}

// String says what changed: "added a, b; changed c; removed d; applied
// details, services; restarted web", or "nothing changed".
func (r Reloaded) String() string {
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", r.Added}, {"changed", r.Changed}, {"retimed", r.Retimed}, {"removed", r.Removed}, {"applied", r.Sections}, {"restarted", r.Restarted}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 {
		return "nothing changed"
	}
	return strings.Join(parts, "; ")
}

// Reload makes the agent read its file again and apply what changed (POST
// /v1/reload). A file the agent refuses — one that does not load, or
// changes what a reload cannot — is an *Error of status
// 400 whose message lists every reason, one a line; nothing changed then.
func (c *Client) Reload(ctx context.Context) (Reloaded, error) {
	var out Reloaded
	return out, c.do(ctx, http.MethodPost, "/v1/reload", nil, &out)
}
