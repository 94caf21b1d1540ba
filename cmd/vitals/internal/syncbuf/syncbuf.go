// Package syncbuf has the buffer that tests give a logger, a command or a
// workload to write while the test reads it: a bytes.Buffer safe for one
// writer and one reader at once (and for several writers, whose writes do
// not interleave within one Write).
package syncbuf

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is a bytes.Buffer that takes turns. The zero value is empty and
// ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p, whole.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logger is a text logger that writes to the buffer, every level included
// but debug.
func (s *Buffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(s, nil)) }
