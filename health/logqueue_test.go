package health_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// gatedWriter is a log sink that blocks every write until it is opened, as a
// pipe that nobody reads does once it is full.
type gatedWriter struct {
	open chan struct{}
	once sync.Once
	mu   sync.Mutex
	buf  bytes.Buffer
}

func newGatedWriter(t *testing.T) *gatedWriter {
	g := &gatedWriter{open: make(chan struct{})}
	t.Cleanup(g.release)
	return g
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gatedWriter) release() { g.once.Do(func() { close(g.open) }) }

func (g *gatedWriter) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

func flush(t *testing.T, q *health.LogQueue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	if err := q.Flush(ctx); err != nil {
		t.Fatalf("the queue was not written within %v: %v", settle, err)
	}
}

func TestALogQueueReturnsAtOnceDropsWhatDoesNotFitAndSaysHowManyOnceWritten(t *testing.T) {
	sink := newGatedWriter(t)
	q := health.NewLogQueue(slog.NewTextHandler(sink, nil), 3)
	log := slog.New(q)
	for i := range 10 {
		log.Info("line", "n", i) // the sink blocks: this returns only because the queue does
	}
	if got := q.Dropped(); got != 7 {
		t.Fatalf("Dropped() = %d with a queue of 3 and 10 lines, want 7", got)
	}
	sink.release()
	flush(t, q)
	out := sink.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want the 3 queued lines and one note, got:\n%s", out)
	}
	for i, l := range lines[:3] {
		if !strings.Contains(l, fmt.Sprintf("msg=line n=%d", i)) {
			t.Errorf("line %d = %q, want line n=%d: the oldest lines are kept, in order", i, l, i)
		}
	}
	if note := lines[3]; !strings.Contains(note, "level=WARN") || !strings.Contains(note, "dropped=7 dropped-total=7") {
		t.Errorf("the note = %q, want a warning saying dropped=7 dropped-total=7", note)
	}
	log.Info("later")
	flush(t, q)
	if out := sink.String(); strings.Count(out, "dropped=") != 1 || !strings.HasSuffix(out, "msg=later\n") {
		t.Errorf("a line after the note is written without another note:\n%s", out)
	}
}

func TestALogQueueKeepsAttributesGroupsAndLevels(t *testing.T) {
	buf := newGatedWriter(t)
	buf.release()
	q := health.NewLogQueue(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}), 0)
	log := slog.New(q).With("part", "hooks").WithGroup("g")
	log.Debug("not enabled")
	log.Info("shown", "k", "v")
	flush(t, q)
	if got := buf.String(); strings.Contains(got, "not enabled") || !strings.Contains(got, "msg=shown part=hooks g.k=v") {
		t.Errorf("got %q, want the info line alone, with its attribute and group", got)
	}
	if q.Dropped() != 0 {
		t.Errorf("Dropped() = %d, want 0", q.Dropped())
	}
}

// failingHandler fails every write, as a handler over a closed pipe does.
type failingHandler struct{ slog.Handler }

func (failingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (failingHandler) Handle(context.Context, slog.Record) error { return errors.New("broken pipe") }

func TestALineTheHandlerFailsToWriteCountsAsDropped(t *testing.T) {
	q := health.NewLogQueue(failingHandler{slog.DiscardHandler}, 0)
	slog.New(q).Info("lost")
	flush(t, q)
	if got := q.Dropped(); got != 1 {
		t.Errorf("Dropped() = %d, want 1", got)
	}
}

func TestFlushGivesUpWhenItsContextEnds(t *testing.T) {
	sink := newGatedWriter(t)
	q := health.NewLogQueue(slog.NewTextHandler(sink, nil), 0)
	slog.New(q).Info("stuck")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush with an ended context on a blocked sink = %v, want context.Canceled", err)
	}
}

// A log sink that stops taking lines (a pipe nobody reads) must not stop the
// checks: before the queue, the worker logging a transition blocked in the
// write, so the check never ran again and the endpoints kept their answer.
func TestABlockedLogSinkStopsNoCheckAndTheMonitorStillStops(t *testing.T) {
	sink := newGatedWriter(t)
	m, clk := fakeMonitor(t, health.WithLogger(slog.New(slog.NewTextHandler(sink, nil))))
	flapping := passing()
	if err := m.Add(health.Check{Name: "flap", Level: health.Ready, Checker: flapping,
		Period: time.Second, Timeout: time.Second, FailureThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m.Start(ctx)
	const runs = 40
	for n := 1; n <= runs; n++ {
		waitRuns(t, m, "flap", n)
		if n%2 == 0 {
			flapping.pass()
		} else {
			flapping.fail("down")
		}
		advance(t, clk, 1, time.Second)
	}
	st := waitRuns(t, m, "flap", runs+1)
	if st.Status != health.Fail && st.Status != health.Pass {
		t.Errorf("status %v after %d runs, want pass or fail", st.Status, runs+1)
	}
	m.Drain()
	if m.Passing(health.Ready) {
		t.Error("readiness passes after Drain while the log sink is blocked")
	}
	cancel()
	select {
	case <-m.Done():
	case <-time.After(settle):
		t.Fatalf("Done not closed within %v of the context ending, with the log sink blocked", settle)
	}
}

// counter is a LogValuer whose value changes after it is logged.
type counter struct{ n *int }

func (c counter) LogValue() slog.Value { return slog.IntValue(*c.n) }

func TestALogValuerIsLoggedAsItWasWhenLogged(t *testing.T) {
	sink := newGatedWriter(t)
	q := health.NewLogQueue(slog.NewTextHandler(sink, nil), 0)
	n := 1
	slog.New(q).Info("seen", "n", counter{&n}, slog.Group("g", "m", counter{&n}))
	n = 2 // before the queue has written the line: the sink is blocked
	sink.release()
	flush(t, q)
	if got := sink.String(); !strings.Contains(got, "n=1 g.m=1") {
		t.Errorf("got %q, want the values as they were when logged (n=1 g.m=1)", got)
	}
}
