package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// dialTimeout bounds reaching the agent: it is on this machine or next to it.
const dialTimeout = 5 * time.Second

// Client calls the API of a running agent. Its methods return an *Error for
// an answer that is not a success, and another error when there was no
// answer.
type Client struct {
	addr  string
	base  string // the URL the paths are put after
	token string
	http  *http.Client
}

// NewClient returns a client of the API at addr, a unix socket's path or
// tcp://HOST:PORT, sending token as a bearer token when it is not empty.
func NewClient(addr, token string) (*Client, error) {
	network, address, err := parseAddr(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: dialTimeout}
	transport := &http.Transport{
		Proxy: nil, // the agent is local: no HTTP_PROXY may see its token
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, address)
		},
	}
	base := "http://vitals" // a unix socket has no host; any name will do
	if network == "tcp" {
		base = "http://" + address
	}
	return &Client{addr: addr, base: base, token: token, http: &http.Client{Transport: transport}}, nil
}

// Checks lists the checks of a level, or every check for level 0.
func (c *Client) Checks(ctx context.Context, level health.Level) ([]Check, error) {
	path := "/v1/checks"
	if level != 0 {
		path += "?level=" + level.String()
	}
	var out []Check
	return out, c.do(ctx, http.MethodGet, path, &out)
}

// Check returns one check with its kept results.
func (c *Client) Check(ctx context.Context, name string) (Check, error) {
	var out Check
	return out, c.do(ctx, http.MethodGet, "/v1/checks/"+url.PathEscape(name), &out)
}

// Run runs a check now and returns its result.
func (c *Client) Run(ctx context.Context, name string) (Result, error) {
	var out Result
	return out, c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/run", &out)
}

// Beat beats a heartbeat check.
func (c *Client) Beat(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, "/v1/checks/"+url.PathEscape(name)+"/beat", nil)
}

// Health returns a level's verdict.
func (c *Client) Health(ctx context.Context, level health.Level) (Health, error) {
	var out Health
	return out, c.do(ctx, http.MethodGet, "/v1/health?level="+level.String(), &out)
}

// Events returns the events after the id after, oldest first. With a wait,
// it blocks until there is one or the wait ends (then it returns none).
func (c *Client) Events(ctx context.Context, after uint64, wait time.Duration) ([]health.Event, error) {
	q := url.Values{"after": {strconv.FormatUint(after, 10)}}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out []health.Event
	return out, c.do(ctx, http.MethodGet, "/v1/events?"+q.Encode(), &out)
}

// RestartService restarts the agent's workload at once and returns its
// service-started event, once it runs again.
func (c *Client) RestartService(ctx context.Context) (health.Event, error) {
	var out health.Event
	return out, c.do(ctx, http.MethodPost, "/v1/service/restart", &out)
}

// Hooks returns the hooks' states, as GET /v1/hooks answers them.
func (c *Client) Hooks(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	return out, c.do(ctx, http.MethodGet, "/v1/hooks", &out)
}

// do makes one call, decoding a success into out and anything else into an
// *Error.
func (c *Client) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
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
