package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/internal/testenv"
)

// R8, a connection flood: under a low open-file limit, clients open more
// connections to the probe endpoints than the limit allows, each sending one
// request and then holding its keep-alive connection (a quarter of them send
// nothing at all), and open a new one a second after the server closes
// theirs. Meanwhile a tcp and an http check
// keep passing, a fresh /livez is answered 200 at once, the API answers, and
// once the clients stop opening, the connections they hold are closed within
// IdleTimeout (30s). Beside them, a gRPC connection whose one call has ended
// is closed at IdleTimeout too, while a Watch keeps its own open.

const (
	// floodLimit is the open-file limit vitals runs under (soft and hard):
	// with its two checks, 80 kept from clients, 44 for the API, 44 for
	// gRPC and 88 for the probe endpoints (servers.CapsFor).
	floodLimit = 256
	floodCap   = 88
	// floodIdle is the servers' IdleTimeout.
	floodIdle = 30 * time.Second
)

func TestAConnectionFloodStarvesNeitherTheChecksNorAFreshLivez(t *testing.T) {
	const clients = 400
	hold := 5 * time.Second
	if soak {
		hold = time.Minute
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		testenv.Missing(t, "the flood needs prlimit (util-linux)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.Missing(t, "the flood needs curl")
	}
	// The test process holds the clients' ends.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < uint64(clients+256) {
		t.Skipf("the test's own open-file limit (%d) is below %d", lim.Cur, clients+256)
	}
	target := tcpServer(t, func(net.Conn) {})
	web := server(t, http.StatusOK)
	addr, grpcAddr, dir := freeAddr(t), freeAddr(t), vitalstest.ShortDir(t)
	sock := filepath.Join(dir, "vitals.sock")
	path := writeConfig(t, fmt.Sprintf(`listen: %s
grpc-listen: %s
api: %s
checks:
  db:
    tcp: {address: %q}
    period: 1s
    failure-threshold: 1
  web:
    http: {url: %q}
    period: 1s
    failure-threshold: 1
`, addr, grpcAddr, sock, target, web))
	n := strconv.Itoa(floodLimit)
	_, logs := runInBackground(t, os.Environ(), "prlimit", "--nofile="+n+":"+n, vitals, "run", "-c", path)
	plain := &http.Transport{DisableKeepAlives: true}
	scrape := func() metricsScrape {
		m, err := scrapeMetrics(plain, addr)
		if err != nil {
			t.Fatalf("/metrics: %v; logs:\n%s", err, logs)
		}
		return m
	}
	waitFor(t, "both checks pass", logs, func() bool {
		m, err := scrapeMetrics(plain, addr)
		return err == nil && m.value(`vitals_check_up{check="db",level="ready"}`) == 1 && m.value(`vitals_check_up{check="web",level="ready"}`) == 1
	})
	before := scrape()
	if got := before.value("process_max_fds"); got != floodLimit {
		t.Fatalf("process_max_fds %v, want %d", got, floodLimit)
	}
	for listener, want := range map[string]float64{"probe": floodCap, "api": 44, "grpc": 44} {
		if got := before.value(`vitals_connections_max{listener="` + listener + `"}`); got != want {
			t.Fatalf(`vitals_connections_max{listener=%q} %v, want %v`, listener, got, want)
		}
	}

	long := startLongLived(t, grpcAddr, sock)

	f := &flood{addr: addr}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for i := range clients {
		f.wg.Add(1)
		go f.client(ctx, i%4 == 0)
	}
	// Through the hold: a fresh /livez every 250ms, /metrics every second,
	// and the API once.
	var livez []time.Duration
	var maxOpen, maxFds float64
	began := time.Now()
	apiDone := false
	for tick := 0; time.Since(began) < hold; tick++ {
		time.Sleep(250 * time.Millisecond)
		out, err := exec.Command("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "--max-time", "10",
			"http://"+addr+"/livez").Output()
		var code int
		var secs float64
		if _, scanErr := fmt.Sscan(string(out), &code, &secs); err != nil || scanErr != nil || code != 200 {
			t.Fatalf("a fresh curl /livez with %d connections answered: %q, %v; logs:\n%s", f.held.Load(), out, err, logs)
		}
		livez = append(livez, time.Duration(secs*float64(time.Second)))
		if tick%4 == 0 {
			m := scrape()
			maxOpen = max(maxOpen, m.value(`vitals_connections{listener="probe"}`))
			maxFds = max(maxFds, m.value("process_open_fds"))
		}
		if !apiDone && time.Since(began) > hold/2 {
			if code, _, body := call(socketClient(sock), "GET", "http://vitals/v1/health"); code != 200 {
				t.Fatalf("the API during the flood: %d %s", code, body)
			}
			apiDone = true
		}
	}
	after := scrape()
	stop()
	stopped := time.Now()

	runs := func(m metricsScrape, result string) float64 {
		return max(m.value(`vitals_check_runs_total{check="db",result="`+result+`"}`), 0) +
			max(m.value(`vitals_check_runs_total{check="web",result="`+result+`"}`), 0)
	}
	passed, failed := runs(after, "pass")-runs(before, "pass"), runs(after, "fail")-runs(before, "fail")
	if passed < hold.Seconds() { // 2 a second at the period; a loaded machine gets fewer, but some
		t.Errorf("%v passing runs of the two checks in %v of flood", passed, hold)
	}
	// No run fails for lack of descriptors. The test's own servers, in this
	// busy process, may miss the 1s timeout now and then on a loaded machine:
	// one run, or one in 20 of a longer flood, may fail so (the events below
	// say why each failed).
	if failed > max(1, (passed+failed)/20) {
		t.Errorf("%v of %v runs failed during the flood; logs:\n%s", failed, passed+failed, logs)
	}
	_, _, body := call(socketClient(sock), "GET", "http://vitals/v1/events")
	var seen []struct{ Type, Check, Output string }
	if err := json.Unmarshal([]byte(body), &seen); err != nil {
		t.Fatalf("GET /v1/events: %v: %s", err, body)
	}
	for _, e := range seen {
		if e.Type == "check-failed" && !strings.HasPrefix(e.Output, "timed out after") {
			t.Errorf("check %s failed during the flood, not for a timeout on a loaded machine: %s", e.Check, e.Output)
		}
	}
	// The descriptors are what must not run out; the listener's gauge cannot
	// pass its cap, so it is reported, not asserted.
	if maxFds >= floodLimit {
		t.Errorf("up to %v descriptors open (limit %d), %v probe connections (cap %d)", maxFds, floodLimit, maxOpen, floodCap)
	}
	evicted := after.value(`vitals_connections_evicted_total{listener="probe"}`)
	if answered := f.answered.Load(); answered <= floodCap || evicted <= 0 {
		t.Errorf("%d requests of the flood answered, %v idle connections evicted: the flood did not pass the cap", answered, evicted)
	}

	// The clients open no more; those who hold a connection are closed
	// within IdleTimeout of their request.
	for f.held.Load() > 0 {
		if time.Since(stopped) > floodIdle+15*time.Second { // a guard for a loaded machine
			t.Fatalf("%d connections still open %v after the flood stopped (IdleTimeout %v)", f.held.Load(), time.Since(stopped), floodIdle)
		}
		time.Sleep(100 * time.Millisecond)
	}
	idleClosed := time.Since(stopped)
	f.wg.Wait()
	longSaw := long.verify(t)
	slices.Sort(livez)
	t.Logf("limit %d, probe cap %d: %d clients, %d requests answered, %v idle connections evicted, up to %v open, up to %v descriptors",
		floodLimit, floodCap, clients, f.answered.Load(), evicted, maxOpen, maxFds)
	t.Logf("%v of flood: %v passing runs, %v failing; %d fresh /livez all 200, median %v, max %v; the last held connection closed %v after the flood stopped; %s",
		hold, passed, failed, len(livez), livez[len(livez)/2].Round(time.Microsecond), livez[len(livez)-1].Round(time.Microsecond),
		idleClosed.Round(100*time.Millisecond), longSaw)
}

// longLived are the clients that hold a connection by design, beside the
// flood: on gRPC a connection whose one call has ended and a Watch, on the API
// a 20s wait for events and an event stream.
type longLived struct {
	began               time.Time
	idleConn, watchConn *grpc.ClientConn
	idleClosed          chan time.Duration // when the idle one left READY
	watchEnded          chan error
	longWait            chan string // how the wait for events ended
	keepalives          chan time.Duration
}

func startLongLived(t *testing.T, grpcAddr, sock string) *longLived {
	t.Helper()
	l := &longLived{idleConn: grpcConn(t, grpcAddr), watchConn: grpcConn(t, grpcAddr),
		idleClosed: make(chan time.Duration, 1), watchEnded: make(chan error, 1),
		longWait: make(chan string, 1), keepalives: make(chan time.Duration, 8)}
	if _, err := healthpb.NewHealthClient(l.idleConn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("gRPC Check: %v", err)
	}
	watch, err := healthpb.NewHealthClient(l.watchConn).Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("gRPC Watch: %v", err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatalf("gRPC Watch: %v", err)
	}
	l.began = time.Now()
	go func() {
		for {
			if _, err := watch.Recv(); err != nil {
				l.watchEnded <- err
				return
			}
		}
	}()
	go func() {
		l.idleConn.WaitForStateChange(context.Background(), connectivity.Ready)
		l.idleClosed <- time.Since(l.began)
	}()

	// The API's answers wait for the events after the last one.
	api := &http.Client{Transport: socketClient(sock).Transport} // no timeout
	_, _, body := call(api, "GET", "http://vitals/v1/events")
	var evs []struct{ ID uint64 }
	if err := json.Unmarshal([]byte(body), &evs); err != nil || len(evs) == 0 {
		t.Fatalf("GET /v1/events: %v: %s", err, body)
	}
	last := strconv.FormatUint(evs[len(evs)-1].ID, 10)
	go func() {
		began := time.Now()
		code, _, body := call(api, "GET", "http://vitals/v1/events?wait=20s&after="+last)
		// Said to the second, rounded down: the wait ends at 20s, and its
		// answer may come late on a loaded machine, never early.
		l.longWait <- fmt.Sprintf("%d %s after %v", code, strings.TrimSpace(body), time.Since(began).Truncate(time.Second))
	}()
	ctx, endStream := context.WithCancel(context.Background())
	t.Cleanup(endStream)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://vitals/v1/events?after="+last, nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := api.Do(req)
	if err != nil {
		t.Fatalf("the event stream: %v", err)
	}
	go func() {
		defer stream.Body.Close()
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if sc.Text() == ": keepalive" {
				l.keepalives <- time.Since(l.began)
			}
		}
		close(l.keepalives)
	}()
	return l
}

// verify waits (guards only) for the idle gRPC connection to be closed at
// IdleTimeout, the wait for events to answer and the stream to send two
// keepalives, checks that the Watch is still open, and says how it went.
func (l *longLived) verify(t *testing.T) string {
	t.Helper()
	var idleClosed time.Duration
	guard := time.NewTimer(max(time.Until(l.began.Add(floodIdle+15*time.Second)), 0)) // for a loaded machine
	defer guard.Stop()
	select {
	case idleClosed = <-l.idleClosed: // long before, in the soak variant
	default:
		select {
		case idleClosed = <-l.idleClosed:
		case <-guard.C:
			t.Fatalf("the idle gRPC connection still open %v after its call", time.Since(l.began))
		}
	}
	if idleClosed < floodIdle-time.Second {
		t.Errorf("the idle gRPC connection closed %v after its call, before IdleTimeout (%v)", idleClosed, floodIdle)
	}
	if got := <-l.longWait; !strings.HasPrefix(got, "200 [] after 20s") {
		t.Errorf("a wait of 20s for events answered %s, want 200 [] after 20s", got)
	}
	var streamed []time.Duration
	for len(streamed) < 2 {
		d, ok := <-l.keepalives
		if !ok {
			t.Fatalf("the event stream ended after %v, with keepalives at %v", time.Since(l.began), streamed)
		}
		streamed = append(streamed, d.Round(100*time.Millisecond))
	}
	select {
	case err := <-l.watchEnded:
		t.Fatalf("the gRPC Watch ended %v after it began: %v", time.Since(l.began), err)
	default:
	}
	if state := l.watchConn.GetState(); state != connectivity.Ready {
		t.Fatalf("the watching gRPC connection is %v %v after it began, want READY", state, time.Since(l.began))
	}
	return fmt.Sprintf("the idle gRPC connection closed %v after its call, the Watch open after %v; a 20s wait for events answered, the event stream's keepalives at %v",
		idleClosed.Round(100*time.Millisecond), time.Since(l.began).Round(100*time.Millisecond), streamed)
}

// grpcConn is a plaintext gRPC client of addr, closed when the test ends.
func grpcConn(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	c, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// flood is clients that send one request each and hold the connection.
type flood struct {
	addr     string
	wg       sync.WaitGroup
	held     atomic.Int64 // connections open, answered or waiting for it
	answered atomic.Int64
}

// client opens a connection, sends a request (unless silent), reads its
// answer and holds the connection until the server closes it; then, a second
// later, again, until ctx ends.
func (f *flood) client(ctx context.Context, silent bool) {
	defer f.wg.Done()
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", f.addr, 10*time.Second)
		if err == nil {
			f.held.Add(1)
			r := bufio.NewReader(c)
			if !silent {
				fmt.Fprint(c, "GET /readyz HTTP/1.1\r\nHost: vitals\r\n\r\n")
				if res, err := http.ReadResponse(r, nil); err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					f.answered.Add(1)
				}
			}
			r.ReadByte() // blocks until the server closes the connection
			c.Close()
			f.held.Add(-1)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// The workload keeps the soft open-file limit vitals was started with, while
// vitals sizes its caps from the limit in force: Go raised its own soft limit
// to just under the hard one (4095) at start, and restores the original for
// the processes it starts.
func TestTheWorkloadKeepsItsOpenFileLimitWhileVitalsSizesItsCapsFromTheHardOne(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		testenv.Missing(t, "needs prlimit (util-linux)")
	}
	addr, dir := freeAddr(t), vitalstest.ShortDir(t)
	path := writeConfig(t, fmt.Sprintf("listen: %s\napi: %s\nchecks:\n  ok:\n    file: {path: %s}\n",
		addr, filepath.Join(dir, "vitals.sock"), vitals))
	_, logs := runInBackground(t, os.Environ(), "prlimit", "--nofile=1024:4096", vitals, "run", "-c", path, "--",
		"sh", "-c", `echo "workload nofile $(ulimit -Sn):$(ulimit -Hn)"; exec sleep 60`)
	var m metricsScrape
	waitFor(t, "the workload's limits and /metrics", logs, func() bool {
		var err error
		m, err = scrapeMetrics(&http.Transport{DisableKeepAlives: true}, addr)
		return err == nil && strings.Contains(logs.String(), "workload nofile ")
	})
	if !strings.Contains(logs.String(), "workload nofile 1024:4096\n") {
		t.Fatalf("the workload's open-file limits: want 1024:4096; output:\n%s", logs)
	}
	// 4095 less a quarter kept (1023), a quarter of the rest for the API,
	// the rest for the probe endpoints.
	for series, want := range map[string]float64{"process_max_fds": 4095,
		`vitals_connections_max{listener="probe"}`: 1024, `vitals_connections_max{listener="api"}`: 256} {
		if got := m.value(series); got != want {
			t.Errorf("%s %v, want %v", series, got, want)
		}
	}
}
