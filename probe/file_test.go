//go:build unix

package probe_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

func measureFile(t *testing.T, spec probe.FileSpec) health.Result {
	t.Helper()
	return measure(t, probe.File, spec)
}

// writeFile writes a file in a fresh directory and sets its modification time.
func writeFile(t *testing.T, content string, modified time.Time) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "peer1.conf")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, modified, modified); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFilePassesWhenTheFileExistsAndObservesItsAge(t *testing.T) {
	path := writeFile(t, "[Interface]\n", time.Now().Add(-30*time.Second))
	p, err := probe.File(probe.FileSpec{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != "file" || p.String() != "file "+path {
		t.Errorf("kind %q, target %q; want file, %q", p.Kind(), p.String(), "file "+path)
	}
	r := health.Run(context.Background(), p, 5*time.Second)
	if !r.OK || r.Output != "12 bytes, modified 30s ago" {
		t.Fatalf("result %+v, want a pass with %q", r, "12 bytes, modified 30s ago")
	}
	if age, ok := r.ObservedValue.(float64); !ok || age < 30 || age > 31 || r.ObservedUnit != "s" {
		t.Errorf("observed %v %s, want about 30 s", r.ObservedValue, r.ObservedUnit)
	}
}

func TestFileFailsWithGosErrorWhenTheFileDoesNotExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "peer1", "peer1.conf")
	r := measureFile(t, probe.FileSpec{Path: path})
	if want := "stat " + path + ": no such file or directory"; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
}

func TestFileFailsWhenOlderThanTheMaximumAge(t *testing.T) {
	path := writeFile(t, "x", time.Now().Add(-2*time.Minute))
	r := measureFile(t, probe.FileSpec{Path: path, MaxAge: time.Minute})
	want := "last modified 2m0s ago, more than the maximum age of 1m0s"
	if r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
	if age, _ := r.ObservedValue.(float64); age < 120 {
		t.Errorf("observed %v, want the age even on failure", r.ObservedValue)
	}
}

func TestFilePassesWhenYoungerThanTheMaximumAge(t *testing.T) {
	path := writeFile(t, "x", time.Now().Add(-30*time.Second))
	if r := measureFile(t, probe.FileSpec{Path: path, MaxAge: time.Minute}); !r.OK {
		t.Fatalf("result %+v, want a pass", r)
	}
}

func TestFileThatMustNotBeEmptyFailsWhenEmpty(t *testing.T) {
	empty := writeFile(t, "", time.Now())
	if r := measureFile(t, probe.FileSpec{Path: empty, NonEmpty: true}); r.OK || r.Output != "the file is empty" {
		t.Fatalf("result %+v, want a failure %q", r, "the file is empty")
	}
	full := writeFile(t, "x", time.Now())
	if r := measureFile(t, probe.FileSpec{Path: full, NonEmpty: true}); !r.OK {
		t.Fatalf("result %+v, want a pass", r)
	}
	if r := measureFile(t, probe.FileSpec{Path: empty}); !r.OK {
		t.Fatalf("result %+v, want an empty file to pass when emptiness is allowed", r)
	}
}

func TestFileThatMustNotBeEmptyIsADirectoryWithAnEntryOrAFileWithBytes(t *testing.T) {
	dir := t.TempDir()
	if r := measureFile(t, probe.FileSpec{Path: dir, NonEmpty: true}); r.OK || r.Output != "the directory is empty" {
		t.Fatalf("an empty directory: %+v, want a failure %q", r, "the directory is empty")
	}
	if err := os.WriteFile(filepath.Join(dir, "peer1.conf"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := measureFile(t, probe.FileSpec{Path: dir, NonEmpty: true}); !r.OK {
		t.Fatalf("a directory with an entry: %+v, want a pass", r)
	}
	// Another file that is not regular keeps the size rule: a FIFO's is zero.
	fifo := makeFIFO(t)
	if r := measureFile(t, probe.FileSpec{Path: fifo, NonEmpty: true}); r.OK || r.Output != "the file is empty" {
		t.Fatalf("a FIFO: %+v, want a failure %q", r, "the file is empty")
	}
}

func TestFileThatMustBeRegularFailsOnADirectoryNamingItsType(t *testing.T) {
	dir := t.TempDir()
	want := "it is a directory, not a regular file"
	if r := measureFile(t, probe.FileSpec{Path: dir, Regular: true}); r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
	r := measureFile(t, probe.FileSpec{Path: dir})
	if !r.OK || !regexp.MustCompile(`^directory, modified \d+m?s ago$`).MatchString(r.Output) {
		t.Fatalf("result %+v, want a directory to pass when any type is allowed", r)
	}
}

func TestFileContentMustMatchThePattern(t *testing.T) {
	path := writeFile(t, "[Interface]\nAddress = 10.0.0.2\n", time.Now())
	if r := measureFile(t, probe.FileSpec{Path: path, Content: `(?m)^Address = `}); !r.OK {
		t.Fatalf("result %+v, want a pass", r)
	}
	r := measureFile(t, probe.FileSpec{Path: path, Content: `(?m)^PrivateKey = `})
	if want := `the content does not match "(?m)^PrivateKey = "`; r.OK || r.Output != want {
		t.Fatalf("result %+v, want a failure %q", r, want)
	}
}

func TestFileMatchesOnlyTheFirst64KiBOfTheContent(t *testing.T) {
	path := writeFile(t, strings.Repeat("x", 64<<10)+"ready", time.Now())
	if r := measureFile(t, probe.FileSpec{Path: path, Content: "ready"}); r.OK {
		t.Fatalf("result %+v, want a failure: the match lies past 64 KiB", r)
	}
}

func TestFileRejectsABadSpecWhenBuilt(t *testing.T) {
	tests := []struct {
		spec probe.FileSpec
		want string
	}{
		{probe.FileSpec{}, "file probe: path is required"},
		{probe.FileSpec{Path: "/x", MaxAge: -time.Second}, "file probe: max age -1s is negative"},
		{probe.FileSpec{Path: "/x", Content: "("}, "file probe: content pattern \"(\": error parsing regexp: missing closing ): `(`"},
	}
	for _, tt := range tests {
		if _, err := probe.File(tt.spec); err == nil || err.Error() != tt.want {
			t.Errorf("File(%+v):\n got %v\nwant %s", tt.spec, err, tt.want)
		}
	}
}

func TestFileFailsAtItsTimeoutWhenOpeningAFIFOBlocks(t *testing.T) {
	fifo := makeFIFO(t)
	p, err := probe.File(probe.FileSpec{Path: fifo, Content: "."})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseFIFO(t, p, fifo) })
	assertFailsAtTimeout(t, p)
}

func TestFileNamesTheStuckCallAndStartsNoOtherWhileItIsStuck(t *testing.T) {
	fifo := makeFIFO(t)
	p, err := probe.File(probe.FileSpec{Path: fifo, Content: "."})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { releaseFIFO(t, p, fifo) })
	measure := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := p.Measure(ctx)
		return err
	}
	if err, want := measure(), "open "+fifo+": context deadline exceeded"; err == nil ||
		err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first run: %v, want %q wrapping the context's error", err, want)
	}
	if err, want := measure(), "open "+fifo+": the call of an earlier run has not returned: context deadline exceeded"; err == nil ||
		err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second run: %v, want %q", err, want)
	}
}

// makeFIFO makes a named pipe that nothing writes to, so that opening it to
// read blocks.
func makeFIFO(t *testing.T) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return fifo
}

// releaseFIFO unblocks the open that p's goroutine is stuck in, and checks
// that the goroutine then ends: p's next run, which waits for it, gets as far
// as finding the FIFO gone.
func releaseFIFO(t *testing.T, p *probe.Prober, fifo string) {
	t.Helper()
	// O_RDWR: opening for writing alone fails (ENXIO, with O_NONBLOCK) or
	// blocks when the stuck reader has not yet been counted.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open the FIFO to release its reader: %v", err)
	}
	if err := os.Remove(fifo); err != nil {
		t.Error(err)
	}
	w.Close() // the stuck goroutine's read gets EOF
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.Measure(ctx); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("run after releasing the FIFO: %v, want that it is gone", err)
	}
}
