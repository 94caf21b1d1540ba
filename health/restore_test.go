package health_test

import (
	"errors"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// Restored results are a check's kept history, the last WithHistory of
// them, before its own; they decide nothing: the check stays pending, with
// no run counted and no event, until its own first run, whose result comes
// after them.
func TestRestoredResultsComeBeforeACheckOwnAndDecideNothing(t *testing.T) {
	m, _ := fakeMonitor(t, health.WithHistory(3))
	must(t, m.Add(health.Check{Name: "db", Level: health.Ready, Checker: failing("db down"), Period: time.Second, FailureThreshold: 1}))
	before := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	var old []health.Result
	for i := range 4 {
		old = append(old, health.Result{Time: before.Add(time.Duration(i) * time.Second), Duration: time.Millisecond, OK: true, Output: "up \x1b[31m"})
	}
	events := m.LastEventID()
	must(t, m.Restore("db", old))
	st, _ := m.CheckState("db")
	if st.Status != health.Pending || st.Runs != 0 || len(st.History) != 3 || !st.History[0].Time.Equal(old[1].Time) || st.History[2].Output != `up \x1b[31m` {
		t.Fatalf("restored: %+v, want pending, no run, the last 3 results, their outputs escaped", st)
	}
	if m.LastEventID() != events {
		t.Error("Restore emitted an event")
	}
	start(t, m)
	st = waitRuns(t, m, "db", 1)
	if st.Status != health.Fail || len(st.History) != 3 || st.History[2].OK || !st.History[1].Time.Equal(old[3].Time) {
		t.Errorf("after its first run: %+v, want it failing, its own result after the restored ones", st)
	}
	if err := m.Restore("db", old); err == nil {
		t.Error("Restore of a check with results of its own: no error")
	}
	if err := m.Restore("nope", old); !errors.Is(err, health.ErrNoSuchCheck) {
		t.Errorf("Restore of no check: %v, want ErrNoSuchCheck", err)
	}
}
