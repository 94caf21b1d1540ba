package api

import (
	"context"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/time/rate"
)

// Limit is a rate of requests: Rate a second on average, with bursts of up
// to Burst at once (a token bucket). The zero Limit takes none; see Limits.
type Limit struct {
	Rate  float64
	Burst int
}

// Limits bound how fast the API takes what adds to the event log: notices,
// and beats that say something (a status other than a plain pass, an
// output, a value). Beyond either limit of a kind, per client and overall,
// a request is answered 429 with Retry-After, and records nothing. A client
// is an address on TCP, a process group on the unix socket: a shell loop
// that runs vitals notify again and again is one client, as is a workload
// (vitals starts each service in a group of its own), and a hook's command
// another.
//
// Plain beats are never limited: one changes nothing but a time (a few
// atomic operations), and answering it 429 would cost as much as taking it.
type Limits struct {
	NoticesPerClient, Notices Limit
	ReportsPerClient, Reports Limit
}

// DefaultLimits are well above what a program tells its manager (a notice
// when its configuration reloads, a report when its loop sees a problem),
// and far below a flood: at most 50 notices and 100 reports a second reach
// the log, so that the hooks keep up, and one client that floods leaves
// room for the others.
var DefaultLimits = Limits{
	NoticesPerClient: Limit{Rate: 10, Burst: 50},
	Notices:          Limit{Rate: 50, Burst: 100},
	ReportsPerClient: Limit{Rate: 20, Burst: 40},
	Reports:          Limit{Rate: 100, Burst: 200},
}

// maxClients bounds the clients a limiter remembers: beyond it, those whose
// bucket is full again are forgotten, and while none is, a new client
// shares one bucket with the other newcomers.
const maxClients = 1024

// limiter is one kind's limits: a bucket per client and one for all.
type limiter struct {
	per   Limit
	all   *rate.Limiter
	mu    sync.Mutex
	seen  map[string]*rate.Limiter
	extra *rate.Limiter // the newcomers' while seen is full
}

func newLimiter(per, all Limit) *limiter {
	return &limiter{per: per, all: rate.NewLimiter(rate.Limit(all.Rate), all.Burst),
		seen: map[string]*rate.Limiter{}, extra: rate.NewLimiter(rate.Limit(per.Rate), per.Burst)}
}

// allow takes one request of client at now, or says how long until one
// would be taken.
func (l *limiter) allow(client string, now time.Time) (bool, time.Duration) {
	mine := l.bucket(client, now)
	r1 := mine.ReserveN(now, 1)
	r2 := l.all.ReserveN(now, 1)
	d1, d2 := delay(r1, now), delay(r2, now)
	if d1 == 0 && d2 == 0 {
		return true, 0
	}
	// Neither bucket pays for a request that is not taken.
	r1.CancelAt(now)
	r2.CancelAt(now)
	return false, max(d1, d2)
}

// delay is how long until r's request could go; a bucket that can never
// take it (a zero Limit) waits a minute, the answer's longest Retry-After.
func delay(r *rate.Reservation, now time.Time) time.Duration {
	if !r.OK() {
		return time.Minute
	}
	return r.DelayFrom(now)
}

func (l *limiter) bucket(client string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.seen[client]; ok {
		return b
	}
	if len(l.seen) >= maxClients {
		for c, b := range l.seen {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.seen, c)
			}
		}
		if len(l.seen) >= maxClients {
			return l.extra
		}
	}
	b := rate.NewLimiter(rate.Limit(l.per.Rate), l.per.Burst)
	l.seen[client] = b
	return b
}

// limited answers 429 with Retry-After, and reports true, when the request
// is beyond l's limits; what says what was refused.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, l *limiter, what string) bool {
	ok, wait := l.allow(clientOf(r), time.Now())
	if ok {
		return false
	}
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, "too many %s: try again in %ds (at most %v a second from one client, %v from all)",
		what, secs, l.per.Rate, l.all.Limit())
	return true
}

// peerKey is the context key of a connection's client on the unix socket.
type peerKey struct{}

// ConnContext names the client of a connection on the unix socket by its
// process group (its process's, when the group cannot be read), for the
// API's limits: give it to http.Server.ConnContext. A TCP client is named by
// its address without it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	for {
		inner, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		c = inner.NetConn()
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ctx
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return ctx
	}
	var cred *syscall.Ucred
	raw.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if err != nil || cred == nil {
		return ctx
	}
	if pgid, err := syscall.Getpgid(int(cred.Pid)); err == nil {
		return context.WithValue(ctx, peerKey{}, "process group "+strconv.Itoa(pgid))
	}
	return context.WithValue(ctx, peerKey{}, "process "+strconv.Itoa(int(cred.Pid)))
}

// clientOf names the client of r: its process on the unix socket, its
// address (without the port) on TCP.
func clientOf(r *http.Request) string {
	if p, ok := r.Context().Value(peerKey{}).(string); ok {
		return p
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
