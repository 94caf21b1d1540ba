package grpchealth_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/health"
)

// flapping makes the check flap every period until the test ends: each
// change is two events (the check's and readiness's) that every Watch stream
// reads and sends on.
func flapping(tb testing.TB, m *health.Monitor, name string, sw *switchable, period time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sw.failing.Store(!sw.failing.Load())
				m.RunNow(ctx, name)
			}
		}
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
}

// openWatchers opens n Watch streams to the server at addr over conns
// connections, half on the flapping check and half on readiness, each read
// by a goroutine until the test ends, and returns once each has had its
// first status. received counts the statuses they have had since.
func openWatchers(tb testing.TB, addr string, n, conns int, flap string) (received *atomic.Int64) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	tb.Cleanup(func() {
		cancel()
		readers.Wait()
	})
	clients := make([]healthpb.HealthClient, conns)
	for i := range clients {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { conn.Close() })
		clients[i] = healthpb.NewHealthClient(conn)
	}
	var first sync.WaitGroup
	received = new(atomic.Int64)
	for i := range n {
		service := flap
		if i%2 == 1 {
			service = "readiness"
		}
		stream, err := clients[i%conns].Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			tb.Fatal(err)
		}
		first.Add(1)
		readers.Go(func() {
			_, err := stream.Recv()
			first.Done()
			for err == nil {
				if _, err = stream.Recv(); err == nil {
					received.Add(1)
				}
			}
		})
	}
	first.Wait()
	return received
}

// loadFixture is a Monitor whose ready check "flap" flaps every period,
// served over gRPC and over HTTP.
func loadFixture(tb testing.TB, period time.Duration) (*health.Monitor, string, *httptest.Server) {
	tb.Helper()
	m := newMonitor(tb)
	add(tb, m, "db", health.Ready)
	flap := add(tb, m, "flap", health.Ready)
	start(tb, m)
	_, addr := serve(tb, m)
	web := httptest.NewServer(m.Handler())
	tb.Cleanup(web.Close)
	flapping(tb, m, "flap", flap, period)
	return m, addr, web
}

// readyzPath leaves the flapping check out, so that every request takes
// the same path through the handler whatever the check's status.
const readyzPath = "/readyz?exclude=flap"

// latencies are the median and the 99th percentile of n requests' latencies.
type latencies struct {
	n           int
	median, p99 time.Duration
}

// measureReadyz makes requests to readyzPath, one after another, for span
// and 100 requests at least, and returns their latencies.
func measureReadyz(t *testing.T, web *httptest.Server, span time.Duration) latencies {
	t.Helper()
	const enough = 100
	client := web.Client()
	var took []time.Duration
	for begin := time.Now(); len(took) < enough || time.Since(begin) < span; {
		start := time.Now()
		res, err := client.Get(web.URL + readyzPath)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		took = append(took, time.Since(start))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s answered %d", readyzPath, res.StatusCode)
		}
	}
	slices.Sort(took)
	return latencies{n: len(took), median: took[len(took)/2], p99: took[len(took)*99/100]}
}

func TestAThousandWatchStreamsDoNotSlowReadyz(t *testing.T) {
	// A check that changes four times a second, more often than any does,
	// keeps the streams busy throughout each second of requests; the
	// streams come over 50 connections, as from 50 clients.
	const watchers, conns, period, span = 1000, 50, 250 * time.Millisecond, time.Second
	_, addr, web := loadFixture(t, period)
	measureReadyz(t, web, 0) // warm the connection and the handler
	without := measureReadyz(t, web, span)
	received := openWatchers(t, addr, watchers, conns, "flap")
	before := received.Load()
	with := measureReadyz(t, web, span)
	sent := received.Load() - before
	ratio := float64(with.median) / float64(without.median)
	t.Logf("%s: median %v (p99 %v) over %d requests without Watch streams, median %v (p99 %v) over %d with %d: %.2f×; "+
		"the streams were sent %d statuses meanwhile (a flap every %v)",
		readyzPath, without.median, without.p99, without.n, with.median, with.p99, with.n, watchers, ratio, sent, period)
	if sent < watchers {
		t.Errorf("the Watch streams were sent %d statuses while /readyz was measured: the check did not flap under load", sent)
	}
	// The handler reads state through atomic pointers and takes no lock, so
	// the streams cost it only a share of the CPU. The bound is generous: a
	// slow, shared machine measures noisily.
	if ratio > 3 {
		t.Errorf("/readyz is %.2f× slower with %d Watch streams open; want less than 3×", ratio, watchers)
	}
}

// BenchmarkReadyz measures /readyz through the handler, without a network,
// with and without 1000 Watch streams (over 50 connections) following the
// same Monitor while one of its checks flaps ten times a second.
// Allocations count the whole process's, the streams' among them.
func BenchmarkReadyz(b *testing.B) {
	for _, watchers := range []int{0, 1000} {
		b.Run(map[int]string{0: "no watchers", 1000: "1000 watchers"}[watchers], func(b *testing.B) {
			m, addr, _ := loadFixture(b, 100*time.Millisecond)
			if watchers > 0 {
				openWatchers(b, addr, watchers, 50, "flap")
			}
			h := m.Handler()
			req := httptest.NewRequest(http.MethodGet, readyzPath, nil)
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s answered %d", readyzPath, rec.Code)
				}
			}
		})
	}
}
