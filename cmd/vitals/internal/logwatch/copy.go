package logwatch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// MaxLine is the longest line Copy writes and matches whole: 64 KiB, its
// "\n" included. A longer line is cut into pieces of MaxLine bytes, each
// written and matched as a line of its own (its bytes unchanged, no newline
// added), so that a workload that never prints a newline cannot make vitals
// hold its output without bound: MaxLine is all that Copy holds of a stream.
// Docker's json-file driver cuts lines at 16 KiB; a stack trace or a JSON
// log record fits in 64.
const MaxLine = 64 << 10

// maxBatch is the most Copy writes in one Write when it writes several
// lines at once: PIPE_BUF on Linux. A write of up to that many bytes into a
// pipe lands whole, between other writers' writes, so that vitals's own log
// lines can share a pipe with the workload's without cutting into them.
const maxBatch = 4096

// Streams copies the workload's stdout and stderr through to vitals's own,
// and shows each line to the log checks of its stream. It holds no goroutine:
// the supervisor runs one Copy per stream, of each instance of the workload.
type Streams struct {
	checks  atomic.Pointer[[]*Check] // Set swaps them whole
	changed func(*Check)
	// writeMu lets one Write into a destination at a time, whatever the
	// destination: stdout and stderr are often one file or pipe, where two
	// writes at once could mix inside a line longer than maxBatch.
	writeMu sync.Mutex
}

// New returns the Streams that feed checks. When a check's answer may have
// changed (its Pattern matched for the first time, its FailPattern matched,
// or the window of its latest FailPattern line ended), changed is called
// with it, so that the agent can run it at once rather than a period later;
// changed may be nil. It is called in Copy's goroutine, before the lines
// that changed the check are written, or, at a window's end, in a goroutine
// of the check's own, holding no lock (it may call Check or Reset): once
// per read that changed the check,
// which under a flood of failing lines is often, and while it runs the
// stream is not copied. So it must return at once: hand the check to another
// goroutine without waiting (a channel with a buffer of one per check, sent
// to with select and default, turns a flood into one run at a time).
func New(checks []*Check, changed func(*Check)) *Streams {
	if changed == nil {
		changed = func(*Check) {}
	}
	s := &Streams{changed: changed}
	s.Set(checks)
	return s
}

// Set makes checks the ones the lines are shown to, from the next lines
// read on (a reload of the file): a check that is not among them any more
// sees no more lines; a check new to them sees the lines from then on, as
// one does from its workload's start. Each check is of one Streams only.
func (s *Streams) Set(checks []*Check) {
	for _, c := range checks {
		if c.expired == nil { // new: one already shown lines keeps its own
			c.expired = func() { s.changed(c) }
		}
	}
	s.checks.Store(&checks)
}

// Reset forgets what every check saw: the workload restarted, so its new
// instance must print a Pattern line again, and the old instance's failing
// lines no longer count. Call it before the new instance starts, and after
// the Copy calls of the old one have returned where that can be waited for:
// lines still read from the old instance's pipes count as the new one's.
func (s *Streams) Reset() {
	for _, c := range *s.checks.Load() {
		c.reset()
	}
}

// Copy copies src to dst until src ends, line by line, and shows each line
// to the checks whose Stream is stream (Stdout or Stderr) or "".
//
// What reaches dst is exactly what src gave, in order: no byte is changed,
// dropped or added. Every line, with its "\n", goes to dst in one Write, so
// that lines copied into one file by two Copy calls never mix; several
// complete lines may share a Write of up to 4 KiB. A line longer than
// MaxLine goes in pieces of MaxLine bytes, one Write each, and the other
// stream's lines may come between them. A line is held until its "\n"
// arrives, MaxLine bytes of it have, or src ends: a last line without "\n"
// is written as it is when src ends.
//
// When dst blocks, Copy blocks, and so does the workload once its pipe is
// full: nothing is lost, and Copy holds no more than MaxLine bytes. When a
// Write fails, Copy goes on reading src and showing its lines to the checks,
// writing nothing more, so that the workload does not hang on a full pipe;
// it returns that Write's error when src ends. Copy returns nil at the end
// of src (io.EOF), and src's error otherwise: closing src from another
// goroutine ends it. Copy calls on one Streams may run at once.
func (s *Streams) Copy(dst io.Writer, src io.Reader, stream string) error {
	cp := copier{streams: s, dst: dst, stream: stream}
	buf := make([]byte, MaxLine)
	r, w := 0, 0 // buf[r:w] was read and not copied yet: part of a line
	for {
		n, err := src.Read(buf[w:])
		w += n
		if i := bytes.LastIndexByte(buf[w-n:w], '\n'); i >= 0 {
			end := w - n + i + 1
			cp.copy(buf[r:end])
			r = end
		} else if r == 0 && w == len(buf) {
			cp.copy(buf) // a piece of a line longer than MaxLine
			r = w
		}
		if err != nil {
			if r < w {
				cp.copy(buf[r:w])
			}
			var errs []error
			if err != io.EOF {
				errs = append(errs, fmt.Errorf("read %s: %w", stream, err))
			}
			if cp.err != nil {
				errs = append(errs, fmt.Errorf("write %s: %w", stream, cp.err))
			}
			return errors.Join(errs...)
		}
		switch {
		case r == w:
			r, w = 0, 0
		case w == len(buf):
			w = copy(buf, buf[r:w])
			r = 0
		}
	}
}

// copier is one Copy's state.
type copier struct {
	streams *Streams
	dst     io.Writer
	stream  string // Stdout or Stderr: it shows lines to the checks of it, or of both
	err     error  // the first failed Write: nothing is written after it
	text    text   // what the checks see
}

// copy shows lines to the checks, then writes them: complete lines each
// ending in "\n", of which the last may lack it at the end of src, or one
// piece of a long line.
func (cp *copier) copy(lines []byte) {
	cp.text.set(lines)
	for _, c := range *cp.streams.checks.Load() {
		if c.spec.Stream != "" && c.spec.Stream != cp.stream {
			continue
		}
		if c.see(&cp.text) {
			cp.streams.changed(c)
		}
	}
	for len(lines) > 0 && cp.err == nil {
		n := batch(lines)
		cp.streams.writeMu.Lock()
		m, err := cp.dst.Write(lines[:n])
		cp.streams.writeMu.Unlock()
		if err == nil && m < n {
			err = io.ErrShortWrite
		}
		cp.err = err
		lines = lines[n:]
	}
}

// batch is how much of lines goes in the next Write: as many whole lines as
// fit in maxBatch, or a longer line alone.
func batch(lines []byte) int {
	if len(lines) <= maxBatch {
		return len(lines)
	}
	if i := bytes.LastIndexByte(lines[:maxBatch], '\n'); i >= 0 {
		return i + 1
	}
	if i := bytes.IndexByte(lines, '\n'); i >= 0 {
		return i + 1
	}
	return len(lines)
}
