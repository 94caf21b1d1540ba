package health

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLogQueue is how many log lines a LogQueue holds while its handler
// is not taking them: a burst of transitions of every check of a large agent
// fits, and a handler stalled for longer costs a bounded amount of memory
// (the newest lines are dropped, and counted).
const DefaultLogQueue = 1000

// LogQueue is a slog.Handler that never blocks whoever logs. Each record goes
// to a bounded queue and is written to the handler the queue wraps by one
// goroutine of its own, in order. A record that finds the queue full is
// dropped and counted, and so is one the handler fails to write; once the
// handler has written all that was queued, one line says how many were
// dropped. A log pipe that nobody reads, a container log driver that blocks
// or a paused terminal then costs log lines, never a check's run, a probe's
// answer or a shutdown.
//
// The writing goroutine runs only while records wait: an idle LogQueue holds
// none. Enabled asks the wrapped handler directly, so a handler's level still
// filters before anything is queued. Make one with NewLogQueue; the handlers
// that WithAttrs and WithGroup return share its queue and its count.
type LogQueue struct {
	h slog.Handler // the wrapped handler, with this front's attributes and groups
	q *logQueue
}

// logQueue is what the fronts of one LogQueue share.
type logQueue struct {
	base    slog.Handler // the wrapped handler as given: it writes the dropped lines' note
	size    int
	dropped atomic.Uint64

	mu      sync.Mutex
	pending []queued      // waiting, oldest first
	held    int           // pending plus the batch being written
	unsaid  uint64        // dropped since the last note said so
	drained chan struct{} // while writing: closed when the queue is empty again; nil when idle
}

type queued struct {
	ctx context.Context
	h   slog.Handler
	r   slog.Record
}

// NewLogQueue returns a LogQueue in front of h that holds up to size records
// (DefaultLogQueue when size is below 1).
func NewLogQueue(h slog.Handler, size int) *LogQueue {
	if size < 1 {
		size = DefaultLogQueue
	}
	return &LogQueue{h: h, q: &logQueue{base: h, size: size}}
}

// Enabled reports whether the wrapped handler takes records of level.
func (l *LogQueue) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

// Handle queues a copy of r and returns at once; it never fails. When the
// queue is full, r is dropped and counted.
func (l *LogQueue) Handle(ctx context.Context, r slog.Record) error {
	q := l.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.held >= q.size {
		q.unsaid++
		q.dropped.Add(1)
		return nil
	}
	q.held++
	q.pending = append(q.pending, queued{ctx: context.WithoutCancel(ctx), h: l.h, r: resolved(r)})
	if q.drained == nil {
		q.drained = make(chan struct{})
		go q.write()
	}
	return nil
}

// resolved is a copy of r with its attributes' LogValuers resolved now, in
// the caller's goroutine: a value that changes after the call is logged as
// it was at the call, as a handler that writes at once would.
func resolved(r slog.Record) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(resolveAttr(a))
		return true
	})
	return out
}

func resolveAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		group := a.Value.Group()
		attrs := make([]slog.Attr, len(group))
		for i, g := range group {
			attrs[i] = resolveAttr(g)
		}
		a.Value = slog.GroupValue(attrs...)
	}
	return a
}

// WithAttrs returns a handler whose records carry attrs, on the same queue.
func (l *LogQueue) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &LogQueue{h: l.h.WithAttrs(attrs), q: l.q}
}

// WithGroup returns a handler whose attributes go in the group name, on the
// same queue.
func (l *LogQueue) WithGroup(name string) slog.Handler {
	return &LogQueue{h: l.h.WithGroup(name), q: l.q}
}

// LogFlushGrace is how long a process that stops should give its last log
// lines (FlushWithin): a sink that takes lines writes them in microseconds,
// and one that does not must not hold up a shutdown.
const LogFlushGrace = time.Second

// FlushWithin is Flush bounded by d, for a process that is about to exit.
func (l *LogQueue) FlushWithin(d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return l.Flush(ctx)
}

// Dropped is how many records were dropped so far: they found the queue full,
// or the wrapped handler failed to write them.
func (l *LogQueue) Dropped() uint64 { return l.q.dropped.Load() }

// Flush waits until every record queued so far has been written, or until ctx
// ends, whichever comes first; it returns ctx's error in the second case. Call
// it, with a short bound, before the process exits, so that its last lines are
// not lost with it.
func (l *LogQueue) Flush(ctx context.Context) error {
	q := l.q
	q.mu.Lock()
	drained := q.drained
	q.mu.Unlock()
	if drained == nil {
		return nil
	}
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// write is the writing goroutine: it writes what is queued, batch by batch,
// then the note of what was dropped, and returns once nothing waits.
func (q *logQueue) write() {
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			unsaid := q.unsaid
			q.unsaid = 0
			if unsaid == 0 {
				close(q.drained)
				q.drained = nil
				q.mu.Unlock()
				return
			}
			q.mu.Unlock()
			q.note(unsaid)
			continue
		}
		q.mu.Unlock()
		for i, rec := range batch {
			if err := rec.h.Handle(rec.ctx, rec.r); err != nil {
				q.dropped.Add(1)
				q.mu.Lock()
				q.unsaid++
				q.mu.Unlock()
			}
			batch[i] = queued{} // let go of the record as soon as it is written
			q.mu.Lock()
			q.held--
			q.mu.Unlock()
		}
	}
}

// note says, once the handler takes lines again, how many it lost.
func (q *logQueue) note(unsaid uint64) {
	if !q.base.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelWarn, "log lines were dropped: the log was not read fast enough", 0)
	r.AddAttrs(slog.Uint64("dropped", unsaid), slog.Uint64("dropped-total", q.dropped.Load()))
	q.base.Handle(context.Background(), r)
}
