package agent

import (
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
	// The names whose events may change the file: its own, a ConfigMap's
	// ..data, and, for a file that is a symlink into another directory,
	// the file it names there, whose directory is watched too.
	names := map[string]bool{filepath.Base(r.cfg.File): true, "..data": true}
	if real, err := filepath.EvalSymlinks(r.cfg.File); err == nil && filepath.Dir(real) != dir && !isConfigMap(dir) {
		names[filepath.Base(real)] = true
		w.Add(filepath.Dir(real)) // best effort: the link's own directory is watched
	}
	r.sums.Store(fileSum(r.cfg.File))
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
		var first time.Time // of the events that wait for quiet; zero when none
		wait := func() {
			// Quiet, but never later than watchLongest after the first
			// event: a file written to without a pause is read anyway.
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			quiet.Reset(min(watchQuiet, first.Add(watchLongest).Sub(now)))
		}
		for {
			select {
			case <-done:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if names[filepath.Base(ev.Name)] {
					wait()
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				r.logger.Warn("watching the file: an error of the watch; a change may be seen late", "file", r.cfg.File, "err", err)
				wait()
			case <-quiet.C:
				first = time.Time{}
				sum, last := fileSum(r.cfg.File), r.sums.Load()
				if sum == nil || (last != nil && *sum == *last) {
					continue // gone for a moment (a swap under way), or what was read last
				}
				r.Reload("the file changed")
			}
		}
	}()
	return nil
}

// watchLongest bounds how long a change waits for quiet after its first
// event.
const watchLongest = time.Second

// isConfigMap says whether dir is where the kubelet mounts a ConfigMap or
// a Secret: it has the ..data symlink, whose swap is the change.
func isConfigMap(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, "..data"))
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// fileSum is the digest of the file at path's contents, read through its
// symlinks; nil when it cannot be read.
func fileSum(path string) *[sha256.Size]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := sha256.Sum256(b)
	return &s
}
