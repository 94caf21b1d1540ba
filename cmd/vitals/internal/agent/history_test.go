package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// history.file gives a check the results kept of the check of its name
// and definition only: one changed since, or gone, begins anew; a file
// that is not JSON is an error naming it, and restores nothing.
func TestHistoryFileRestoresTheChecksOfTheSameDefinitionOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "history.json")
	text := func(bPath string) string {
		return fmt.Sprintf("history: {file: %s}\nchecks:\n  a: {file: {path: /etc/hostname}}\n  b: {file: {path: %s}}\n", file, bPath)
	}
	was := parsed(t, text("/etc/hostname"))
	now := parsed(t, text("/etc/passwd")) // b tests another file now
	results := []health.Result{{OK: true, Output: "kept", Time: time.Unix(1, 0)}}
	saved := savedHistories{}
	for _, c := range was.Checks {
		saved.Checks = append(saved.Checks, savedHistory{Name: c.Name, Definition: digest(c), Results: results})
	}
	saved.Checks = append(saved.Checks, savedHistory{Name: "gone", Definition: "x", Results: results})
	b, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(now, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{Agent: a}
	if n, err := r.readHistory(file); n != 1 || err != nil {
		t.Fatalf("restored %d checks, %v; want a alone", n, err)
	}
	if st, _ := a.monitor.CheckState("a"); len(st.History) != 1 || st.History[0].Output != "kept" || st.Status != health.Pending {
		t.Errorf("a: %+v, want its kept result, and pending still", st)
	}
	if st, _ := a.monitor.CheckState("b"); len(st.History) != 0 {
		t.Errorf("b, changed since: %+v, want no history", st.History)
	}

	if err := os.WriteFile(file, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err = New(now, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := (&run{Agent: a}).readHistory(file); n != 0 || err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("a file that is not JSON: %d, %v; want an error naming it", n, err)
	}
}
