// Package deps has the check kinds that speak a dependency's own protocol
// through its client library: postgres (pgx), redis (go-redis), amqp
// (amqp091-go) and nats (nats.go). Each kind is a Spec struct and a
// constructor that validates it, as in package probe, and returns a
// *probe.Prober, the one shape of every kind: a health.Checker and
// health.Measurer whose observed value is the latency of one round trip in
// milliseconds (or what the kind's spec asks it to count, as an AMQP
// queue's consumers), and whose Close closes the connection it keeps.
//
// Unlike probe's kinds, which open a fresh connection every run, a prober
// keeps its connection between runs: it dials on its first run, reuses the
// connection after that, and dials again when a run finds it broken, so a
// check every few seconds does not cost a handshake (TLS, SCRAM, AMQP) each
// time. A connection kept from an earlier run that breaks during a run (the
// server restarted since) is dialled again in that same run, so that the
// run judges the server as it is now and not a socket it closed long ago.
//
// Secrets never show: String gives the URL with its password as "xxxxx",
// and every output has the password (from the URL, or from wherever the
// client found it) replaced by the same.
//
// Package deps lives in module cmd/vitals, since the root module, which has
// no third-party dependency, cannot carry these clients.
package deps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// prober is a dependency's check as the one probe shape: kind names it
// (postgres, redis, amqp, nats), shown is the URL without its password (its
// String is "KIND URL"), and Close closes the connection kept, after which a
// run dials again. Runs take turns on the one connection, so the prober is
// safe for concurrent use.
func prober(kind, shown string, keep *keeper) *probe.Prober {
	return probe.New(kind, kind+" "+shown, keep.run, keep.close)
}

// conn is a connection to a dependency, kept between runs.
type conn interface {
	// roundTrip does the kind's exchange on the connection (SELECT 1, PING,
	// a channel opened, used and closed, a flush) under ctx.
	roundTrip(ctx context.Context) (health.Observation, error)
	// broken reports whether the connection cannot be used again: it is
	// known to be closed, or err, the error of a round trip (nil before
	// one), broke it.
	broken(err error) bool
	// close releases the connection. It may wait on the network, briefly.
	close() error
}

// keeper holds one kind's connection between runs and runs one round trip
// at a time on it.
type keeper struct {
	dial   func(ctx context.Context) (conn, error)
	secret secrets
	turn   chan struct{} // holds a token while a run uses c
	c      conn          // nil until the first run, and after a run found it broken
}

func newKeeper(s secrets, dial func(ctx context.Context) (conn, error)) *keeper {
	return &keeper{dial: dial, secret: s, turn: make(chan struct{}, 1)}
}

// run does one round trip on the kept connection, dialling one first when
// there is none, and reports what it observed or what went wrong, with the
// secrets removed.
func (k *keeper) run(ctx context.Context) (health.Observation, error) {
	// Waiting for a concurrent run is bounded by ctx too.
	select {
	case k.turn <- struct{}{}:
	case <-ctx.Done():
		return health.Observation{}, ctx.Err()
	}
	defer func() { <-k.turn }()

	if k.c != nil && k.c.broken(nil) {
		k.discard()
	}
	kept := k.c != nil
	obs, err := k.try(ctx)
	if err != nil && kept && k.c == nil && ctx.Err() == nil {
		// The connection from an earlier run broke: the server may have
		// restarted since. A fresh one says how the server is now.
		obs, err = k.try(ctx)
	}
	return obs, k.secret.hide(err)
}

// try does one round trip, dialling first when no connection is kept, and
// drops the connection when the round trip broke it or was cut short by ctx
// (which leaves it in an unknown state, such as a query still running),
// unless what ctx cut short was a wait on another client (unanswered).
func (k *keeper) try(ctx context.Context) (health.Observation, error) {
	if k.c == nil {
		c, err := k.dial(ctx)
		if err != nil {
			return health.Observation{}, err
		}
		k.c = c
	}
	obs, err := k.c.roundTrip(ctx)
	if err != nil && (ctx.Err() != nil && !errors.As(err, new(unanswered)) || k.c.broken(err)) {
		k.discard()
	}
	return obs, err
}

// unanswered is the error of a round trip that ctx ended while it waited
// on another client than the server, such as a service that owes a ping's
// answer: the connection is as good as it was, and is kept.
type unanswered struct{ error }

func (e unanswered) Unwrap() error { return e.error }

// discard drops the kept connection, closing it in the background: a
// broken connection's close may wait on the network, and the run has its
// answer already.
func (k *keeper) discard() {
	c := k.c
	k.c = nil
	go c.close()
}

// close closes the kept connection, after any run in progress.
func (k *keeper) close() error {
	k.turn <- struct{}{}
	defer func() { <-k.turn }()
	if k.c == nil {
		return nil
	}
	c := k.c
	k.c = nil
	return k.secret.hide(c.close())
}

// latency is the observation of a round trip that began at start: its
// milliseconds to the microsecond, and a message saying what answered.
func latency(what string, start time.Time) health.Observation {
	d := time.Since(start)
	return health.Observation{
		Value:   float64(d.Microseconds()) / 1000,
		Unit:    "ms",
		Message: fmt.Sprintf("%s in %v", what, d.Round(time.Microsecond)),
	}
}

// parseURL reads a kind's URL, which must have one of schemes, with // and
// a port from 1 to 65535 if any, and returns it with the URL as shown (its
// password replaced by "xxxxx") and the secrets it holds. Errors never quote
// the URL, which may hold a password.
func parseURL(kind, raw string, schemes ...string) (*url.URL, string, secrets, error) {
	if raw == "" {
		return nil, "", nil, probe.Invalid(kind, "url is required (%s://…)", schemes[0])
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which url.Error quotes
		}
		return nil, "", nil, probe.Invalid(kind, "url: %v", err)
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		return nil, "", nil, probe.Invalid(kind, "url: scheme %q is not %s", u.Scheme, orList(schemes))
	}
	if u.Opaque != "" {
		// redis:USER:PASSWORD@HOST has no host for the client libraries:
		// go-redis and amqp091-go would check localhost, without its credentials.
		return nil, "", nil, probe.Invalid(kind, "url: write %s://…", u.Scheme)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, "", nil, probe.Invalid(kind, "url: port %q is not a number from 1 to 65535", port)
		}
	}
	var s secrets
	if p, set := u.User.Password(); set {
		s = s.add(p)
	}
	shown := *u
	// A password in the query (libpq's ?password=) is hidden too; the rest
	// of the query is shown as written.
	pairs := strings.Split(u.RawQuery, "&")
	for i, pair := range pairs {
		key, value, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil && strings.Contains(strings.ToLower(k), "password") {
			v, _ := url.QueryUnescape(value)
			s = s.add(v).add(value)
			pairs[i] = key + "=" + redacted
		}
	}
	shown.RawQuery = strings.Join(pairs, "&")
	return u, shown.Redacted(), s, nil
}

// redacted stands where a secret was, as url.URL.Redacted writes it.
const redacted = "xxxxx"

// orList writes "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// minSecret is the shortest secret hidden wherever it appears, as in the
// configuration's redaction.
const minSecret = 4

// secrets are the strings that no output may contain: passwords, tokens.
type secrets []string

// add adds s, and the forms a URL writes it in, unless s is empty.
func (ss secrets) add(s string) secrets {
	if s == "" {
		return ss
	}
	userinfo := strings.TrimPrefix(url.UserPassword("", s).String(), ":")
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s), userinfo}
	if len(s) < minSecret {
		// Masked wherever it appears, a password of a few characters would
		// garble every output ("127.0.0.1" with a password "1"): hide it only
		// where a URL writes it.
		forms = []string{":" + userinfo + "@", "password=" + url.QueryEscape(s)}
	}
	for _, form := range forms {
		if !slices.Contains(ss, form) {
			ss = append(ss, form)
		}
	}
	return ss
}

// hide returns err with every secret in its text replaced by "xxxxx". The
// result unwraps to err, for errors.Is, but its text is the safe one.
func (ss secrets) hide(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	safe := text
	for _, s := range ss {
		safe = strings.ReplaceAll(safe, s, redacted)
	}
	if safe == text {
		return err
	}
	return reworded(safe, err)
}

// reworded is an error with text in place of err's own, that unwraps to err.
func reworded(text string, err error) error { return &rewordedError{text, err} }

type rewordedError struct {
	text string
	err  error
}

func (e *rewordedError) Error() string { return e.text }
func (e *rewordedError) Unwrap() error { return e.err }

// bind ties a connection being set up to ctx: ctx's deadline is conn's, and
// ctx ending closes conn, which unblocks a client library's handshake that
// takes no context. Once the handshake is done, release unties conn and
// reports whether ctx was still on. When it was not, conn is closed, and
// whatever the handshake made of that (amqp091-go takes a socket closed
// after the login for a refused login) is not what happened.
func bind(ctx context.Context, conn net.Conn) (release func() bool) {
	deadline, hasDeadline := ctx.Deadline()
	if hasDeadline {
		conn.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	return func() bool {
		stopped := stop()
		if !stopped || hasDeadline && !time.Now().Before(deadline) {
			// The socket's deadline fires at ctx's, and may have ended the
			// handshake a moment before ctx's own timer fired.
			conn.Close()
			<-ctx.Done()
			return false
		}
		conn.SetDeadline(time.Time{})
		return true
	}
}
