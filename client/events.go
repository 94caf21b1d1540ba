package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Notice is the body of POST /v1/notices: a notice's key and data, as
// health.ValidateNotice takes them.
type Notice struct {
	Key  string            `json:"key"`
	Data map[string]string `json:"data,omitempty"`
	// RepeatAfter is Pebble's repeat-after, as a Go duration ("1m"): a
	// notice of the same key less than this long after the last event of
	// its key counts an occurrence of that event instead of adding one
	// (health.Monitor.NotifyRepeating). Empty: none.
	RepeatAfter string `json:"repeatAfter,omitempty"`
}

// Events returns the events after the id after, oldest first (GET
// /v1/events); after 0 returns every event the agent's log still holds.
// With a wait, it blocks until there is one or the wait ends (then it
// returns none); the agent caps a wait at 5 minutes. Ids grow by one: a
// first id above after+1 means the log dropped the events between before
// they were read.
func (c *Client) Events(ctx context.Context, after uint64, wait time.Duration) ([]health.Event, error) {
	q := url.Values{"after": {strconv.FormatUint(after, 10)}}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out []health.Event
	return out, c.do(ctx, http.MethodGet, "/v1/events?"+q.Encode(), nil, &out)
}

// Notify records a notice in the agent's event log (POST /v1/notices), as
// health.Monitor.Notify does in a program's own: an event of type notice
// with key and data, which the agent's hooks, Kubernetes Events, metrics
// and event readers get as they get every event. It returns the event
// recorded. A key or data that health.ValidateNotice refuses is an *Error
// of status 400 that says why; nothing is recorded then. Pebble's equivalent
// is pebble notify.
func (c *Client) Notify(ctx context.Context, key string, data map[string]string) (health.Event, error) {
	return c.NotifyRepeating(ctx, key, data, 0)
}

// NotifyRepeating is Notify with Pebble's repeat-after: a notice of key
// less than repeatAfter after the last event of its key counts an
// occurrence of that event, which it returns with its Occurrences, instead
// of adding one. 0 repeats nothing. Beyond the agent's limits, the *Error
// is a 429 with RetryAfter.
func (c *Client) NotifyRepeating(ctx context.Context, key string, data map[string]string, repeatAfter time.Duration) (health.Event, error) {
	n := Notice{Key: key, Data: data}
	if repeatAfter > 0 {
		n.RepeatAfter = repeatAfter.String()
	}
	var out health.Event
	return out, c.do(ctx, http.MethodPost, "/v1/notices", n, &out)
}
