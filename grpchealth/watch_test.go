package grpchealth_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/vitals-dev/vitals/grpchealth"
	"github.com/vitals-dev/vitals/health"
)

// watcher is a Watch stream that a goroutine reads into a channel.
type watcher struct {
	t       *testing.T
	service string
	got     chan healthpb.HealthCheckResponse_ServingStatus
}

// watch opens a Watch stream for service, read until the test ends.
func watch(t *testing.T, c healthpb.HealthClient, service string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := c.Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{t: t, service: service, got: make(chan healthpb.HealthCheckResponse_ServingStatus, 100)}
	go func() {
		defer close(w.got)
		for {
			res, err := stream.Recv()
			if err != nil {
				return
			}
			w.got <- res.GetStatus()
		}
	}()
	return w
}

// next returns the next status the stream sends.
func (w *watcher) next() healthpb.HealthCheckResponse_ServingStatus {
	w.t.Helper()
	select {
	case st, ok := <-w.got:
		if !ok {
			w.t.Fatalf("Watch(%q): the stream ended", w.service)
		}
		return st
	case <-time.After(settle):
		w.t.Fatalf("Watch(%q): no status within %v", w.service, settle)
	}
	return 0
}

// expect checks that the next statuses the stream sends are want, in order.
func (w *watcher) expect(want ...healthpb.HealthCheckResponse_ServingStatus) {
	w.t.Helper()
	var got []healthpb.HealthCheckResponse_ServingStatus
	for range want {
		got = append(got, w.next())
	}
	if !slices.Equal(got, want) {
		w.t.Errorf("Watch(%q) sent %v, want %v", w.service, got, want)
	}
}

func TestWatchSendsEveryChangeInOrderWithNothingMissed(t *testing.T) {
	m := newMonitor(t)
	db := add(t, m, "db", health.Ready)
	db.failing.Store(true)
	start(t, m)
	c, _ := serve(t, m)
	watchers := []*watcher{watch(t, c, "db"), watch(t, c, ""), watch(t, c, "readiness")}
	for _, w := range watchers {
		w.expect(notServing)
	}
	// The check flips faster than any client reads: each flip waits for
	// the Monitor only, never for a stream.
	var want []healthpb.HealthCheckResponse_ServingStatus
	for i := range 25 {
		pass := i%2 == 0
		set(t, m, "db", db, pass)
		want = append(want, map[bool]healthpb.HealthCheckResponse_ServingStatus{true: serving, false: notServing}[pass])
	}
	for _, w := range watchers {
		w.expect(want...)
	}
	// Nothing came twice meanwhile: the next status is the next change.
	set(t, m, "db", db, false) // the 25th flip made it pass
	for _, w := range watchers {
		w.expect(notServing)
	}
}

func TestWatchAnswersServiceUnknownUntilACheckOfThatNameIsAdded(t *testing.T) {
	m := newMonitor(t)
	db := add(t, m, "db", health.Ready)
	start(t, m)
	c, _ := serve(t, m)
	w := watch(t, c, "later")
	w.expect(unknown)
	// Pending on the unmoving clock until run: a pending ready check is
	// NOT_SERVING. Adding it fails readiness, an event the stream wakes to.
	later := &switchable{}
	if err := m.Add(health.Check{Name: "later", Level: health.Ready, Checker: later, InitialDelay: time.Hour,
		FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	w.expect(notServing)
	set(t, m, "later", later, true)
	w.expect(serving)
	// Removing a passing check changes no level: its own event tells the
	// stream, with nothing else happening.
	if err := m.Remove("later"); err != nil {
		t.Fatal(err)
	}
	w.expect(unknown)
	set(t, m, "db", db, false)
	select {
	case st := <-w.got:
		t.Errorf("after Remove, Watch sent %v more", st)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestWatchSeesAStoppedAndStartedCheckWhileNoLevelChanges(t *testing.T) {
	m := newMonitor(t)
	db := add(t, m, "db", health.Ready)
	add(t, m, "other", health.Ready).failing.Store(true) // readiness fails throughout
	db.failing.Store(true)
	start(t, m)
	c, _ := serve(t, m)
	w := watch(t, c, "db")
	w.expect(notServing)
	// Out of the levels: SERVING, as /readyz/db answers 200. Readiness still
	// fails with other, so only the check's own event can tell the stream.
	if err := m.StopCheck("db"); err != nil {
		t.Fatal(err)
	}
	w.expect(serving)
	if err := m.StartCheck("db"); err != nil { // failing, as it was
		t.Fatal(err)
	}
	w.expect(notServing)
	if m.Passing(health.Ready) {
		t.Fatal("readiness passed: the test no longer shows what it means to")
	}
}

func TestWatchTurnsEveryServiceNotServingOnDrain(t *testing.T) {
	t.Run("with readiness passing", func(t *testing.T) {
		m := newMonitor(t)
		add(t, m, "boot", health.Startup)
		add(t, m, "loop", health.Live)
		add(t, m, "db", health.Ready)
		start(t, m)
		c, _ := serve(t, m)
		var watchers []*watcher
		for _, name := range []string{"", "liveness", "startup", "boot", "loop", "db"} {
			w := watch(t, c, name)
			w.expect(serving)
			watchers = append(watchers, w)
		}
		m.Drain()
		for _, w := range watchers {
			w.expect(notServing)
		}
	})
	// Drain fails no level that has not failed already: a stopping event
	// tells the streams, Drain's own or the one the agent emits as it drains.
	for _, tt := range []struct {
		name      string
		agentSays bool
	}{{"with readiness failing, as a library drains", false}, {"with readiness failing, as the agent stops", true}} {
		t.Run(tt.name, func(t *testing.T) {
			m := newMonitor(t)
			add(t, m, "loop", health.Live)
			add(t, m, "db", health.Ready).failing.Store(true)
			start(t, m)
			c, _ := serve(t, m)
			watchers := []*watcher{watch(t, c, "liveness"), watch(t, c, "loop")}
			for _, w := range watchers {
				w.expect(serving)
			}
			if tt.agentSays {
				m.Emit(health.Event{Type: health.EventStopping, Output: "signal"})
			}
			m.Drain()
			for _, w := range watchers {
				w.expect(notServing)
			}
		})
	}
}

// blockedStream is a Watch stream whose client takes the first status and
// then reads nothing until released: every later send blocks, as it does
// when a client has stopped reading.
type blockedStream struct {
	srv     *grpchealth.Server // the stream's own
	mu      sync.Mutex
	sent    []healthpb.HealthCheckResponse_ServingStatus
	release chan struct{}
}

// watchBlocked opens a blocked stream for service on a Server of its own
// over m, until the test ends, and returns once it has its first status.
func watchBlocked(t *testing.T, m *health.Monitor, service string) *blockedStream {
	t.Helper()
	srv := grpchealth.NewServer(m)
	b := &blockedStream{srv: srv, release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		ended <- srv.WatchWith(ctx, service, func(st healthpb.HealthCheckResponse_ServingStatus) error {
			b.mu.Lock()
			b.sent = append(b.sent, st)
			first := len(b.sent) == 1
			b.mu.Unlock()
			if !first {
				<-b.release
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		b.unblock()
		<-ended
	})
	waitFor(t, "the blocked stream's first status", func() bool { return len(b.statuses()) == 1 })
	return b
}

func (b *blockedStream) statuses() []healthpb.HealthCheckResponse_ServingStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.sent)
}

func (b *blockedStream) unblock() {
	select {
	case <-b.release:
	default:
		close(b.release)
	}
}

// statusOf is the status of a check that passes or not.
func statusOf(pass bool) healthpb.HealthCheckResponse_ServingStatus {
	if pass {
		return serving
	}
	return notServing
}

func TestASlowWatchClientHoldsUpNeitherTheChecksNorOtherStreams(t *testing.T) {
	m := newMonitor(t)
	db := add(t, m, "db", health.Ready)
	start(t, m)
	c, _ := serve(t, m)
	fast := watch(t, c, "db")
	fast.expect(serving)
	slow := watchBlocked(t, m, "db")

	want := []healthpb.HealthCheckResponse_ServingStatus{serving}
	pass := true
	for range 30 {
		pass = !pass
		set(t, m, "db", db, pass) // returns: the blocked stream holds up no check
		fast.expect(statusOf(pass))
		want = append(want, statusOf(pass))
	}
	// Released, the slow stream sends every change it missed, in order.
	slow.unblock()
	waitFor(t, "the slow stream catching up", func() bool { return len(slow.statuses()) >= len(want) })
	if got := slow.statuses(); !slices.Equal(got, want) {
		t.Errorf("the slow stream sent %v\nwant %v", got, want)
	}
}

func TestAWatchStreamThatFallsBehindTheLogGoesOnFromThePresent(t *testing.T) {
	m := newMonitor(t)
	db := add(t, m, "db", health.Ready)
	start(t, m)
	slow := watchBlocked(t, m, "db")
	// Each flip is two events (the check's and readiness's): the 599 after
	// the first are more than the 1000 events kept. The stream is stuck in
	// sending the first flip before the others come, so that it has read
	// none of them (read in one batch with the first, they would all be
	// sent), and it is released once the feed has them all (a feed that
	// lags holds what the stream reads next).
	const flips = 600
	pass := false
	set(t, m, "db", db, pass)
	waitFor(t, "the blocked stream's second status", func() bool { return len(slow.statuses()) == 2 })
	for range flips - 1 {
		pass = !pass
		set(t, m, "db", db, pass)
	}
	waitFor(t, "the feed to hold every flip", func() bool { return slow.srv.FedUpTo() == m.LastEventID() })
	slow.unblock()
	waitFor(t, "the slow stream catching up", func() bool {
		s := slow.statuses()
		return len(s) > 1 && s[len(s)-1] == statusOf(pass)
	})
	s := slow.statuses()
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			t.Fatalf("the stream sent %v: a status twice in a row", s)
		}
	}
	if len(s) > flips {
		t.Errorf("the stream sent %d statuses after %d flips: it should have skipped those the log dropped", len(s), flips)
	}
	// Caught up, it follows again.
	set(t, m, "db", db, !pass)
	waitFor(t, "the stream's next status", func() bool {
		s := slow.statuses()
		return s[len(s)-1] == statusOf(!pass)
	})
}

func TestWatchEndsWhenTheClientGoesAway(t *testing.T) {
	m := newMonitor(t)
	add(t, m, "db", health.Ready)
	start(t, m)
	srv := grpchealth.NewServer(m)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan struct{})
	ended := make(chan error, 1)
	go func() {
		ended <- srv.WatchWith(ctx, "db", func(healthpb.HealthCheckResponse_ServingStatus) error {
			close(first)
			return nil
		})
	}()
	<-first
	cancel()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch ended with %v, want context.Canceled", err)
		}
	case <-time.After(settle):
		t.Fatal("Watch went on after its client went away")
	}
}
