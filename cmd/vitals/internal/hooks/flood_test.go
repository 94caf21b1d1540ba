package hooks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	var specs []hooks.Spec
	const n = 2 * hooks.MaxExecAtOnce
	for range n {
		specs = append(specs, hooks.Spec{On: []health.EventType{health.EventCheckFailed},
			Exec: &hooks.ExecSpec{Command: []string{"sh", "-c", script, "sh", running, counts}}})
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
// gap and given each check's state as it is: an event of id 0 that says so.
func TestAHookThatMissedStateChangesGetsTheStateNow(t *testing.T) {
	rc, arrived, release := stuckReceiver(t)
	m := newMonitor(health.WithEventLog(4))
	hb, err := m.Heartbeat("loop", time.Hour, health.Ready)
	must(t, err)
	var l vitalstest.Buffer
	r := start(t, m, &l, nil, webhook(rc.URL, health.EventCheckFailed, health.EventCheckPassed))
	m.Emit(failed("first"))
	<-arrived // the hook is stuck in its first request from now on
	ctx, cancel := context.WithCancel(context.Background())
	m.Start(ctx)
	t.Cleanup(func() { cancel(); <-m.Done() })
	// The heartbeat changes status 10 times: more than the log keeps.
	want := health.Pass
	for i := range 10 {
		last := m.LastEventID()
		status := []health.Status{health.Fail, health.Pass}[i%2]
		must(t, hb.Report(health.Report{Status: status, Output: fmt.Sprint("run ", i)}))
		if _, _, err := m.Follow(last).Next(ctx); err != nil {
			t.Fatal(err)
		}
		want = status
	}
	close(release)
	st := waitStatus(t, r, "the state delivered", func(st hooks.Status) bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		got := rc.events
		return st.Missed > 0 && len(got) > 1 && got[len(got)-1].To == want
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var resync *health.Event
	for i, ev := range rc.events {
		if ev.ID == 0 {
			resync = &rc.events[i]
		}
	}
	if resync == nil || resync.Check != "loop" || !strings.Contains(resync.Output, "the state now") {
		t.Fatalf("events %+v (status %+v): want one of id 0 with loop's state now", rc.events, st)
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
