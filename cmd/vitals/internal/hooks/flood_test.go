package hooks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/hooks"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// Exec hooks run at most MaxExecAtOnce commands at once between them, and
// each still gets every event: each command holds a place (a directory)
// while it runs, and counts the places held as it starts.
func TestExecHooksRunAtMostTheirCapAtOnce(t *testing.T) {
	dir := t.TempDir()
	running, counts := filepath.Join(dir, "running"), filepath.Join(dir, "counts")
	must(t, os.Mkdir(running, 0o755))
	script := `mkdir "$1/$$"; ls "$1" | wc -l >> "$2"; sleep 0.2; rmdir "$1/$$"`
	var specs []config.Hook
	const n = 2 * hooks.MaxExecAtOnce
	for range n {
		specs = append(specs, config.Hook{On: []health.EventType{health.EventCheckFailed},
			Exec: &config.ExecHook{Command: []string{"sh", "-c", script, "sh", running, counts}}})
	}
	m := newMonitor()
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, specs...)
	for i := range 3 {
		m.Emit(failed(fmt.Sprintf("c%d", i)))
	}
	for deadline := time.Now().Add(patience); ; time.Sleep(10 * time.Millisecond) {
		done := 0
		for _, st := range r.Status() {
			done += int(st.Delivered + st.Failed)
		}
		if done == 3*n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d runs done within %v: %+v\n%s", done, 3*n, patience, r.Status(), l.String())
		}
	}
	b, err := os.ReadFile(counts)
	must(t, err)
	most := 0
	for _, f := range strings.Fields(string(b)) {
		c, err := strconv.Atoi(f)
		must(t, err)
		most = max(most, c)
	}
	if most > hooks.MaxExecAtOnce || most < 2 {
		t.Fatalf("at most %d commands ran at once, want 2 to %d (counts %q)", most, hooks.MaxExecAtOnce, b)
	}
	for _, st := range r.Status() {
		if st.Delivered != 3 {
			t.Fatalf("hook %s delivered %d, want every event: %+v", st.Name, st.Delivered, st)
		}
	}
}

// A hook that was away while the log dropped state changes is told of the
// gap and, once it has caught up, given the state now of each check whose
// last change it never read: an event of id 0 that says so, after the
// events the log kept, and none for a check whose kept events it read.
func TestAHookThatMissedStateChangesGetsTheStateNow(t *testing.T) {
	rc, arrived, release := stuckReceiver(t)
	m := newMonitor(health.WithEventLog(4))
	loop, err := m.Heartbeat("loop", time.Hour, health.Ready)
	must(t, err)
	other, err := m.Heartbeat("other", time.Hour, health.Ready)
	must(t, err)
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, webhook(rc.URL, health.EventCheckFailed, health.EventCheckPassed))
	m.Emit(failed("first"))
	<-arrived // the hook is stuck in its first request from now on
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	t.Cleanup(func() { cancel(); <-m.Done() })
	report := func(hb *health.Heartbeat, status health.Status, output string) {
		last := m.LastEventID()
		must(t, hb.Report(health.Report{Status: status, Output: output}))
		if _, _, err := m.Follow(last).Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	report(other, health.Fail, "other down")
	// loop changes status 10 times: more than the log keeps, other's
	// failure among the dropped.
	for i := range 10 {
		report(loop, []health.Status{health.Fail, health.Pass}[i%2], fmt.Sprint("run ", i))
	}
	close(release)
	waitStatus(t, r, "the state delivered", func(st hooks.Status) bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return slices.ContainsFunc(rc.events, func(e health.Event) bool { return e.ID == 0 })
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	last := rc.events[len(rc.events)-1]
	if last.ID != 0 || last.Check != "other" || last.To != health.Fail || last.Type != health.EventCheckFailed ||
		!strings.Contains(last.Output, "the state now") {
		t.Fatalf("the last event %+v: want other's failure now, of id 0", last)
	}
	for _, e := range rc.events[:len(rc.events)-1] {
		if e.ID == 0 {
			t.Fatalf("events %+v: the state now only once, last", rc.events)
		}
	}
	if st := r.Status()[0]; st.LastDeliveredID == 0 || st.Missed == 0 {
		t.Fatalf("status %+v: want the last event of the log delivered, and the missed counted", st)
	}
	if !strings.Contains(l.String(), "events missed") {
		t.Fatalf("logs:\n%s\nwant the gap said", l.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
