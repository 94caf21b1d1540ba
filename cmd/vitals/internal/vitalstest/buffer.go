// Package vitalstest has what the tests of vitals's binary and its parts
// share: a buffer that a logger, a command or a workload writes while the
// test reads it, directories short enough for a unix socket, and a real
// Pebble to record notices in.
package vitalstest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is a bytes.Buffer that takes turns: safe for one writer and one
// reader at once, and for several writers, whose writes do not interleave
// within one Write. The zero value is empty and
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
