package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// FileSpec is a file check: a path that must exist and, optionally, be a
// non-empty regular file, recently modified, with content that matches. It is
// how a workload says it is ready once it has generated a file (a peer config,
// a certificate, a socket).
type FileSpec struct {
	// Path is the file, absolute or relative to the working directory of the
	// process at each run. Symbolic links are followed. Required.
	Path string
	// NonEmpty requires a regular file's size to be above zero, and a
	// directory to have an entry. Other files are judged by the size stat
	// reports, which is zero for a FIFO or a device: pair it with Regular for
	// those.
	NonEmpty bool
	// Regular requires a regular file: not a directory, FIFO, socket or
	// device.
	Regular bool
	// MaxAge is how long ago the file may have been modified at most, for a
	// file that a live process rewrites. Default 0: any age.
	MaxAge time.Duration
	// Content is a regular expression that the first 64 KiB of the file must
	// match. Setting it makes each run open and read the file.
	Content string
}

// maxContent caps what is read of a file to match Content: a generated
// config or a status file is small, and a probe must not read a log.
const maxContent = 64 << 10

// File builds a file probe. Each run stats the file, checks what the spec
// asks in the order type, size (for a directory, whether it has an entry),
// age, then reads it if Content is set.
//
// A failure says why, without repeating the path, which the check's target
// names: Go's error for a file that is missing or unreadable ("stat
// /config/peer1/peer1.conf: no such file or directory"), "the file is
// empty" (or "the directory is empty"), "it is a directory, not a regular
// file" (or another type), "last modified 2m0s ago, more than the maximum
// age of 1m0s", or `the content does not match "pattern"`. The content
// itself is never shown: it may hold secrets. A pass says "12 bytes,
// modified 3s ago". The observed value is the file's age in seconds.
//
// Any filesystem call can hang: a stat on a stuck NFS mount, an open of a FIFO
// that has no writer. So the calls run in a goroutine of their own, and a run
// returns when its context ends, with an error that names the call and wraps
// the context's error. That goroutine cannot be interrupted: it ends when the
// call returns. A probe never has more than one such goroutine: while one is
// stuck, later runs wait for it, until their own context ends, instead of
// starting another.
func File(s FileSpec) (*Prober, error) {
	if s.Path == "" {
		return nil, Invalid("file", "path is required")
	}
	if s.MaxAge < 0 {
		return nil, Invalid("file", "max age %v is negative", s.MaxAge)
	}
	content, err := compile("content", s.Content)
	if err != nil {
		return nil, Invalid("file", "%w", err)
	}
	f := &fileProbe{spec: s, content: content, busy: make(chan struct{}, 1)}
	f.call.Store(&callStat)
	return &Prober{kind: "file", target: "file " + s.Path, measure: f.measure}, nil
}

type fileProbe struct {
	spec    FileSpec
	content *regexp.Regexp
	// busy holds a token while a goroutine makes filesystem calls for this
	// probe, so that a stuck call never has another piled up behind it.
	busy chan struct{}
	// call is what that goroutine is doing ("stat", "open", "read"), for the
	// error of a run that ends before it does.
	call atomic.Pointer[string]
}

// The calls a run makes, named as in Go's errors.
var (
	callStat    = "stat"
	callOpen    = "open"
	callRead    = "read"
	callReaddir = "readdirent"
)

type fileOutcome struct {
	obs health.Observation
	err error
}

func (f *fileProbe) measure(ctx context.Context) (health.Observation, error) {
	select {
	case f.busy <- struct{}{}:
	case <-ctx.Done():
		return health.Observation{}, fmt.Errorf("%s %s: the call of an earlier run has not returned: %w",
			*f.call.Load(), f.spec.Path, ctx.Err())
	}
	f.call.Store(&callStat)
	done := make(chan fileOutcome, 1) // buffered: a goroutine that returns late never blocks
	go func() {
		defer func() { <-f.busy }()
		obs, err := f.inspect()
		done <- fileOutcome{obs, err}
	}()
	select {
	case o := <-done:
		return o.obs, o.err
	case <-ctx.Done():
		select {
		case o := <-done: // finished at the deadline: its own answer says more
			return o.obs, o.err
		default:
		}
		return health.Observation{}, fmt.Errorf("%s %s: %w", *f.call.Load(), f.spec.Path, ctx.Err())
	}
}

// inspect makes the filesystem calls and judges what they return. It runs in
// a goroutine of its own, since any call may block for good.
func (f *fileProbe) inspect() (health.Observation, error) {
	path := f.spec.Path
	info, err := os.Stat(path)
	if err != nil {
		return health.Observation{}, err
	}
	age := time.Since(info.ModTime())
	obs := health.Observation{
		Value: float64(age.Milliseconds()) / 1000,
		Unit:  "s",
	}
	if info.Mode().IsRegular() {
		obs.Message = fmt.Sprintf("%d bytes, modified %s", info.Size(), ago(age))
	} else {
		obs.Message = fmt.Sprintf("%s, modified %s", fileType(info.Mode()), ago(age))
	}
	if f.spec.Regular && !info.Mode().IsRegular() {
		return obs, fmt.Errorf("it is a %s, not a regular file", fileType(info.Mode()))
	}
	if f.spec.NonEmpty {
		if info.IsDir() {
			empty, err := f.emptyDir(path)
			if err != nil {
				return obs, err
			}
			if empty {
				return obs, errors.New("the directory is empty")
			}
		} else if info.Size() == 0 {
			return obs, errors.New("the file is empty")
		}
	}
	switch {
	case f.spec.MaxAge > 0 && age > f.spec.MaxAge:
		return obs, fmt.Errorf("last modified %s, more than the maximum age of %v", ago(age), f.spec.MaxAge)
	case f.content == nil:
		return obs, nil
	}
	f.call.Store(&callOpen)
	file, err := os.Open(path)
	if err != nil {
		return obs, err
	}
	defer file.Close()
	f.call.Store(&callRead)
	head, err := io.ReadAll(io.LimitReader(file, maxContent))
	if err != nil {
		return obs, err
	}
	if !f.content.Match(head) {
		return obs, fmt.Errorf("the content does not match %q", f.content.String())
	}
	return obs, nil
}

// emptyDir reports whether the directory at path has no entry, reading one
// name at most: a directory's size says nothing of its entries.
func (f *fileProbe) emptyDir(path string) (bool, error) {
	f.call.Store(&callOpen)
	dir, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer dir.Close()
	f.call.Store(&callReaddir)
	_, err = dir.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// ago says how long ago a file was modified, in whole seconds (a
// millisecond is noise next to a file's age) unless it is younger than one.
func ago(age time.Duration) string {
	switch {
	case age < 0: // a clock that differs from the file server's
		return fmt.Sprintf("%v in the future", (-age).Round(time.Millisecond))
	case age < time.Second:
		return fmt.Sprintf("%v ago", age.Round(time.Millisecond))
	}
	return fmt.Sprintf("%v ago", age.Round(time.Second))
}

// fileType names the type of a file that is not regular. (Stat follows
// symbolic links, so it never sees one.)
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "irregular file"
}
