package logwatch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health/healthtest"
)

// recorder keeps every Write it is given, apart.
type recorder struct {
	mu     sync.Mutex
	writes [][]byte
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

// feed writes data into a new pipe in chunks of random sizes, as a
// workload's writes come, and returns the pipe's read end.
func feed(t *testing.T, data []byte, seed uint64) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	go func() {
		defer w.Close()
		rnd := rand.New(rand.NewPCG(seed, 1))
		for len(data) > 0 {
			n := min(len(data), 1+rnd.IntN(3*maxBatch))
			if _, err := w.Write(data[:n]); err != nil {
				return
			}
			data = data[n:]
		}
	}()
	return r
}

// cuts are where a Write may end in data: after a "\n", at the end, and
// every MaxLine bytes into a line longer than MaxLine.
func cuts(data []byte) map[int]bool {
	ok := map[int]bool{len(data): true}
	start := 0
	for i, b := range data {
		if i-start == MaxLine {
			ok[i], start = true, i
		}
		if b == '\n' {
			ok[i+1], start = true, i+1
		}
	}
	return ok
}

func TestCopyPassesTheBytesThroughInWholeLines(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 3*MaxLine/16) + "tail"
	var many strings.Builder
	for i := range 5000 {
		many.WriteString(strings.Repeat("y", i%300) + "\n")
	}
	for _, tc := range []struct{ name, data string }{
		{"nothing", ""},
		{"one line", "Listening on :8080\n"},
		{"lines", "a\nbb\n\nccc\n"},
		{"a last line without a newline", "a\nthe end"},
		{"only a line without a newline", "prompt> "},
		{"CRLF line endings", "a\r\nb\r\n\r\nc\r"},
		{"any bytes at all", "\x00\xff\xfe\x1b[31mred\x1b[0m\n\t\v\f\r\x7f\n"},
		{"many lines, more than a write holds", many.String()},
		{"a line longer than the cap", "before\n" + long + "\nafter\n"},
		{"a line longer than the cap, at the end", "before\n" + long},
		{"a line of exactly the cap", strings.Repeat("z", MaxLine-1) + "\n" + "next\n"},
		{"a line one byte over the cap", strings.Repeat("z", MaxLine) + "\n" + "next\n"},
		{"lines longer than a batch", strings.Repeat(strings.Repeat("w", 3*maxBatch)+"\n", 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(3) {
				var rec recorder
				if err := New(nil, nil).Copy(&rec, feed(t, []byte(tc.data), seed), Stdout); err != nil {
					t.Fatal(err)
				}
				if got := bytes.Join(rec.writes, nil); !bytes.Equal(got, []byte(tc.data)) {
					t.Fatalf("copied %d bytes %.80q…, want %d bytes %.80q…", len(got), got, len(tc.data), tc.data)
				}
				ok, at := cuts([]byte(tc.data)), 0
				for i, w := range rec.writes {
					at += len(w)
					if !ok[at] {
						t.Fatalf("write %d ends inside a line: %.40q…%q", i, w, w[max(len(w)-40, 0):])
					}
					if nl := bytes.IndexByte(w, '\n'); len(w) == 0 || len(w) > MaxLine || len(w) > maxBatch && nl >= 0 && nl < len(w)-1 {
						t.Fatalf("write %d of %d bytes: want one line, a piece of one, or lines of at most %d bytes", i, len(w), maxBatch)
					}
				}
			}
		})
	}
}

func TestCopyMatchesALineLongerThanTheCapInPieces(t *testing.T) {
	c, err := NewCheck("started", Spec{Pattern: "^Listening on"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := strings.Repeat("x", MaxLine) + "Listening on :8080 " + strings.Repeat("y", 100) + "\n"
	if err := New([]*Check{c}, nil).Copy(io.Discard, feed(t, []byte(data), 0), Stdout); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("the second piece starts with the pattern, yet: %v", err)
	}
}

func TestCopyCallsChangedWhenAnAnswerMayHaveChanged(t *testing.T) {
	started, _ := NewCheck("started", Spec{Pattern: "Listening on"}, nil)
	errs, _ := NewCheck("errors", Spec{FailPattern: "failed"}, nil)
	var calls []string
	var s *Streams
	s = New([]*Check{started, errs}, func(c *Check) {
		// It holds no lock: the check answers, with what it just saw.
		err := c.Check(context.Background())
		calls = append(calls, c.Name()+" "+strings.Split(errString(err), ":")[0])
	})
	for _, text := range []string{
		"starting\n",
		"Listening on :8080\nsetup failed\nsetup failed again\n", // one read, one call each
		"Listening on :8081\n", // seen already: no call
		"failed again\n",       // failing already, within the window: no call
	} {
		if err := s.Copy(io.Discard, strings.NewReader(text), Stdout); err != nil {
			t.Fatal(err)
		}
	}
	s.Reset()
	if err := s.Copy(io.Discard, strings.NewReader("Listening on :8082\n"), Stdout); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"started ",
		`errors line matching "failed" in the last 1m0s`,
		"started ",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("changed was called for\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// blocked is a destination that takes nothing until it is released.
type blocked struct {
	release chan struct{}
	w       io.Writer
}

func (b blocked) Write(p []byte) (int, error) {
	<-b.release
	return b.w.Write(p)
}

func TestCopyHoldsTheWorkloadBackWhileItsDestinationBlocks(t *testing.T) {
	data := bytes.Repeat([]byte(strings.Repeat("z", 99)+"\n"), 20000) // 2 MB: far more than a pipe and Copy hold
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		defer w.Close()
		w.Write(data)
	}()
	var out bytes.Buffer
	dst := blocked{release: make(chan struct{}), w: &out}
	copied := make(chan error, 1)
	go func() { copied <- New(nil, nil).Copy(dst, r, Stdout) }()
	select {
	case <-wrote:
		t.Fatal("the workload wrote everything while its output was blocked: Copy buffered it")
	case <-time.After(100 * time.Millisecond):
	}
	close(dst.release)
	<-wrote
	if err := <-copied; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Errorf("copied %d bytes, want the %d written", out.Len(), len(data))
	}
}

// failing fails every Write after its first n.
type failing struct {
	n      int
	writes int
}

var errGone = errors.New("gone")

func (f *failing) Write(p []byte) (int, error) {
	f.writes++
	if f.writes > f.n {
		return 0, errGone
	}
	return len(p), nil
}

func TestCopyGoesOnReadingAfterAWriteFails(t *testing.T) {
	c, _ := NewCheck("started", Spec{Pattern: "Listening on"}, nil)
	data := bytes.Repeat([]byte(strings.Repeat("z", 99)+"\n"), 20000)
	data = append(data, "Listening on :8080\n"...)
	dst := &failing{n: 3}
	err := New([]*Check{c}, nil).Copy(dst, feed(t, data, 0), Stdout)
	if !errors.Is(err, errGone) || err.Error() != "write stdout: gone" {
		t.Errorf("Copy returned %v, want the write's error", err)
	}
	if dst.writes != 4 {
		t.Errorf("%d writes, want none after the one that failed", dst.writes)
	}
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("the last line, read after the write failed: %v", err)
	}
}

// brokenReader gives its data, then an error.
type brokenReader struct {
	data string
	err  error
}

func (b *brokenReader) Read(p []byte) (int, error) {
	if b.data == "" {
		return 0, b.err
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	return n, nil
}

func TestCopyWritesWhatItReadBeforeAnErrorAndReturnsIt(t *testing.T) {
	var out bytes.Buffer
	err := New(nil, nil).Copy(&out, &brokenReader{"a\nhalf a line", os.ErrClosed}, Stderr)
	if !errors.Is(err, os.ErrClosed) || err.Error() != "read stderr: file already closed" {
		t.Errorf("Copy returned %v", err)
	}
	if out.String() != "a\nhalf a line" {
		t.Errorf("copied %q", out.String())
	}
}

// slow is a destination that takes a little at a time.
type slow struct{ w io.Writer }

func (s slow) Write(p []byte) (int, error) {
	time.Sleep(50 * time.Microsecond)
	return s.w.Write(p)
}

func TestASlowDestinationLosesNothing(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789 abcdefghijklmnopqrstuvwxyz\n"), 30000) // 1.1 MB: many times what a pipe and Copy hold
	var out bytes.Buffer
	if err := New(nil, nil).Copy(slow{&out}, feed(t, data, 0), Stdout); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Errorf("copied %d bytes, want the %d written", out.Len(), len(data))
	}
}

func TestChecksRunWhileTheirLinesArrive(t *testing.T) {
	started, _ := NewCheck("started", Spec{Pattern: "Listening on"}, nil)
	errs, _ := NewCheck("errors", Spec{FailPattern: "failed"}, nil)
	s := New([]*Check{started, errs}, nil)
	var data []byte
	for i := range 20000 {
		data = append(data, "setup failed, attempt "...)
		data = append(data, strings.Repeat("x", i%200)...)
		data = append(data, '\n')
	}
	data = append(data, "Listening on :8080\n"...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, stream := range []string{Stdout, Stderr} {
			if err := s.Copy(io.Discard, feed(t, data, 0), stream); err != nil {
				t.Error(err)
			}
			s.Reset()
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		started.Check(context.Background())
		errs.Check(context.Background())
	}
}

// changes is a Streams' changed that keeps every check it is called with,
// from any goroutine.
type changes chan *Check

func (ch changes) changed(c *Check) { ch <- c }

// next waits (a guard only) for the next call.
func (ch changes) next(t *testing.T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("changed was not called: %s", what)
	}
}

// none says that no call came (within a moment: a guard of a negative).
func (ch changes) none(t *testing.T, what string) {
	t.Helper()
	select {
	case c := <-ch:
		t.Fatalf("changed was called for %s: %s", c.Name(), what)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestAFailLineAfterTheWindowChangesTheAnswerAgain(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	errs, _ := NewCheck("errors", Spec{FailPattern: "failed", Window: time.Minute}, clk)
	ch := make(changes, 10)
	s := New([]*Check{errs}, ch.changed)
	copyLine := func(line string) {
		t.Helper()
		if err := s.Copy(io.Discard, strings.NewReader(line), Stdout); err != nil {
			t.Fatal(err)
		}
	}
	copyLine("setup failed\n")
	ch.next(t, "when it began to fail")
	clk.Advance(30 * time.Second)
	copyLine("setup failed\n") // still failing: nothing changed
	ch.none(t, "a line while failing")
	clk.Advance(time.Minute)
	ch.next(t, "when the window of the second line ended")
	copyLine("setup failed\n") // passing since the window ended: fails again
	ch.next(t, "a line after the window")
}

// A fail-pattern check passes again the moment its window ends, not at its
// next period: the check is woken then, and passes.
func TestAFailLinePassesAgainTheMomentItsWindowEnds(t *testing.T) {
	clk := healthtest.NewClock(time.Time{})
	errs, _ := NewCheck("errors", Spec{FailPattern: "failed", Window: 2 * time.Second}, clk)
	ch := make(changes, 10)
	s := New([]*Check{errs}, ch.changed)
	if err := s.Copy(io.Discard, strings.NewReader("setup failed\n"), Stdout); err != nil {
		t.Fatal(err)
	}
	ch.next(t, "the line")
	clk.Advance(2*time.Second - time.Nanosecond)
	ch.none(t, "a nanosecond before the window ends")
	if err := errs.Check(context.Background()); err == nil {
		t.Fatal("the check passes a nanosecond before its window ends")
	}
	clk.Advance(time.Nanosecond)
	ch.next(t, "the window's end")
	if err := errs.Check(context.Background()); err != nil {
		t.Fatalf("at the window's end: %v, want a pass", err)
	}
	// Reset before the end: nothing is told.
	if err := s.Copy(io.Discard, strings.NewReader("setup failed\n"), Stdout); err != nil {
		t.Fatal(err)
	}
	ch.next(t, "the second line")
	s.Reset()
	clk.Advance(time.Minute)
	ch.none(t, "a window that ended after a reset")
}
