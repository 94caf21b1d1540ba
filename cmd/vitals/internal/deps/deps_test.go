package deps_test

import (
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// fixture is what the tests need to know of one kind.
type fixture struct {
	kind     string
	program  func(t *testing.T) string             // the server's program; skips or fails the test when it is missing
	start    func(program string) (*server, error) // runs a server with a password
	url      func(addr, password string) string    // the URL of the server at addr, logging in with password
	password string                                // the password of the server that start runs
	build    func(url string) (*probe.Prober, error)
	passes   *regexp.Regexp // the output of a run that passed
}

var fixtures = []fixture{postgresFixture, redisFixture, amqpFixture, natsFixture}

// each runs test for every kind, side by side: their servers start at once.
func each(t *testing.T, test func(t *testing.T, f fixture)) {
	for _, f := range fixtures {
		t.Run(f.kind, func(t *testing.T) {
			t.Parallel()
			test(t, f)
		})
	}
}

// sharedServer is the kind's server that tests share.
func (f fixture) shared(t *testing.T) *server {
	t.Helper()
	program := f.program(t)
	return share(t, f.kind, func() (*server, error) { return f.start(program) })
}

// private is a server of the kind for this test alone.
func (f fixture) private(t *testing.T) *server {
	t.Helper()
	program := f.program(t)
	return private(t, func() (*server, error) { return f.start(program) })
}

func (f fixture) prober(t *testing.T, url string) *probe.Prober {
	t.Helper()
	p, err := f.build(url)
	if err != nil {
		t.Fatalf("%s: %v", f.kind, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// runTimeout is a generous timeout for runs that must not time out.
const runTimeout = 10 * time.Second

func run(p *probe.Prober) health.Result {
	return health.Run(context.Background(), p, runTimeout)
}

// mustPass runs p and fails the test unless it passes with the kind's output.
func (f fixture) mustPass(t *testing.T, p *probe.Prober, when string) health.Result {
	t.Helper()
	r := run(p)
	if !r.OK || !f.passes.MatchString(r.Output) {
		t.Fatalf("%s: ok %v, output %q; want a pass matching %s", when, r.OK, r.Output, f.passes)
	}
	if _, ok := r.ObservedValue.(float64); !ok || r.ObservedUnit != "ms" {
		t.Fatalf("%s: observed %v %q, want a latency in ms", when, r.ObservedValue, r.ObservedUnit)
	}
	return r
}

// mustFail runs p and fails the test unless it fails saying want (a
// regular expression), without any of secrets in its output.
func mustFail(t *testing.T, p *probe.Prober, when, want string, secrets ...string) health.Result {
	t.Helper()
	r := run(p)
	if r.OK || !regexp.MustCompile(want).MatchString(r.Output) {
		t.Fatalf("%s: ok %v, output %q; want a failure saying %s", when, r.OK, r.Output, want)
	}
	t.Logf("%s: %s", when, r.Output)
	for _, s := range secrets {
		if strings.Contains(r.Output, s) {
			t.Fatalf("%s: output %q shows the password %q", when, r.Output, s)
		}
	}
	return r
}

func TestAServerThatAnswersPassesOnOneKeptConnection(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		s := f.shared(t)
		proxy := newCountingProxy(t, s.addr)
		p := f.prober(t, f.url(proxy.addr(), f.password))
		if got := p.String(); strings.Contains(got, f.password) || !strings.Contains(got, "xxxxx") || !strings.HasPrefix(got, f.kind+" ") {
			t.Errorf("String() = %q, want the kind and the URL with its password as xxxxx", got)
		}
		f.mustPass(t, p, "first run")
		dialled := proxy.connections()
		for range 3 {
			f.mustPass(t, p, "a later run")
		}
		if got := proxy.connections(); got != dialled {
			t.Errorf("the first run opened %d connections, and three later runs %d more; want none: the connection is kept", dialled, got-dialled)
		}
	})
}

func TestRunsAtOnceTakeTurnsOnTheConnection(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		s := f.shared(t)
		p := f.prober(t, f.url(s.addr, f.password))
		var wg sync.WaitGroup
		results := make(chan health.Result, 12)
		for range 4 {
			wg.Go(func() {
				for range 3 {
					results <- run(p)
				}
			})
		}
		wg.Wait()
		close(results)
		for r := range results {
			if !r.OK || !f.passes.MatchString(r.Output) {
				t.Errorf("ok %v, output %q; want a pass", r.OK, r.Output)
			}
		}
	})
}

func TestARefusedConnectionFailsSayingSo(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		p := f.prober(t, f.url(closedPort(t), f.password))
		r := mustFail(t, p, "run", "connection refused", f.password)
		if r.Duration > time.Second {
			t.Errorf("a refused connection took %v to fail", r.Duration)
		}
		// And again, from a probe whose last run failed.
		mustFail(t, p, "second run", "connection refused", f.password)
	})
}

func TestAWrongPasswordFailsAuthenticationWithoutShowingIt(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		s := f.shared(t)
		const wrong = "wrong-Pw-0815"
		p := f.prober(t, f.url(s.addr, wrong))
		if strings.Contains(p.String(), wrong) {
			t.Errorf("String() = %q shows the password", p.String())
		}
		mustFail(t, p, "run", "(?i)authentication failed", wrong, f.password)
	})
}

func TestAServerStoppedMidRunFailsTheCheckUntilItIsBack(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		s := f.private(t)
		p := f.prober(t, f.url(s.addr, f.password))
		f.mustPass(t, p, "before the stop")

		s.stop()
		mustFail(t, p, "while stopped", ".", f.password)
		mustFail(t, p, "while still stopped", "connection refused", f.password)

		if err := s.start(); err != nil {
			t.Fatal(err)
		}
		f.mustPass(t, p, "once started again")

		// A restart between two runs leaves the probe a connection that the
		// server closed: the run dials again and passes.
		s.stop()
		if err := s.start(); err != nil {
			t.Fatal(err)
		}
		f.mustPass(t, p, "after a restart between runs")
	})
}

func TestAServerThatNeverAnswersFailsAtTheTimeout(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.kind, func(t *testing.T) {
			t.Parallel()
			addr := probetest.SilentListener(t).Addr().String()
			p := f.prober(t, f.url(addr, f.password))
			const timeout = 300 * time.Millisecond
			// Timing on a busy machine varies: one of three tries must be
			// on time.
			var tries []string
			for range 3 {
				done := make(chan health.Result, 1)
				start := time.Now()
				go func() { done <- health.Run(context.Background(), p, timeout) }()
				var r health.Result
				select {
				case r = <-done:
				case <-time.After(5 * time.Second):
					t.Fatalf("the run did not return within 5s of its start; timeout %v", timeout)
				}
				took := time.Since(start)
				if r.OK || !strings.Contains(r.Output, "timed out") {
					t.Fatalf("ok %v, output %q; want a failure saying it timed out", r.OK, r.Output)
				}
				if strings.Contains(r.Output, f.password) {
					t.Fatalf("output %q shows the password", r.Output)
				}
				if took >= timeout && took <= timeout+100*time.Millisecond {
					t.Logf("returned after %v: %s", took, r.Output)
					return
				}
				tries = append(tries, took.String())
			}
			t.Fatalf("with timeout %v, runs returned after %s; want one within [%v, %v]",
				timeout, strings.Join(tries, ", "), timeout, timeout+100*time.Millisecond)
		})
	}
}

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return loopback(port)
}

// countingProxy forwards TCP connections to a server and counts them.
type countingProxy struct {
	l     net.Listener
	count atomic.Int64
}

func newCountingProxy(t *testing.T, to string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{l: l}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.count.Add(1)
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			open = append(open, c, s)
			mu.Unlock()
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			wg.Go(func() { pipe(s, c) })
			wg.Go(func() { pipe(c, s) })
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return p
}

func (p *countingProxy) addr() string     { return p.l.Addr().String() }
func (p *countingProxy) connections() int { return int(p.count.Load()) }
