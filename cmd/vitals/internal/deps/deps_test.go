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

	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps/depstest"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// fixture is what the tests need to know of one kind: its server, and its
// prober.
type fixture struct {
	depstest.Kind
	build  func(url string) (*probe.Prober, error)
	passes *regexp.Regexp // the output of a run that passed
}

var fixtures = []fixture{postgresFixture, redisFixture, amqpFixture, natsFixture}

// each runs test for every kind, side by side: their servers start at once.
func each(t *testing.T, test func(t *testing.T, f fixture)) {
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			test(t, f)
		})
	}
}

func (f fixture) prober(t *testing.T, url string) *probe.Prober {
	t.Helper()
	p, err := f.build(url)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
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
		s := f.Shared(t)
		proxy := newCountingProxy(t, s.Addr)
		p := f.prober(t, f.URL(proxy.addr(), f.Password))
		if got := p.String(); strings.Contains(got, f.Password) || !strings.Contains(got, "xxxxx") || !strings.HasPrefix(got, f.Name+" ") {
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
		s := f.Shared(t)
		p := f.prober(t, f.URL(s.Addr, f.Password))
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
		p := f.prober(t, f.URL(closedPort(t), f.Password))
		r := mustFail(t, p, "run", "connection refused", f.Password)
		if r.Duration > time.Second {
			t.Errorf("a refused connection took %v to fail", r.Duration)
		}
		// And again, from a probe whose last run failed.
		mustFail(t, p, "second run", "connection refused", f.Password)
	})
}

func TestAWrongPasswordFailsAuthenticationWithoutShowingIt(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		s := f.Shared(t)
		const wrong = "wrong-Pw-0815"
		p := f.prober(t, f.URL(s.Addr, wrong))
		if strings.Contains(p.String(), wrong) {
			t.Errorf("String() = %q shows the password", p.String())
		}
		mustFail(t, p, "run", "(?i)authentication failed", wrong, f.Password)
	})
}

func TestAServerStoppedMidRunFailsTheCheckUntilItIsBack(t *testing.T) {
	each(t, func(t *testing.T, f fixture) {
		s := f.Private(t)
		p := f.prober(t, f.URL(s.Addr, f.Password))
		f.mustPass(t, p, "before the stop")

		s.Stop()
		mustFail(t, p, "while stopped", ".", f.Password)
		mustFail(t, p, "while still stopped", "connection refused", f.Password)

		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		f.mustPass(t, p, "once started again")

		// A restart between two runs leaves the probe a connection that the
		// server closed: the run dials again and passes.
		s.Stop()
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		f.mustPass(t, p, "after a restart between runs")
	})
}

func TestAServerThatNeverAnswersFailsAtTheTimeout(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			addr := probetest.SilentListener(t).Addr().String()
			p := f.prober(t, f.URL(addr, f.Password))
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
				if strings.Contains(r.Output, f.Password) {
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
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
