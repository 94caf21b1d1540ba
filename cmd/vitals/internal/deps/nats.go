package deps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// NATSSpec is a NATS check: a connection that answers a flush (PING, PONG).
type NATSSpec struct {
	// URL is nats:// or tls:// (TLS), as nats.go reads it:
	// nats://USER:PASSWORD@HOST:PORT, or nats://TOKEN@HOST:PORT for a
	// server that wants a token; one server. Required.
	URL string
}

// NATS builds a NATS probe. Its connection is kept between runs, without
// nats.go's reconnecting in the background: each run flushes (a PING
// answered by a PONG), and a run that finds the connection closed dials
// again. A refused login fails with "authentication failed: " before
// nats.go's words. The observed value is the round trip of the flush in
// milliseconds, not counting the connection's setup.
func NATS(s NATSSpec) (*probe.Prober, error) {
	u, shown, secret, err := parseURL("nats", s.URL, "nats", "tls")
	if err != nil {
		return nil, err
	}
	if strings.Contains(u.Host, ",") || strings.Trim(u.Path, "/") != "" {
		return nil, probe.Invalid("nats", "url: one server, as nats://HOST:PORT, with no path")
	}
	if u.User != nil {
		if _, set := u.User.Password(); !set && u.User.Username() != "" {
			// A user with no password is a token, which is secret.
			secret = secret.add(u.User.Username())
			v := *u
			v.User = url.User(redacted)
			shown = v.String()
		}
	}
	dial := func(ctx context.Context) (conn, error) {
		return dialNATS(ctx, s.URL)
	}
	return prober("nats", shown, newKeeper(secret, dial)), nil
}

// natsDialer dials for nats.go under the run's context, which nats.go's
// Connect does not take, and binds the socket to it for the handshake.
type natsDialer struct {
	ctx     context.Context
	release func() bool
	err     error // the last failed dial's
}

func (d *natsDialer) Dial(network, address string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(d.ctx, network, address)
	if err != nil {
		d.err = err
		return nil, err
	}
	d.release = bind(d.ctx, c)
	return c, nil
}

// dialNATS connects and logs in under ctx.
func dialNATS(ctx context.Context, url string) (conn, error) {
	timeout := natsTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	if timeout <= 0 {
		return nil, ctx.Err()
	}
	d := &natsDialer{ctx: ctx}
	nc, err := nats.Connect(url,
		nats.Name("vitals"),
		nats.SetCustomDialer(d),
		nats.SkipHostLookup(), // the dialer looks the host up, under ctx
		nats.Timeout(timeout),
		nats.NoReconnect(),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}), // not to stderr
	)
	if d.release != nil && !d.release() {
		if err == nil {
			nc.Close()
		}
		return nil, fmt.Errorf("NATS handshake: no answer: %w", ctx.Err())
	}
	switch {
	case errors.Is(err, nats.ErrNoServers) && d.err != nil:
		// nats.go says "no servers available for connection" for a refused
		// connection; the dial's own error says which and why.
		return nil, d.err
	case errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked):
		return nil, fmt.Errorf("authentication failed: %w", err)
	case err != nil && d.release != nil:
		return nil, fmt.Errorf("NATS handshake: %w", err)
	case err != nil:
		return nil, err
	}
	return natsConn{nc}, nil
}

// natsTimeout bounds a connection's setup, or a flush, when the run's
// context has no deadline (nats.go insists on one): nats.go's default.
const natsTimeout = nats.DefaultTimeout

type natsConn struct{ *nats.Conn }

func (c natsConn) roundTrip(ctx context.Context) (health.Observation, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, natsTimeout)
		defer cancel()
	}
	start := time.Now()
	if err := c.FlushWithContext(ctx); err != nil {
		return health.Observation{}, fmt.Errorf("flush: %w", err)
	}
	return latency("flush", start), nil
}

func (c natsConn) broken(error) bool { return c.IsClosed() || !c.IsConnected() }

func (c natsConn) close() error {
	c.Close()
	return nil
}
