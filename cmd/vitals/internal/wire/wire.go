// Package wire is what the agent's HTTP faces write of its Monitor: its state
// as the JSON wire types of the public package client, and its events as
// server-sent events. The management API (package api) and the status page
// (package ui) both write through it, so that a check or an event reads the
// same on both; it imports neither of them, nor the agent.
//
// Keys are camelCase as in the events and the IETF health format; durations
// are Go's strings ("10s", "1.5ms"); times are RFC 3339.
package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// Keepalive is how often an idle event stream gets a comment line: well
// under the idle timeouts of proxies (nginx's is 60s).
const Keepalive = 15 * time.Second

// Check is a check's state as JSON shows it; withHistory adds its kept
// results, oldest first.
func Check(st health.CheckState, withHistory bool) client.Check {
	c := client.Check{
		Name: st.Name, Level: st.Level, Kind: st.Kind, Status: st.Status, Stopped: st.Stopped, Since: st.Since,
		Successes: st.ConsecutiveSuccesses, Failures: st.ConsecutiveFailures,
		SuccessThreshold: st.SuccessThreshold, FailureThreshold: st.FailureThreshold, Runs: st.Runs,
		StableFor: client.Duration(st.StableFor), StableAt: st.StableAt,
		Period: client.Duration(st.Period), Timeout: client.Duration(st.Timeout), InitialDelay: client.Duration(st.InitialDelay),
	}
	if last, ok := st.Last(); ok {
		r := Result(last)
		c.Last = &r
	}
	if withHistory {
		c.History = make([]client.Result, len(st.History))
		for i, r := range st.History {
			c.History[i] = Result(r)
		}
	}
	return c
}

// Result is one result as JSON shows it.
func Result(r health.Result) client.Result {
	return client.Result{Time: r.Time, Duration: client.Duration(r.Duration), OK: r.OK, Warn: r.Warn, Undecided: r.Undecided, Output: r.Output,
		ObservedValue: r.ObservedValue, ObservedUnit: r.ObservedUnit}
}

// Cursor reads an event id, as ?after= and Last-Event-ID give it; "" is 0,
// before the first event.
func Cursor(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an event id", s)
	}
	return id, nil
}

// WantsStream reports whether r asks for server-sent events (Accept:
// text/event-stream).
func WantsStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// Stream writes m's events after the id after as server-sent events until
// the request ends: each with an id: line, so that a browser's EventSource
// resumes after the last one it saw (Last-Event-ID, which wins over after)
// when it reconnects, and a comment line every Keepalive while there are
// none. Events the log dropped before they were written are an event
// named gap (event: gap), whose data is {"first": ID, "last": ID,
// "changes": BOOL} (health.Gap: changes says state changes were among them,
// so that a reader that keeps state reads it anew), with the id of the last.
// shown, if not nil, is what each event is written as. The error is
// a Last-Event-ID that is no event id, returned before anything is written.
//
// Events emitted just before the request ends (the agent's "stopping") are
// still written: the end of the stream is what its server's BaseContext
// says, and the follower reads what is there once it has ended.
func Stream(w http.ResponseWriter, r *http.Request, m *health.Monitor, after uint64, shown func(health.Event) health.Event) error {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		var err error
		if after, err = Cursor(id); err != nil {
			return fmt.Errorf("Last-Event-ID: %w", err)
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		// Its headers only: net/http drops what a HEAD writes, so no write
		// would ever fail and tell the stream its reader has gone.
		return nil
	}
	rc.Flush()
	ctx := r.Context()
	follower := m.Follow(after)
	for {
		wait, cancel := context.WithTimeout(ctx, Keepalive)
		evs, gap, err := follower.Next(wait)
		cancel()
		if gap.Len() > 0 {
			// Told, never skipped in silence: a reader that keeps state
			// reads it anew when changes were among them.
			fmt.Fprintf(w, "event: gap\nid: %d\ndata: {\"first\":%d,\"last\":%d,\"changes\":%t}\n\n", gap.Last, gap.First, gap.Last, gap.Changes)
		}
		for _, e := range evs {
			if shown != nil {
				e = shown(e)
			}
			data, _ := json.Marshal(e) // an Event always encodes
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.ID, data)
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprint(w, ": keepalive\n\n")
		}
		if rc.Flush() != nil || ctx.Err() != nil {
			return nil
		}
	}
}

// WriteError answers with an Error of the message format says, with status
// code.
func WriteError(w http.ResponseWriter, code int, format string, args ...any) {
	WriteJSON(w, code, client.Error{Message: fmt.Sprintf(format, args...)})
}

// WriteJSON answers with v as JSON, with status code. A value that no JSON
// can hold is said as a 500 with an Error, rather than a success with no
// body that a client cannot read.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(client.Error{Message: fmt.Sprintf("the answer has no JSON: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
