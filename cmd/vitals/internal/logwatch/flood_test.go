package logwatch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health/healthtest"
)

// floodEnv, set to a number of bytes, makes the test binary a workload that
// prints that many bytes of lines on stdout and as many on stderr, both at
// once, then "Listening on" as the last line of stdout.
const floodEnv = "LOGWATCH_FLOOD"

func TestMain(m *testing.M) {
	if v := os.Getenv(floodEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(flood(n))
	}
	os.Exit(m.Run())
}

// flood is the workload: n bytes of lines on each stream, written through
// 64 KiB buffers as a busy program's are.
func flood(n int) int {
	var wg sync.WaitGroup
	for _, s := range []struct {
		f      *os.File
		stream byte
	}{{os.Stdout, 'o'}, {os.Stderr, 'e'}} {
		wg.Go(func() {
			w := bufio.NewWriterSize(s.f, 64<<10)
			var line []byte
			for seq, written := 0, 0; written < n; seq++ {
				line = floodLine(line[:0], s.stream, seq)
				w.Write(line)
				written += len(line)
			}
			w.Flush()
		})
	}
	wg.Wait()
	if _, err := os.Stdout.WriteString(floodLast); err != nil {
		return 1
	}
	return 0
}

const (
	floodLast = "Listening on :8080\n"
	floodFail = "e 100 OIDC provider setup failed: connection refused\n"
	letters   = "abcdefghijklmnopqrstuvwxyz"
)

var payload = strings.Repeat(letters, 60000/len(letters)+2)

// floodLine appends line seq of a stream ('o' or 'e') to b: mostly 20 to
// 1000 bytes, one in 500 longer than a pipe takes in one write, and on
// stderr one failing line.
func floodLine(b []byte, stream byte, seq int) []byte {
	if stream == 'e' && seq == 100 {
		return append(b, floodFail...)
	}
	n := 20 + seq*37%1000
	if seq%500 == 499 {
		n = 5000 + seq*131%50000
	}
	b = append(b, stream, ' ')
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, ' ')
	b = append(b, payload[seq%len(letters):][:n]...)
	return append(b, '\n')
}

// floodWant is what a stream of flood(n) holds: how many lines, and their
// checksum.
func floodWant(n int, stream byte) (lines int, sum [sha256.Size]byte) {
	h := sha256.New()
	var line []byte
	for written := 0; written < n; lines++ {
		line = floodLine(line[:0], stream, lines)
		h.Write(line)
		written += len(line)
	}
	if stream == 'o' {
		h.Write([]byte(floodLast))
		lines++
	}
	copy(sum[:], h.Sum(nil))
	return lines, sum
}

// received is what arrived of each stream in the shared destination, and
// what was wrong with it.
type received struct {
	lines    map[byte]int
	sums     map[byte][sha256.Size]byte
	last     map[byte]string
	problems []string
}

// readShared reads the shared destination to its end, checking that every
// line is one the workload printed, whole, in its stream's order. pause is
// how long it rests between reads: a slow reader. It runs beside the test,
// so it reports what is wrong rather than failing the test itself, and reads
// on to the end so that nothing upstream blocks.
func readShared(r io.Reader, n int, pause time.Duration) received {
	rec := received{lines: map[byte]int{'o': 0, 'e': 0}, sums: map[byte][sha256.Size]byte{}, last: map[byte]string{}}
	hashes := map[byte]hashState{'o': sha256.New(), 'e': sha256.New()}
	stdoutLines, _ := floodWant(n, 'o')
	br := bufio.NewReaderSize(pausing{r, pause}, 2*MaxLine)
	var want []byte
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && len(rec.problems) < 5 {
			stream := line[0]
			if stream == floodLast[0] {
				stream = 'o'
			}
			if _, ok := hashes[stream]; !ok {
				rec.problems = append(rec.problems, fmt.Sprintf("a line of no stream: %.100q…", line))
				continue
			}
			seq := rec.lines[stream]
			want = floodLine(want[:0], stream, seq)
			if stream == 'o' && seq == stdoutLines-1 {
				want = append(want[:0], floodLast...)
			}
			if !bytes.Equal(line, want) {
				rec.problems = append(rec.problems, fmt.Sprintf("line %d of %c is\n%.100q…\nwant\n%.100q…", seq, stream, line, want))
			}
			hashes[stream].Write(line)
			rec.lines[stream]++
			rec.last[stream] = string(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rec.problems = append(rec.problems, err.Error())
			io.Copy(io.Discard, r)
			break
		}
	}
	for s, h := range hashes {
		var sum [sha256.Size]byte
		copy(sum[:], h.Sum(nil))
		rec.sums[s] = sum
	}
	return rec
}

type hashState interface {
	io.Writer
	Sum([]byte) []byte
}

type pausing struct {
	r     io.Reader
	pause time.Duration
}

func (p pausing) Read(b []byte) (int, error) {
	if p.pause > 0 {
		time.Sleep(p.pause)
		b = b[:min(len(b), 4096)]
	}
	return p.r.Read(b)
}

// runFlood starts a workload printing n bytes on each stream, copies both
// streams through into one pipe, as when vitals's stdout and stderr are one
// file, and reads that pipe with a pause between reads.
func runFlood(t *testing.T, n int, pause time.Duration) {
	clock := healthtest.NewClock(time.Time{})
	started, _ := NewCheck("started", Spec{Pattern: "Listening on", Stream: Stdout}, clock)
	onStderr, _ := NewCheck("on-stderr", Spec{Pattern: "Listening on", Stream: Stderr}, clock)
	setupErrors, _ := NewCheck("setup-errors", Spec{FailPattern: "OIDC provider setup failed", Window: 30 * time.Second}, clock)
	streams := New([]*Check{started, onStderr, setupErrors}, nil)

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), floodEnv+"="+strconv.Itoa(n))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	// One pipe, written through two files as fds 1 and 2 of a shell's 2>&1.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w2 := dup(t, w)
	got := make(chan received, 1)
	go func() { got <- readShared(r, n, pause) }()

	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := started.Check(context.Background()); err == nil {
		t.Fatal("started passes before the workload printed anything")
	}
	copied := make(chan error, 2)
	go func() { copied <- streams.Copy(w, stdout, Stdout) }()
	go func() { copied <- streams.Copy(w2, stderr, Stderr) }()
	for range 2 {
		if err := <-copied; err != nil {
			t.Error(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("workload: %v", err)
	}
	w.Close()
	w2.Close()
	rec := <-got
	for _, p := range rec.problems {
		t.Error(p)
	}
	for _, s := range []byte{'o', 'e'} {
		lines, sum := floodWant(n, s)
		if got := rec.sums[s]; rec.lines[s] != lines || got != sum {
			t.Errorf("stream %c: %d lines with checksum %x, want %d with %x", s, rec.lines[s], got[:8], lines, sum[:8])
		}
	}
	if rec.last['o'] != floodLast {
		t.Errorf("stdout's last line is %.80q, want %q", rec.last['o'], floodLast)
	}
	if err := started.Check(context.Background()); err != nil {
		t.Errorf("started, after the flood and its last line: %v", err)
	}
	if err := onStderr.Check(context.Background()); err == nil || err.Error() != `no line matching "Listening on" yet` {
		t.Errorf("a stderr check, after a flood that printed its line on stdout: %v", err)
	}
	want := `line matching "OIDC provider setup failed" in the last 30s: ` + strings.TrimSuffix(floodFail, "\n")
	if err := setupErrors.Check(context.Background()); err == nil || err.Error() != want {
		t.Errorf("setup-errors, after the flood: %v, want %s", err, want)
	}
}

// dup returns a second file for the open file f.
func dup(t *testing.T, f *os.File) *os.File {
	t.Helper()
	raw, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	var dupErr error
	if err := raw.Control(func(u uintptr) { fd, dupErr = syscall.Dup(int(u)) }); err != nil {
		t.Fatal(err)
	}
	if dupErr != nil {
		t.Fatal(dupErr)
	}
	return os.NewFile(uintptr(fd), f.Name()+" (dup)")
}

func TestAFloodOfFiftyMegabytesPassesThroughWholeAndIsWatched(t *testing.T) {
	runFlood(t, 25<<20, 0) // on each stream
}

func TestASlowReaderOfAFloodLosesNothing(t *testing.T) {
	runFlood(t, 512<<10, 100*time.Microsecond)
}
