package deps

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// RedisSpec is a Redis check: a connection that answers PING.
type RedisSpec struct {
	// URL is redis://, rediss:// (TLS) or unix://, as go-redis reads it:
	// redis://USER:PASSWORD@HOST:PORT/DB, with USER empty for a server with
	// requirepass only (redis://:PASSWORD@HOST:PORT). Required.
	URL string
}

func init() {
	// go-redis logs a failed dial to stderr; the check's output says it
	// already, where it belongs.
	logging.Disable()
}

// Redis builds a Redis probe. Its client (go-redis, with one connection) is
// kept between runs; each run sends PING, after AUTH and the TLS handshake
// that the URL asks for when the connection is new. A wrong password fails
// with the server's words after "authentication failed: ", as in
// `authentication failed: WRONGPASS invalid username-password pair or user
// is disabled.`. The observed value is the round trip of PING in
// milliseconds, not counting the connection's setup.
func Redis(s RedisSpec) (*probe.Prober, error) {
	_, shown, secret, err := parseURL("redis", s.URL, "redis", "rediss", "unix")
	if err != nil {
		return nil, err
	}
	opts, err := redis.ParseURL(s.URL)
	if err != nil {
		return nil, probe.Invalid("redis", "url: %w", secret.hide(err))
	}
	secret = secret.add(opts.Password)
	// The run's context bounds every phase: the dial, the TLS handshake,
	// AUTH and PING.
	opts.ContextTimeoutEnabled = true
	// A run tries one connection, once: the probe itself dials again when a
	// kept connection broke, and a retry with backoff would blur what one
	// run saw.
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	// Two, though runs use one connection at a time: go-redis starts dialling
	// in the background once PoolSize dials in a row have failed, and a
	// client is dropped after its first failure, before that can happen.
	opts.PoolSize = 2
	opts.MinIdleConns = 0 // nothing dialled ahead of a run, whatever the URL says
	// Only what the check needs on a new connection: HELLO (with AUTH) and
	// SELECT, not CLIENT SETINFO or maintenance notifications.
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	dial := func(context.Context) (conn, error) {
		return newRedisConn(*opts), nil // it dials on the first PING
	}
	return prober("redis", shown, newKeeper(secret, dial)), nil
}

type redisConn struct {
	*redis.Client
	// Connections dialled, and those set up (HELLO, AUTH, SELECT): to tell a
	// failed setup from a failed PING.
	dialled, setUp atomic.Int64
}

func newRedisConn(opts redis.Options) *redisConn {
	c := &redisConn{}
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := redisDial(ctx, network, addr, opts.TLSConfig)
		if err == nil {
			c.dialled.Add(1)
		}
		return nc, err
	}
	opts.OnConnect = func(context.Context, *redis.Conn) error {
		c.setUp.Add(1)
		return nil
	}
	c.Client = redis.NewClient(&opts)
	return c
}

// redisDial dials under the context go-redis gives, the run's, including
// the TLS handshake, which go-redis's own dialer does under its DialTimeout
// only.
func redisDial(ctx context.Context, network, addr string, tlsConfig *tls.Config) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil || tlsConfig == nil {
		return c, err
	}
	tc := tls.Client(c, tlsConfig)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

func (c *redisConn) roundTrip(ctx context.Context) (health.Observation, error) {
	dialled := c.dialled.Load()
	start := time.Now()
	err := c.Ping(ctx).Err()
	if err == nil && c.dialled.Load() != dialled {
		// go-redis set a connection up for that PING: time one on it.
		start = time.Now()
		err = c.Ping(ctx).Err()
	}
	if err != nil {
		return health.Observation{}, c.pingError(err)
	}
	return latency("PONG", start), nil
}

// broken: an answer from the server (an error reply) leaves the client
// usable; anything else (a failed dial, a connection cut) makes it
// suspect, and a new client starts afresh, without go-redis's memory of
// failed dials.
func (c *redisConn) broken(err error) bool {
	var reply redis.Error
	return err != nil && !errors.As(err, &reply)
}

func (c *redisConn) close() error { return c.Close() }

// pingError says where err, the error of a PING, happened: in the setup of
// a new connection or in the PING itself. A failed dial says so already.
func (c *redisConn) pingError(err error) error {
	err = redisError(err)
	var reply redis.Error
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial", errors.As(err, &reply):
		return err
	case c.dialled.Load() > c.setUp.Load():
		return fmt.Errorf("connection setup (HELLO, AUTH): %w", err)
	}
	return fmt.Errorf("PING: %w", err)
}

// redisError says "authentication failed" before the server's refusal of a
// password, which it words as WRONGPASS or NOAUTH (or, before Redis 6,
// "ERR invalid password").
func redisError(err error) error {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return err
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "WRONGPASS") || strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "ERR invalid password") {
		return fmt.Errorf("authentication failed: %w", err)
	}
	return err
}
