package deps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// PostgresSpec is a PostgreSQL check: a connection that answers SELECT 1.
type PostgresSpec struct {
	// URL is postgres:// or postgresql://, as libpq reads it:
	// postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…; what it leaves
	// out comes from the PG* environment variables and ~/.pgpass, as in
	// psql. With no sslmode, TLS is tried first and plain TCP after
	// (libpq's "prefer"). Required.
	URL string
}

// Postgres builds a PostgreSQL probe. Its connection (pgx's pgconn) is kept
// between runs; each run sends SELECT 1 in the simple query protocol, one
// round trip, which works through pgbouncer in any pooling mode too. A
// failure is pgx's error on one line, such as
//
//	failed to connect to `user=vitals database=app`: 127.0.0.1:5432 (127.0.0.1): failed SASL auth: FATAL: password authentication failed for user "vitals" (SQLSTATE 28P01)
//
// with the password never in it. The observed value is the round trip of
// SELECT 1 in milliseconds, not counting the connection's setup.
func Postgres(s PostgresSpec) (*probe.Prober, error) {
	_, shown, secret, err := parseURL("postgres", s.URL, "postgres", "postgresql")
	if err != nil {
		return nil, err
	}
	cfg, err := pgconn.ParseConfig(s.URL)
	if err != nil {
		return nil, probe.Invalid("postgres", "url: %w", secret.hide(err))
	}
	// The password may come from PGPASSWORD or ~/.pgpass: hide it too.
	secret = secret.add(cfg.Password)
	dial := func(ctx context.Context) (conn, error) {
		c, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, pgConnectError(err)
		}
		return pgConn{c}, nil
	}
	return prober("postgres", shown, newKeeper(secret, dial)), nil
}

type pgConn struct{ *pgconn.PgConn }

func (c pgConn) roundTrip(ctx context.Context) (health.Observation, error) {
	start := time.Now()
	if _, err := c.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
		return health.Observation{}, err
	}
	return latency("SELECT 1", start), nil
}

// broken: pgconn closes a connection on any error that leaves it unusable
// (a network error, a FATAL from the server), and keeps it after an
// ordinary one.
func (c pgConn) broken(error) bool { return c.IsClosed() }

func (c pgConn) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return c.Close(ctx)
}

// closeTimeout bounds the goodbye to a server (a Terminate message, a
// connection.close) when a kept connection is let go: it is a courtesy.
const closeTimeout = time.Second

// pgConnectError is err, pgx's error for a connection that failed, on one
// line. pgx lists every attempt, one a line: for libpq's sslmode "prefer",
// one with TLS and one without, at each address of the host. The list
// keeps those that say something: not a TLS attempt that the server refused
// before a plain one was tried, nor the attempts after the first that the
// deadline cut short, which it cut short too.
func pgConnectError(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	joined, ok := ce.Unwrap().(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	attempts := joined.Unwrap()
	var kept []string
	cutShort := false
	for i, a := range attempts {
		text := a.Error()
		switch {
		case strings.HasSuffix(text, "server refused TLS connection") && i < len(attempts)-1:
			continue
		case errors.Is(a, context.DeadlineExceeded) || errors.Is(a, context.Canceled):
			if cutShort {
				continue
			}
			cutShort = true
		}
		if !slices.Contains(kept, text) {
			kept = append(kept, text)
		}
	}
	return reworded(fmt.Sprintf("failed to connect to `user=%s database=%s`: %s",
		ce.Config.User, ce.Config.Database, strings.Join(kept, "; ")), err)
}
