package servers

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// silentGrace is how long a connection accepted with no request yet is safe
// from eviction: a client's request is read within milliseconds of its accept
// (it was often sent before), so one that has sent nothing in half a second is
// holding a place, not about to use it. Without the grace, a flood that churns
// faster than a loaded machine schedules the fresh connection's reader would
// evict the fresh probe itself; with it, a cap held by silent ones still
// gives its oldest place to a new connection within half a second, well
// within the kubelet's 1s probe timeout.
const silentGrace = 500 * time.Millisecond

// Listener caps the connections open at once on the listener it wraps. Make
// one with Limit.
//
// Accept takes the next connection the kernel holds, then waits for a place:
// at the cap it closes the connection that has been idle longest and takes
// its place, and when none is idle it waits for one to close or go idle.
// Idle is what an HTTP server reports through ConnState: between requests on
// a keep-alive connection, or accepted with no whole request header (net/http
// reports a connection active once it has read one) for
// silentGrace. Meanwhile the next connections wait in the kernel's backlog,
// which holds or refuses them, and use no descriptor of the process: the
// listener holds at most its cap plus the one in hand.
//
// A new client is worth more than an idle one: evicting the longest-idle
// connection is what lets a fresh probe through while clients hold the others
// open, whether they hold them between requests or send nothing. The idle
// one's client sees its keep-alive connection closed, as it does at
// IdleTimeout, and retries on a new one.
type Listener struct {
	net.Listener
	name string
	max  int
	// open holds one token per connection open.
	open chan struct{}
	// wake tells a waiting Accept that a connection went idle.
	wake    chan struct{}
	done    chan struct{}
	closing sync.Once
	evicted atomic.Uint64

	mu     sync.Mutex
	idle   connList // between requests, longest-idle first
	silent connList // accepted with no request yet, oldest first
}

// Limit returns ln with at most n connections open at once (at least 1);
// name says which listener it is in the metrics (probe, api, grpc).
func Limit(ln net.Listener, name string, n int) *Listener {
	n = max(n, 1)
	return &Listener{Listener: ln, name: name, max: n,
		open: make(chan struct{}, n), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept returns the next connection once it has a place under the cap.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		select {
		case l.open <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		default:
		}
		evicted, retry := l.evict(time.Now())
		if evicted {
			continue
		}
		var eligible <-chan time.Time // when a silent connection may be evicted
		if retry > 0 {
			eligible = time.After(retry)
		}
		select {
		case l.open <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		case <-l.wake:
		case <-eligible:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// Close stops Accept, waiting or not, and closes the listener. The
// connections open stay open: their server closes them.
func (l *Listener) Close() error {
	l.closing.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// ConnState tells the listener which connections are idle: give it to
// http.Server.ConnState. Without it (gRPC) no connection is known idle, and
// Accept at the cap waits for one to close.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok { // a TLS listener over l
		nc = tc.NetConn()
	}
	c, ok := nc.(*conn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.unlist()
	if c.closed {
		return
	}
	switch state {
	case http.StateNew:
		c.list(&l.silent)
	case http.StateIdle:
		c.list(&l.idle)
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// evict closes the connection idle longest: between requests, or silent for
// silentGrace. When there is none, retry is how long until the oldest silent
// one may be evicted (0 when there is no silent one).
func (l *Listener) evict(now time.Time) (evicted bool, retry time.Duration) {
	l.mu.Lock()
	var pick *conn
	if c := l.silent.front(); c != nil {
		if age := now.Sub(c.since); age >= silentGrace {
			pick = c
		} else {
			retry = silentGrace - age
		}
	}
	if c := l.idle.front(); c != nil {
		if pick == nil || c.since.Before(pick.since) {
			pick = c
		}
	}
	if pick == nil {
		l.mu.Unlock()
		return false, retry
	}
	pick.unlist()
	l.mu.Unlock()
	l.evicted.Add(1)
	pick.Close()
	return true, 0
}

// Open is how many connections are open now.
func (l *Listener) Open() int { return len(l.open) }

// Max is the cap.
func (l *Listener) Max() int { return l.max }

// Evicted counts the idle connections closed to make room for new ones.
func (l *Listener) Evicted() uint64 { return l.evicted.Load() }

// conn gives its place back when closed, once.
type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
	// Under l.mu: the list it is on (idle or silent), its neighbours there,
	// and since when; closed keeps a late ConnState from listing it again.
	on         *connList
	prev, next *conn
	since      time.Time
	closed     bool
}

// NetConn is the connection c wraps, as tls.Conn's: what asks the kernel
// of the connection (its peer's credentials) reads it.
func (c *conn) NetConn() net.Conn { return c.Conn }

// list puts c at the back of on, from now. The caller holds l.mu.
func (c *conn) list(on *connList) {
	c.on, c.since = on, time.Now()
	c.prev, c.next = on.tail, nil
	if on.tail != nil {
		on.tail.next = c
	} else {
		on.head = c
	}
	on.tail = c
	on.n++
}

// unlist takes c off its list, if it is on one. The caller holds l.mu.
func (c *conn) unlist() {
	on := c.on
	if on == nil {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		on.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		on.tail = c.prev
	}
	on.n--
	c.on, c.prev, c.next = nil, nil, nil
}

// connList is a list of connections, oldest first, linked through the
// connections themselves: a connection going idle and active again at every
// request of a keep-alive client costs no allocation.
type connList struct {
	head, tail *conn
	n          int
}

func (l *connList) front() *conn { return l.head }

// Len is how many connections are on the list.
func (l *connList) Len() int { return l.n }

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.closed = true
		c.unlist()
		c.l.mu.Unlock()
		<-c.l.open
	})
	return err
}
