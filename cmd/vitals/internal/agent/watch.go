package agent

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// watchQuiet is how long the watched directories must be quiet after a
// change before the files are read again: an editor's write, its rename and
// a ConfigMap's symlink swap each come as several events within a few
// milliseconds, and are one change.
const watchQuiet = 100 * time.Millisecond

// watchFile reloads the configuration when it changes on disk
// (Options.Watch): the directory of each file is watched, not the file, so
// that the ways a file is replaced are all seen — an in-place write, an
// editor's write to a new file renamed over it, and a Kubernetes
// ConfigMap's update, which swaps the ..data symlink the file's own symlink
// goes through, and deletes the old files. A directory given as a layer is
// watched for its layers' files too, so that one added or removed is seen.
// A change is a change of the layers' names and contents as read through
// their paths (configSum), after watchQuiet of quiet: events of other
// files, or a rewrite of the same contents, reload nothing.
func (r *run) watchFile() error {
	if !r.opts.Watch || r.opts.Reload == nil {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return &RunError{fmt.Errorf("vitals run: watch %s: %w", r.cfg.File, err)}
	}
	changes, err := watchPaths(w, r.cfg.Paths)
	if err != nil {
		w.Close()
		return &RunError{fmt.Errorf("vitals run: %w", err)}
	}
	r.sums.Store(configSum(r.cfg.Paths))
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
				if changes(ev.Name) {
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
				sum, last := configSum(r.cfg.Paths), r.sums.Load()
				if sum == nil || (last != nil && *sum == *last) {
					continue // gone for a moment (a swap under way), or what was read last
				}
				r.Reload("the file changed")
			}
		}
	}()
	return nil
}

// watchPaths adds to w the directories that the configuration's paths are
// in, and each that is a directory, and says which events' names may
// change the configuration: a file's own name, a ConfigMap's ..data, and,
// for a file that is a symlink into another directory, the file it names
// there, whose directory is watched too; in a directory given as a layer,
// the names of its layers (config.IsLayerName).
func watchPaths(w *fsnotify.Watcher, paths []string) (changes func(name string) bool, err error) {
	names := map[string]map[string]bool{} // by directory
	layerDirs := map[string]bool{}
	add := func(dir string, name ...string) error {
		dir = filepath.Clean(dir)
		if names[dir] == nil {
			if err := w.Add(dir); err != nil {
				return err
			}
			names[dir] = map[string]bool{"..data": true}
		}
		for _, n := range name {
			names[dir][n] = true
		}
		return nil
	}
	for _, path := range paths {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			if err := add(path); err != nil {
				return nil, fmt.Errorf("watch %s: %w", path, err)
			}
			layerDirs[filepath.Clean(path)] = true
			continue
		}
		dir := filepath.Dir(path)
		if err := add(dir, filepath.Base(path)); err != nil {
			return nil, fmt.Errorf("watch %s's directory %s: %w", path, dir, err)
		}
		if real, err := filepath.EvalSymlinks(path); err == nil && filepath.Dir(real) != filepath.Clean(dir) && !isConfigMap(dir) {
			add(filepath.Dir(real), filepath.Base(real)) // best effort: the link's own directory is watched
		}
	}
	return func(name string) bool {
		dir, base := filepath.Dir(name), filepath.Base(name)
		return names[dir][base] || layerDirs[dir] && config.IsLayerName(base)
	}, nil
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

// configSum is the digest of the layers that paths name now
// (config.LayerFiles): their names and contents, read through their
// symlinks; nil when one cannot be read.
func configSum(paths []string) *[sha256.Size]byte {
	files, err := config.LayerFiles(paths)
	if err != nil {
		return nil
	}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	var s [sha256.Size]byte
	h.Sum(s[:0])
	return &s
}
