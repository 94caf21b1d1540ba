package servers

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Listener caps the connections open at once on the listener it wraps. Make
// one with Limit.
//
// Accept takes the next connection the kernel holds, then waits for a place:
// at the cap it closes the connection that has been idle longest and takes
// its place, and when none is idle it waits for one to close or go idle.
// Idle is what an HTTP server reports through ConnState: between requests on
// a keep-alive connection, or connected with no request yet. Meanwhile the
// next connections wait in the kernel's backlog, which holds or refuses them,
// and use no descriptor of the process: the listener holds at most its cap
// plus the one in hand.
//
// A new client is worth more than an idle one: evicting the longest-idle
// connection is what lets a fresh probe through while clients hold the others
// open, whether they hold them between requests or send nothing. The idle
// one's client sees its keep-alive connection closed, as it does at
// IdleTimeout, and retries on a new one; a fresh client's request is read as
// soon as it is accepted, so it is the last to be evicted.
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

	mu   sync.Mutex
	idle list.List // of *conn, longest-idle first
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
		if l.evictIdle() {
			continue
		}
		select {
		case l.open <- struct{}{}:
			return &conn{Conn: c, l: l}, nil
		case <-l.wake:
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

// ConnState tells the listener which connections are idle (StateIdle, or
// StateNew until a request arrives): give it to http.Server.ConnState.
// Without it (gRPC) no connection is known idle, and Accept at the cap waits
// for one to close.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	if (state == http.StateIdle || state == http.StateNew) && !c.closed {
		c.elem = l.idle.PushBack(c)
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// evictIdle closes the longest-idle connection, if there is one.
func (l *Listener) evictIdle() bool {
	l.mu.Lock()
	front := l.idle.Front()
	if front == nil {
		l.mu.Unlock()
		return false
	}
	c := l.idle.Remove(front).(*conn)
	c.elem = nil
	l.mu.Unlock()
	l.evicted.Add(1)
	c.Close()
	return true
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
	// elem is its place in l.idle while idle; closed keeps a late StateIdle
	// from listing it again. Both under l.mu.
	elem   *list.Element
	closed bool
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		c.closed = true
		if c.elem != nil {
			c.l.idle.Remove(c.elem)
			c.elem = nil
		}
		c.l.mu.Unlock()
		<-c.l.open
	})
	return err
}
