// Package client calls the management API of a running vitals agent
// (vitals run): its checks and their results, a level's verdict, the event
// log, notices, the hooks, and the workload. It is what the vitals commands
// that talk to an agent use, and what a Go program (an operator, a test, the
// workload itself) imports to do the same; Pebble's client package is the
// model.
//
// It uses the standard library only, as the rest of the root module does, so
// importing it forces no dependency version on a program. The wire types
// (Check, Result, Health, Hook, and health.Event for events) are the API's
// JSON; the agent's server writes them, and the routes are documented in
// docs/api.md.
//
// Every method returns an *Error when the agent answered with something
// other than a success, carrying its HTTP status and its message, and
// another error when there was no answer.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// dialTimeout bounds reaching the agent: it is on this machine or next to it.
const dialTimeout = 5 * time.Second

// Client calls the API of one agent. Make one with New. Its methods are safe
// for concurrent use.
type Client struct {
	addr  string
	base  string // the URL the paths are put after
	token string
	http  *http.Client
}

// New returns a client of the API at addr, which is one of:
//
//   - a unix socket's path, such as /run/vitals/vitals.sock (the agent's
//     default socket is said by the log line "vitals running", api=);
//   - tcp://HOST:PORT, as the agent's api: says it;
//   - an http:// or https:// URL, which may have a path the API is under (a
//     proxy in front of the agent).
//
// token, when not empty, is sent as a bearer token, which a TCP API needs
// (its api-token-file). Requests never go through the proxy of HTTP_PROXY:
// the agent is a neighbour, and no proxy may see its token. New makes no
// request.
func New(addr, token string) (*Client, error) {
	c := &Client{addr: addr, token: token}
	d := &net.Dialer{Timeout: dialTimeout}
	transport := &http.Transport{Proxy: nil, DialContext: d.DialContext}
	switch hostport, tcp := strings.CutPrefix(addr, "tcp://"); {
	case tcp:
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return nil, fmt.Errorf("API address %q: want tcp://HOST:PORT: %w", addr, err)
		}
		c.base = "http://" + hostport
	case strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://"):
		u, err := url.Parse(addr)
		if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("API address %q: want an http:// or https:// URL with a host, and no query", addr)
		}
		c.base = strings.TrimSuffix(u.String(), "/")
	case addr == "" || strings.Contains(addr, "://"):
		return nil, fmt.Errorf("API address %q: want a unix socket's path, tcp://HOST:PORT or an http:// URL", addr)
	default:
		transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", addr)
		}
		c.base = "http://vitals" // a unix socket has no host; any name will do
	}
	c.http = &http.Client{Transport: transport}
	return c, nil
}

// Error is the agent's answer to a request it did not take: the body of
// every answer that is not a success ({"error": "..."}), with its status.
type Error struct {
	// Status is the HTTP status: 400 a bad parameter or body, 401 a missing
	// or wrong token, 404 an unknown check, service or path, 405 a wrong method, 409
	// a request that does not fit the check or the workload's state, 429 a
	// notice or a beat that says something beyond the agent's limits.
	Status  int    `json:"-"`
	Message string `json:"error"`
	// RetryAfter is what a 429 (a notice or a report beyond the agent's
	// limits) or a 503 asks the client to wait, from its Retry-After; 0
	// when it asks nothing.
	RetryAfter time.Duration `json:"-"`
}

func (e *Error) Error() string { return e.Message }

// do makes one call: in, when not nil, is sent as the JSON body; a success
// is decoded into out, when not nil, and anything else into an *Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: the request's body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL of a unix socket is made up: leave it out
		}
		return fmt.Errorf("reach the agent at %s: %w", c.addr, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("read the agent's answer: %w", err)
	}
	if res.StatusCode/100 != 2 {
		e := &Error{Status: res.StatusCode}
		if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		if json.Unmarshal(b, e) != nil || e.Message == "" {
			e.Message = fmt.Sprintf("%s: %.200s", res.Status, b) // not the agent: a proxy, another server
		}
		return e
	}
	if out == nil || res.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("read the agent's answer: %w", err)
	}
	return nil
}

// Duration is a time.Duration as the API writes it: Go's string ("10s",
// "1.5ms").
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
