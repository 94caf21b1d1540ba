package health

import (
	"strings"
	"testing"
)

// runs spells results: P passes, F fails.
func replay(t thresholds, runs string) []Status {
	var c counter
	out := make([]Status, 0, len(runs))
	for _, r := range runs {
		c = c.next(r == 'P', t)
		out = append(out, c.status)
	}
	return out
}

func TestStateMachine(t *testing.T) {
	kubelet := thresholds{success: 1, failure: 3}
	tests := []struct {
		name string
		th   thresholds
		runs string
		want string // one status per run: - pending, P pass, W warn, F fail
	}{
		{"a check passes on its first success with the default success threshold", kubelet, "P", "P"},
		{"a new check stays pending through failures below the threshold", kubelet, "FF", "--"},
		{"a new check fails at the failure threshold", kubelet, "FFF", "--F"},
		{"a passing check that fails below its threshold reports warn", kubelet, "PFF", "PWW"},
		{"a warning check fails at the threshold", kubelet, "PFFF", "PWWF"},
		{"one success ends a warning", kubelet, "PFFP", "PWWP"},
		{"a failure between others resets the count", kubelet, "PFFPFF", "PWWPWW"},
		{"a failed check passes again on success", kubelet, "FFFP", "--FP"},
		{"a failed check stays failed while it keeps failing", kubelet, "FFFFF", "--FFF"},
		{"a success threshold of 3 needs three passes in a row", thresholds{3, 3}, "PPP", "--P"},
		{"a failure resets the passes needed", thresholds{3, 3}, "PPFPPP", "-----P"},
		{"a failed check needs the success threshold to pass again", thresholds{2, 1}, "FPFPP", "FFFFP"},
		{"a failure threshold of 1 fails at once", thresholds{1, 1}, "PFP", "PFP"},
		{"with a success threshold of 1 a pass after a failure decides", kubelet, "FPFF", "-PWW"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got strings.Builder
			for _, s := range replay(tt.th, tt.runs) {
				got.WriteByte(map[Status]byte{Pending: '-', Pass: 'P', Warn: 'W', Fail: 'F'}[s])
			}
			if got.String() != tt.want {
				t.Fatalf("runs %s with thresholds %+v: statuses %s, want %s", tt.runs, tt.th, got.String(), tt.want)
			}
		})
	}
}

func TestCapOutputCutsOnARuneBoundaryAndSaysSo(t *testing.T) {
	long := strings.Repeat("é", MaxOutput) // two bytes each
	got := capOutput(long)
	if len(got) > MaxOutput {
		t.Fatalf("capped output is %d bytes, over %d", len(got), MaxOutput)
	}
	if !strings.HasSuffix(got, truncationMark) {
		t.Fatalf("capped output does not end with %q", truncationMark)
	}
	if s := strings.TrimSuffix(got, truncationMark); strings.ContainsRune(s, '\uFFFD') || len(s)%2 != 0 {
		t.Fatalf("capped output split a rune: %q", s[len(s)-4:])
	}
	if short := "dial tcp: refused"; capOutput(short) != short {
		t.Fatalf("short output changed")
	}
}

func TestHistoryKeepsTheLastResultsOldestFirst(t *testing.T) {
	h := newHistory(3)
	for i := 1; i <= 5; i++ {
		h.add(Result{Output: string(rune('0' + i))})
	}
	var got string
	for _, r := range h.results() {
		got += r.Output
	}
	if got != "345" {
		t.Fatalf("history %q, want %q", got, "345")
	}
}

func TestEventLogKeepsTheNewestAndCountsOn(t *testing.T) {
	l := newEventLog(3)
	for range 5 {
		l.append(Event{Type: EventCheckPassed})
	}
	evs := l.after(0)
	if len(evs) != 3 || evs[0].ID != 3 || evs[2].ID != 5 {
		t.Fatalf("after(0) = %v, want ids 3..5", ids(evs))
	}
	if evs := l.after(4); len(evs) != 1 || evs[0].ID != 5 {
		t.Fatalf("after(4) = %v, want [5]", ids(evs))
	}
	if evs := l.after(5); evs != nil {
		t.Fatalf("after(5) = %v, want none", ids(evs))
	}
}

func ids(evs []Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func TestNamesFollowTheRule(t *testing.T) {
	for name, want := range map[string]bool{
		"db": true, "peer-config": true, "a": true, "0": true, "a.b_c-d": true,
		strings.Repeat("a", 63): true, strings.Repeat("a", 64): false,
		"": false, "DB": false, "-db": false, "db-": false, "d b": false, "db/x": false, "é": false,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}
