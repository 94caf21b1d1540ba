package access

import (
	"cmp"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
)

// watched is a value read from files, read again when one of them changes:
// each use stats them (a system call, as cheap as the handshake's or the
// request's own), and a file whose identity, size or time of change differs
// is read again. A Kubernetes secret volume replaces its files by swapping a
// symlink to a new directory: the files stat as new ones.
//
// A value that does not load (a rotation caught halfway, a certificate new
// beside its old key; a file gone) keeps the last good one, and is said once
// for each state of the files, so that a listener never stops serving for a
// moment's mismatch.
type watched[T any] struct {
	files  []string
	load   func(files []string) (T, error)
	what   string
	logger *slog.Logger

	mu     sync.Mutex
	value  T
	stamps []os.FileInfo // of the files when they were last read, good or not
}

// watch reads the value of files with load: an error when it does not load.
func watch[T any](files []string, load func([]string) (T, error), what string, logger *slog.Logger) (*watched[T], error) {
	w := &watched[T]{files: files, load: load, what: what, logger: cmp.Or(logger, slog.Default())}
	w.stamps = w.stat()
	v, err := load(files)
	if err != nil {
		return nil, err
	}
	w.value = v
	return w, nil
}

// current is the value, read again first when a file changed.
func (w *watched[T]) current() T {
	w.mu.Lock()
	defer w.mu.Unlock()
	stamps := w.stat()
	if w.same(stamps) {
		return w.value
	}
	w.stamps = stamps
	v, err := w.load(w.files)
	if err != nil {
		w.logger.Warn("the "+w.what+" changed but does not load: the last good one is kept", "files", strings.Join(w.files, ","), "err", err)
		return w.value
	}
	w.value = v
	w.logger.Info("the "+w.what+" was read again", "files", strings.Join(w.files, ","))
	return v
}

// stat is the files' stamps; nil for a file that cannot be stated.
func (w *watched[T]) stat() []os.FileInfo {
	out := make([]os.FileInfo, len(w.files))
	for i, f := range w.files {
		out[i], _ = os.Stat(f)
	}
	return out
}

func (w *watched[T]) same(stamps []os.FileInfo) bool {
	for i, s := range stamps {
		old := w.stamps[i]
		switch {
		case s == nil || old == nil:
			if s != old {
				return false
			}
		case !os.SameFile(s, old) || s.Size() != old.Size() || !s.ModTime().Equal(old.ModTime()):
			return false
		}
	}
	return true
}

// readToken is the token of the file (api.ReadToken, as the TCP API reads
// its own).
func readToken(files []string) (string, error) { return api.ReadToken(files[0]) }
