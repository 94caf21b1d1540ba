package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// This file is the client's calls by which the workload feeds its checks:
// a beat that says how it is, and the units of work of a watchdog.

// Report beats a heartbeat check with what b says: its status (pass, warn
// or fail), output and observed value, sent as query parameters.
func (c *Client) Report(ctx context.Context, name string, b Beat) error {
	path := "/v1/checks/" + url.PathEscape(name) + "/beat"
	if q := b.query(); len(q) > 0 {
		path += "?" + q.Encode()
	}
	return c.do(ctx, http.MethodPost, path, nil)
}

// BeginWork begins a unit of work on a watchdog check and returns its id.
func (c *Client) BeginWork(ctx context.Context, name string) (uint64, error) {
	var out Unit
	err := c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/work", &out)
	return out.ID, err
}

// EndWork ends the unit of work id on a watchdog check.
func (c *Client) EndWork(ctx context.Context, name string, id uint64) error {
	return c.do(ctx, http.MethodDelete, "/v1/checks/"+url.PathEscape(name)+"/work/"+strconv.FormatUint(id, 10), nil)
}

// query is b as the query parameters of a beat.
func (b Beat) query() url.Values {
	q := url.Values{}
	for key, v := range map[string]string{"status": b.Status, "output": b.Output, "observedUnit": b.ObservedUnit} {
		if v != "" {
			q.Set(key, v)
		}
	}
	if b.ObservedValue != nil {
		q.Set("observedValue", strconv.FormatFloat(*b.ObservedValue, 'g', -1, 64))
	}
	return q
}
