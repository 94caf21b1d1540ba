package agent

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchQuiet is how long the file's directory must be quiet after a change
// before the file is read again: an editor's write, its rename and a
// ConfigMap's symlink swap each come as several events within a few
// milliseconds, and are one change.
const watchQuiet = 100 * time.Millisecond

// watchFile reloads the file when it changes on disk (Options.Watch): its
// directory is watched, not the file, so that the ways a file is replaced
// are all seen — an in-place write, an editor's write to a new file renamed
// over it, and a Kubernetes ConfigMap's update, which swaps the ..data
// symlink the file's own symlink goes through, and deletes the old files.
// A change is a change of the file's contents as read through its path,
// after watchQuiet of quiet: events of other files, or a rewrite of the
// same contents, reload nothing.
func (r *run) watchFile() error {
	if !r.opts.Watch || r.opts.Reload == nil {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return &RunError{fmt.Errorf("vitals run: watch %s: %w", r.cfg.File, err)}
	}
	dir := filepath.Dir(r.cfg.File)
	if err := w.Add(dir); err != nil {
		w.Close()
		return &RunError{fmt.Errorf("vitals run: watch %s's directory %s: %w", r.cfg.File, dir, err)}
	}
	seen := fileSum(r.cfg.File)
	done := make(chan struct{})
	ended := make(chan struct{})
	r.stopWatching = func() {
		close(done)
		<-ended
		w.Close()
	}
	go func() {
		defer close(ended)
		quiet := time.NewTimer(time.Hour)
		quiet.Stop()
		for {
			select {
			case <-done:
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				quiet.Reset(watchQuiet)
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				r.logger.Warn("watching the file: an error of the watch; a change may be seen late", "file", r.cfg.File, "err", err)
				quiet.Reset(watchQuiet)
			case <-quiet.C:
				sum := fileSum(r.cfg.File)
				if sum == nil || bytes.Equal(sum, seen) {
					continue // gone for a moment (a swap under way), or the same contents
				}
				seen = sum
				r.Reload("the file changed")
			}
		}
	}()
	return nil
}

// fileSum is the digest of the file at path's contents, read through its
// symlinks; nil when it cannot be read.
func fileSum(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := sha256.Sum256(b)
	return s[:]
}
