package servers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestTheCapsKeepAReserveAndGiveEachListenerItsOwnShare(t *testing.T) {
	for _, c := range []struct {
		limit  uint64
		checks int
		grpc   bool
		want   Caps
	}{
		// A quarter is kept; the API gets a quarter of the rest, gRPC a
		// quarter when served, the probe endpoints what is left.
		{1024, 3, false, Caps{Limit: 1024, Reserve: 256, Probe: 576, API: 192}},
		{1024, 3, true, Caps{Limit: 1024, Reserve: 256, Probe: 384, API: 192, GRPC: 192}},
		// Past the ceilings (1,024 and 256), descriptors are no longer what
		// runs out first.
		{4095, 1, false, Caps{Limit: 4095, Reserve: 1023, Probe: 1024, API: 256}},
		{2000, 1, true, Caps{Limit: 2000, Reserve: 500, Probe: 750, API: 256, GRPC: 256}},
		// At a low limit the reserve is 64, plus 8 for each check.
		{256, 1, false, Caps{Limit: 256, Reserve: 72, Probe: 138, API: 46}},
		{256, 0, false, Caps{Limit: 256, Reserve: 64, Probe: 144, API: 48}},
		{256, 20, false, Caps{Limit: 256, Reserve: 224, Probe: 24, API: 8}},
		// Below what the reserve needs, each listener still gets 8.
		{64, 1, true, Caps{Limit: 64, Reserve: 72, Probe: 8, API: 8, GRPC: 8}},
		// An unlimited limit is bounded where Linux bounds it.
		{^uint64(0), 1, false, Caps{Limit: 1 << 30, Reserve: 1 << 28, Probe: 1024, API: 256}},
	} {
		if got := CapsFor(c.limit, c.checks, c.grpc); got != c.want {
			t.Errorf("CapsFor(%d, %d, %v) = %+v, want %+v", c.limit, c.checks, c.grpc, got, c.want)
		}
	}
}

func TestTheCapsInForceComeFromTheSoftLimit(t *testing.T) {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		t.Skip("no /proc/self/limits:", err)
	}
	var soft uint64
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			fmt.Sscan(rest, &soft)
		}
	}
	caps, err := CapsInForce(2, true)
	if err != nil || caps != CapsFor(soft, 2, true) {
		t.Fatalf("CapsInForce = %+v, %v; want CapsFor(%d, 2, true) = %+v", caps, err, soft, CapsFor(soft, 2, true))
	}
}

// listen returns a loopback listener capped at n, closed when the test ends.
func listen(t *testing.T, n int) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Limit(ln, "test", n)
	t.Cleanup(func() { l.Close() })
	return l
}

func dial(t *testing.T, l net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// accepted runs one Accept and sends what it returned.
func accepted(l *Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- c
	}()
	return ch
}

func TestAtTheCapANewConnectionWaitsUntilOneCloses(t *testing.T) {
	l := listen(t, 2)
	var held []net.Conn
	for range 2 {
		dial(t, l)
		held = append(held, <-accepted(l))
	}
	if l.Open() != 2 {
		t.Fatalf("%d open, want 2", l.Open())
	}
	dial(t, l)
	third := accepted(l)
	select {
	case <-third:
		t.Fatal("a third connection was accepted past a cap of 2")
	case <-time.After(200 * time.Millisecond):
	}
	held[0].Close()
	held[0].Close() // a second Close gives back nothing more
	if c := <-third; c == nil {
		t.Fatal("Accept failed once a place was free")
	}
	if l.Open() != 2 || l.Evicted() != 0 {
		t.Fatalf("%d open, %d evicted; want 2 and none: no connection was known idle", l.Open(), l.Evicted())
	}
}

func TestClosingTheListenerEndsAnAcceptThatWaits(t *testing.T) {
	l := listen(t, 1)
	dial(t, l)
	<-accepted(l)
	dial(t, l)
	waiting := accepted(l)
	l.Close()
	if c, ok := <-waiting; ok {
		t.Fatalf("Accept returned %v after Close, want an error", c.RemoteAddr())
	}
}

// idle waits until n of l's connections are known idle.
func idle(t *testing.T, l *Listener, n int) {
	t.Helper()
	listed(t, l, &l.idle, n)
}

// get sends one request on c and reads the answer, keeping c open.
func get(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	fmt.Fprint(c, "GET /livez HTTP/1.1\r\nHost: vitals\r\n\r\n")
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
}

func TestAtTheCapTheLongestIdleConnectionMakesRoomForANewOne(t *testing.T) {
	l := listen(t, 3)
	serveOK(t, l)
	var held []net.Conn
	for i := range 3 {
		c := dial(t, l)
		get(t, c, bufio.NewReader(c))
		held = append(held, c)
		idle(t, l, i+1)
	}
	// A fresh client is answered while three others hold the cap.
	if err := fresh(l); err != nil {
		t.Fatalf("a fresh request at the cap: %v", err)
	}
	if l.Evicted() != 1 {
		t.Fatalf("%d evicted, want 1", l.Evicted())
	}
	// The first to go idle is the one closed; the others stay open.
	if _, err := held[0].Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the longest-idle connection reads %v, want EOF", err)
	}
	for _, c := range held[1:] {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a connection idle for less long reads %v, want it still open", err)
		}
	}
}

func TestAnIdleConnectionThatSendsARequestIsNoLongerEvicted(t *testing.T) {
	l := listen(t, 2)
	block, release := make(chan struct{}), make(chan struct{})
	srv := Probe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			block <- struct{}{}
			<-release
		}
		fmt.Fprint(w, "ok")
	}), l, nil)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	a, b := dial(t, l), dial(t, l)
	get(t, a, bufio.NewReader(a))
	get(t, b, bufio.NewReader(b))
	idle(t, l, 2)
	// Both active: a new connection waits for one of them.
	fmt.Fprint(a, "GET /slow HTTP/1.1\r\nHost: vitals\r\n\r\n")
	<-block
	fmt.Fprint(b, "GET /slow HTTP/1.1\r\nHost: vitals\r\n\r\n")
	<-block
	idle(t, l, 0)
	fresh := make(chan error, 1)
	go func() {
		res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + l.Addr().String() + "/")
		if err == nil {
			res.Body.Close()
		}
		fresh <- err
	}()
	select {
	case err := <-fresh:
		t.Fatalf("a new connection was served while two requests held the cap of 2: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-fresh; err != nil {
		t.Fatalf("the new connection once a request ended: %v", err)
	}
	if l.Evicted() != 1 {
		t.Fatalf("%d evicted, want 1: the first to go idle again", l.Evicted())
	}
}

func TestAnAPIAnswerMayTakeLongerThanWriteTimeoutButNoWriteMay(t *testing.T) {
	const d = 100 * time.Millisecond
	serve := func(h http.Handler, write time.Duration) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, WriteTimeout: write}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return "http://" + ln.Addr().String()
	}
	// A long wait, then an answer; a stream whose writes are spaced by
	// less than d but which lasts longer.
	longWait := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * d)
		fmt.Fprint(w, "events")
	})
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for range 6 {
			fmt.Fprint(w, ": keepalive\n\n")
			if err := rc.Flush(); err != nil {
				return
			}
			time.Sleep(d / 2)
		}
		fmt.Fprint(w, "end")
	})
	body := func(url string) (string, error) {
		res, err := http.Get(url)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return string(b), err
	}
	if got, err := body(serve(rearm(longWait, d), d)); err != nil || got != "events" {
		t.Errorf("a long wait with the deadline re-armed: %q, %v; want its answer", got, err)
	}
	if got, err := body(serve(rearm(stream, d), d)); err != nil || !strings.HasSuffix(got, "end") {
		t.Errorf("a stream with the deadline re-armed: %q, %v; want it whole", got, err)
	}
	// What the re-arming saves them from: a WriteTimeout alone cuts both.
	if got, err := body(serve(longWait, d)); err == nil && got == "events" {
		t.Errorf("a long wait under a plain WriteTimeout was answered: the test proves nothing")
	}
	if got, err := body(serve(stream, d)); err == nil && strings.HasSuffix(got, "end") {
		t.Errorf("a stream under a plain WriteTimeout ended whole: the test proves nothing")
	}

	// A reader that never reads is dropped: the write that cannot go out
	// fails once d has passed.
	failed := make(chan error, 1)
	url := serve(rearm(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write(chunk); err != nil {
				failed <- err
				return
			}
			if err := rc.Flush(); err != nil {
				failed <- err
				return
			}
		}
	}), d), d)
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: vitals\r\n\r\n")
	if err := <-failed; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writing to a reader that never reads: %v, want the deadline exceeded", err)
	}
}

// listed waits until n of l's connections are on the list on.
func listed(t *testing.T, l *Listener, on *connList, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		got := on.Len()
		l.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) { // a guard: the server listed it long ago
			t.Fatalf("%d connections listed, want %d", got, n)
		}
	}
}

// fresh makes one request on a new connection.
func fresh(l net.Listener) error {
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get("http://" + l.Addr().String() + "/livez")
	if err == nil {
		res.Body.Close()
	}
	return err
}

// serveOK serves "ok" on l until the test ends.
func serveOK(t *testing.T, l *Listener) {
	t.Helper()
	srv := Probe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }), l, nil)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func TestAtTheCapAnIdleConnectionGoesBeforeOneJustAcceptedThatSentNothing(t *testing.T) {
	l := listen(t, 2)
	serveOK(t, l)
	kept := dial(t, l)
	get(t, kept, bufio.NewReader(kept))
	idle(t, l, 1)
	silent := dial(t, l)
	listed(t, l, &l.silent, 1)
	// The silent one is within its grace; were the machine slow enough for
	// it to pass, the idle one would still be the longer idle.
	if err := fresh(l); err != nil {
		t.Fatalf("a fresh request at the cap: %v", err)
	}
	if _, err := kept.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the idle connection reads %v, want EOF", err)
	}
	silent.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection just accepted reads %v, want it still open", err)
	}
}

func TestAtTheCapAConnectionThatSendsNothingMakesRoomOnceSilentForHalfASecond(t *testing.T) {
	l := listen(t, 1)
	serveOK(t, l)
	// Taken before the dial, so no later than the server's own record of
	// the accept: the wait measured from it is never shorter than the one
	// the server judges by.
	accepted := time.Now()
	silent := dial(t, l)
	listed(t, l, &l.silent, 1)
	if err := fresh(l); err != nil {
		t.Fatalf("a fresh request at the cap: %v", err)
	}
	if waited := time.Since(accepted); waited < silentGrace {
		t.Fatalf("the silent connection was evicted %v after its accept, within its grace (%v)", waited, silentGrace)
	}
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the connection that sent nothing reads %v, want EOF", err)
	}
	if l.Evicted() != 1 {
		t.Fatalf("%d evicted, want 1", l.Evicted())
	}
}

// A client that sends headers with a Content-Length and then no body holds
// an active connection, which no idle timeout ends and no cap evicts, until
// ReadTimeout: every HTTP server vitals runs sets it.
func TestABodyThatNeverComesHoldsAPlaceNoLongerThanReadTimeout(t *testing.T) {
	l := listen(t, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	for name, srv := range map[string]*http.Server{"probe": Probe(h, l, nil), "api": API(h, l, nil)} {
		if srv.ReadTimeout != ReadTimeout {
			t.Errorf("the %s server's ReadTimeout is %v, want %v", name, srv.ReadTimeout, ReadTimeout)
		}
	}
	srv := Probe(h, l, nil)
	srv.ReadTimeout = 300 * time.Millisecond // ReadTimeout's 10s, shortened for the test
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	for range 2 {
		c := dial(t, l)
		fmt.Fprint(c, "GET /livez HTTP/1.1\r\nHost: vitals\r\nContent-Length: 10\r\n\r\n")
	}
	for deadline := time.Now().Add(10 * time.Second); l.Open() != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // a guard: both were accepted long ago
			t.Fatalf("%d open, want the 2 that wait for their bodies", l.Open())
		}
	}
	listed(t, l, &l.silent, 0) // both have sent their headers: active, not idle
	done := make(chan error, 1)
	go func() { done <- fresh(l) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a fresh request while two wait for their bodies: %v", err)
		}
	case <-time.After(10 * time.Second): // a guard, far past the shortened ReadTimeout
		t.Fatal("a fresh request was not answered while two connections waited for their bodies")
	}
}

// The probe endpoints are asked thousands of times a second on keep-alive
// connections: the listener's part in each request costs no allocation.
func TestAKeepAliveRequestCostsTheListenerNoAllocation(t *testing.T) {
	l := listen(t, 2)
	c := &conn{l: l}
	l.ConnState(c, http.StateNew)
	if allocs := testing.AllocsPerRun(1000, func() {
		l.ConnState(c, http.StateActive)
		l.ConnState(c, http.StateIdle)
	}); allocs != 0 {
		t.Errorf("%v allocations per request, want 0", allocs)
	}
	if l.idle.Len() != 1 || l.silent.Len() != 0 {
		t.Errorf("idle %d, silent %d; want the connection idle, once", l.idle.Len(), l.silent.Len())
	}
}

// A client that sends its headers a byte at a time (slowloris) holds no
// place: net/http counts it active only once its header is whole, so until
// then it is silent, and evicted as a silent one is.
func TestAtTheCapAClientThatSendsItsHeadersByteByByteMakesRoom(t *testing.T) {
	l := listen(t, 1)
	serveOK(t, l)
	slow := dial(t, l)
	listed(t, l, &l.silent, 1)
	fmt.Fprint(slow, "GET /livez HTTP/1.1\r\nHo")
	if err := fresh(l); err != nil {
		t.Fatalf("a fresh request at the cap held by a slow client: %v", err)
	}
	if _, err := slow.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the slow client's connection reads %v, want EOF", err)
	}
	if l.Evicted() != 1 {
		t.Fatalf("%d evicted, want 1", l.Evicted())
	}
}
