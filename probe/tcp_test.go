package probe_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
	"github.com/vitals-dev/vitals/probe/probetest"
)

// measureTCP builds a TCP probe and runs it once, as a Monitor would.
func measureTCP(t *testing.T, spec probe.TCPSpec, timeout time.Duration) health.Result {
	t.Helper()
	p, err := probe.TCP(spec)
	if err != nil {
		t.Fatalf("TCP(%+v): %v", spec, err)
	}
	return health.Run(context.Background(), p, timeout)
}

// serveTCP listens on a free local port and serves each connection with
// handle, closing it after. The test's cleanup closes the listener and every
// connection, and waits for the handlers.
func serveTCP(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		conns  []net.Conn
		closed bool
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed { // accepted as the test ended
				mu.Unlock()
				c.Close()
				return
			}
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				handle(c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// answer is a server that reads what the probe sends, then writes reply and
// closes the connection, or keeps it open until the probe closes it.
func answer(sent string, reply string, keepOpen bool) func(net.Conn) {
	return func(c net.Conn) {
		if _, err := io.ReadFull(c, make([]byte, len(sent))); err != nil {
			return
		}
		io.WriteString(c, reply)
		if keepOpen {
			io.Copy(io.Discard, c)
		}
	}
}

func TestTCPPassesOnceConnectedAndObservesTheConnectTime(t *testing.T) {
	addr := serveTCP(t, func(c net.Conn) {})
	p, err := probe.TCP(probe.TCPSpec{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != "tcp" || p.String() != "tcp "+addr {
		t.Errorf("kind %q, string %q; want tcp and %q", p.Kind(), p.String(), "tcp "+addr)
	}
	r := health.Run(context.Background(), p, 5*time.Second)
	if !r.OK || r.Output != "connected" || r.ObservedUnit != "ms" {
		t.Fatalf("result %+v, want a pass saying it connected, with a latency in ms", r)
	}
	if v, ok := r.ObservedValue.(float64); !ok || v < 0 {
		t.Fatalf("observed %v, want a latency", r.ObservedValue)
	}
}

func TestTCPFailsWithGosDialErrorWhenNothingListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := measureTCP(t, probe.TCPSpec{Address: addr}, 5*time.Second)
	if want := "dial tcp " + addr + ": connect: connection refused"; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure saying %q", r, want)
	}
}

func TestTCPPassesWhenTheAnswerToWhatItSendsContainsExpect(t *testing.T) {
	got := make(chan string, 1)
	addr := serveTCP(t, func(c net.Conn) {
		b := make([]byte, len("PING\r\n"))
		io.ReadFull(c, b)
		got <- string(b)
		io.WriteString(c, "+PONG\r\n")
		io.Copy(io.Discard, c) // a server that keeps the connection open, as redis does
	})
	r := measureTCP(t, probe.TCPSpec{Address: addr, Send: "PING\r\n", Expect: "+PONG"}, 5*time.Second)
	if want := `sent 6 bytes, and the answer contained "+PONG"`; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want a pass saying %q", r, want)
	}
	if s := <-got; s != "PING\r\n" {
		t.Errorf("the server got %q, want PING\\r\\n", s)
	}
}

func TestTCPFailsWhenTheAnswerDoesNotContainExpectAndShowsWhatCame(t *testing.T) {
	noauth := "-NOAUTH Authentication required.\r\n"
	addr := serveTCP(t, answer("PING\r\n", noauth, false))
	r := measureTCP(t, probe.TCPSpec{Address: addr, Send: "PING\r\n", Expect: "+PONG"}, 5*time.Second)
	want := `sent 6 bytes, but the answer did not contain "+PONG" (got "-NOAUTH Authentication required.\r\n")`
	if r.OK || r.Output != want {
		t.Fatalf("result %+v,\nwant a failure saying %s", r, want)
	}

	// A server that keeps the connection open might still send the rest: the
	// probe waits for it until its timeout, and then says what did come.
	addr = serveTCP(t, answer("PING\r\n", noauth, true))
	r = measureTCP(t, probe.TCPSpec{Address: addr, Send: "PING\r\n", Expect: "+PONG"}, 300*time.Millisecond)
	want = `timed out after 300ms: sent 6 bytes, but the answer did not contain "+PONG" (got "-NOAUTH Authentication required.\r\n"): context deadline exceeded`
	if r.OK || r.Output != want {
		t.Fatalf("result %+v,\nwant a failure saying %s", r, want)
	}
}

func TestTCPShowsOnlyTheFirst64BytesOfAWrongAnswer(t *testing.T) {
	addr := serveTCP(t, answer("", strings.Repeat("x", 100), false))
	r := measureTCP(t, probe.TCPSpec{Address: addr, Expect: "ok"}, 5*time.Second)
	want := `connected, but the answer did not contain "ok" (got "` + strings.Repeat("x", 64) + `"…)`
	if r.OK || r.Output != want {
		t.Fatalf("result %+v,\nwant a failure saying %s", r, want)
	}
}

func TestTCPReadsAtMost10KiBOfTheAnswer(t *testing.T) {
	addr := serveTCP(t, answer("", strings.Repeat(" ", 20<<10)+"ready", true))
	r := measureTCP(t, probe.TCPSpec{Address: addr, Expect: "ready"}, 5*time.Second)
	// It fails at once, at the cap, not at the timeout.
	want := `connected, but the first 10240 bytes of the answer did not contain "ready" (got "` + strings.Repeat(" ", 64) + `"…)`
	if r.OK || r.Output != want {
		t.Fatalf("result %+v,\nwant a failure saying %s", r, want)
	}
}

func TestTCPFindsExpectAcrossReadsAndInABannerWithoutSending(t *testing.T) {
	addr := serveTCP(t, func(c net.Conn) {
		io.WriteString(c, "SSH-2.")
		time.Sleep(20 * time.Millisecond) // two writes, two reads
		io.WriteString(c, "0-OpenSSH_9.6\r\n")
		io.Copy(io.Discard, c)
	})
	r := measureTCP(t, probe.TCPSpec{Address: addr, Expect: "SSH-2.0-"}, 5*time.Second)
	if want := `connected, and the answer contained "SSH-2.0-"`; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want a pass saying %q", r, want)
	}

	silent := serveTCP(t, func(c net.Conn) {})
	r = measureTCP(t, probe.TCPSpec{Address: silent, Expect: "220 "}, 5*time.Second)
	if want := `connected, but the server closed the connection without an answer`; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure saying %q", r, want)
	}
}

func TestTCPPassesOnceItSentWhenNothingIsExpected(t *testing.T) {
	got := make(chan string, 1)
	addr := serveTCP(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		got <- string(b)
	})
	r := measureTCP(t, probe.TCPSpec{Address: addr, Send: "hello\n"}, 5*time.Second)
	if want := `sent 6 bytes`; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want a pass saying %q", r, want)
	}
	if s := <-got; s != "hello\n" {
		t.Errorf("the server got %q, want hello\\n", s)
	}
}

func TestTCPNeverShowsWhatItSentWhichMayHoldAPassword(t *testing.T) {
	const auth = "AUTH hunter2\r\n"
	addr := serveTCP(t, answer(auth, "-WRONGPASS invalid password\r\n", false))
	r := measureTCP(t, probe.TCPSpec{Address: addr, Send: auth, Expect: "+OK"}, 5*time.Second)
	want := `sent 14 bytes, but the answer did not contain "+OK" (got "-WRONGPASS invalid password\r\n")`
	if r.OK || r.Output != want {
		t.Fatalf("result %+v,\nwant a failure saying %s", r, want)
	}
	addr = serveTCP(t, answer(auth, "+OK\r\n", false))
	r = measureTCP(t, probe.TCPSpec{Address: addr, Send: auth, Expect: "+OK"}, 5*time.Second)
	if want := `sent 14 bytes, and the answer contained "+OK"`; !r.OK || r.Output != want {
		t.Fatalf("result %+v, want a pass saying %q", r, want)
	}
	addr = serveTCP(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	if r := measureTCP(t, probe.TCPSpec{Address: addr, Send: "Q"}, 5*time.Second); !r.OK || r.Output != "sent 1 byte" {
		t.Fatalf("result %+v, want a pass saying %q", r, "sent 1 byte")
	}
}

func TestTCPRejectsABadSpecWhenBuilt(t *testing.T) {
	tests := []struct {
		spec probe.TCPSpec
		want string
	}{
		{probe.TCPSpec{}, "tcp probe: address is required (host:port)"},
		{probe.TCPSpec{Address: "localhost"}, `tcp probe: address "localhost": missing port in address`},
		{probe.TCPSpec{Address: "[::1:80"}, `tcp probe: address "[::1:80": missing ']' in address`},
		{probe.TCPSpec{Address: "db:0"}, `tcp probe: address "db:0": port "0" is not a number from 1 to 65535`},
		{probe.TCPSpec{Address: "db:65536"}, `tcp probe: address "db:65536": port "65536" is not a number from 1 to 65535`},
		{probe.TCPSpec{Address: "db:redis"}, `tcp probe: address "db:redis": port "redis" is not a number from 1 to 65535`},
		{probe.TCPSpec{Address: "db:"}, `tcp probe: address "db:": port "" is not a number from 1 to 65535`},
		{probe.TCPSpec{Address: "db:6379", Expect: strings.Repeat("x", 10<<10+1)},
			"tcp probe: expect is 10241 bytes, but only the first 10240 of an answer are read"},
	}
	for _, tt := range tests {
		if _, err := probe.TCP(tt.spec); err == nil || err.Error() != tt.want {
			t.Errorf("TCP(%.40v):\n got %v\nwant %s", tt.spec, err, tt.want)
		}
	}
	if _, err := probe.TCP(probe.TCPSpec{Address: ":6379", Expect: strings.Repeat("x", 10<<10)}); err != nil {
		t.Errorf("an empty host (this machine, as in Go) and a 10 KiB expect: %v, want no error", err)
	}
}

func TestTCPFailsAtItsTimeoutWhenTheServerNeverAnswers(t *testing.T) {
	ln := probetest.SilentListener(t)
	p, err := probe.TCP(probe.TCPSpec{Address: ln.Addr().String(), Send: "PING\r\n", Expect: "+PONG"})
	if err != nil {
		t.Fatal(err)
	}
	assertFailsAtTimeout(t, p)

	want := `timed out after 300ms: sent 6 bytes, but no answer came: context deadline exceeded`
	if r := health.Run(context.Background(), p, 300*time.Millisecond); r.Output != want {
		t.Errorf("output %q, want %q", r.Output, want)
	}
}

func TestTCPStopsWhenItsContextIsCanceled(t *testing.T) {
	ln := probetest.SilentListener(t)
	p, err := probe.TCP(probe.TCPSpec{Address: ln.Addr().String(), Expect: "220 "})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := p.Measure(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		want := "connected, but no answer came: context canceled"
		if !errors.Is(err, context.Canceled) || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the probe did not return within 5s of its context's cancellation")
	}
}
