package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/health"
)

// historySaveEvery bounds how often history.file is written while results
// come: a check of period 1s would otherwise rewrite it every second, and
// a restart loses at most this much.
const historySaveEvery = 10 * time.Second

// savedHistories is history.file: each check's kept results, with its
// definition, so that a check changed between two runs of vitals does not
// begin with the results of what it tested before.
type savedHistories struct {
	Checks []savedHistory `json:"checks"`
}

type savedHistory struct {
	Name       string          `json:"name"`
	Definition string          `json:"definition"`
	Results    []health.Result `json:"results"`
}

// digest is a digest of c's definition: two checks alike (sameCheck)
// have the same one.
func digest(c config.Check) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%#v", definitionOf(c)))
	return hex.EncodeToString(sum[:12])
}

// restoreHistory gives each check the results history.file kept of the
// check of its name and definition, before the checks start, then saves
// them there as they come. A file that cannot be read costs its histories,
// not the run: it is only what the page shows.
func (r *run) restoreHistory() error {
	file := r.cfg.History.File
	if file == "" {
		return nil
	}
	restored, err := r.readHistory(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.logger.Warn("the checks' histories begin anew", "file", file, "err", err)
	default:
		r.logger.Info("the checks' histories go on from the file", "file", file, "checks", restored)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.stopSaving = func() {
		stop()
		<-done
	}
	go func() {
		defer close(done)
		t := time.NewTicker(historySaveEvery)
		defer t.Stop()
		saved := ^uint64(0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				saved = r.saveHistory(file, saved)
			}
		}
	}()
	return nil
}

// readHistory restores what file kept, and says of how many checks.
func (r *run) readHistory(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	var saved savedHistories
	if err := json.Unmarshal(b, &saved); err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	defs := map[string]string{}
	for _, c := range r.cfg.Checks {
		defs[c.Name] = digest(c)
	}
	n := 0
	for _, h := range saved.Checks {
		if defs[h.Name] != h.Definition || h.Definition == "" {
			continue // gone, or changed: what it kept was of another test
		}
		if err := r.monitor.Restore(h.Name, h.Results); err != nil {
			// The same name twice (a file edited by hand): the first
			// stands, and the others' histories go on.
			r.logger.Warn("a check's history in the file is left out", "file", file, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// saveHistory writes every check's kept results to file, whole, through a
// file beside it renamed over it, so that a reader or a restart never
// finds half of one, unless they are the same as those saved at the
// version saved. It returns the version it saw.
func (r *run) saveHistory(file string, saved uint64) uint64 {
	snap := r.monitor.Snapshot()
	// What changed since the last save, roughly: every result counts a
	// run. A reload that changes a check's definition alone is saved with
	// its next result.
	var version uint64
	for _, c := range snap.Checks {
		version += uint64(c.Runs)*31 + uint64(len(c.History))
	}
	if version == saved {
		return saved
	}
	defs := map[string]string{}
	for _, c := range r.now.Load().Checks {
		defs[c.Name] = digest(c)
	}
	out := savedHistories{Checks: []savedHistory{}}
	for _, c := range snap.Checks {
		if def, ok := defs[c.Name]; ok && len(c.History) > 0 {
			out.Checks = append(out.Checks, savedHistory{Name: c.Name, Definition: def, Results: c.History})
		}
	}
	if err := writeAtomically(file, out); err != nil {
		r.logger.Warn("the checks' histories were not saved", "file", file, "err", err)
		return saved
	}
	return version
}

func writeAtomically(file string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync() // on disk before the rename: a node that loses power keeps the old or the new
	}
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// stopHistory saves the histories a last time, once the checks have
// stopped: the restart finds every result.
func (r *run) stopHistory(*stopping) {
	if r.stopSaving == nil {
		return
	}
	r.stopSaving()
	r.saveHistory(r.cfg.History.File, ^uint64(0))
}
