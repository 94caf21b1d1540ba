package health

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

var historyEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// passes returns results that passed in 12ms, a second apart, with these
// outputs, each a string of its own as a run's would be.
func passes(outputs ...string) []Result {
	rs := make([]Result, len(outputs))
	for i, o := range outputs {
		rs[i] = Result{Time: historyEpoch.Add(time.Duration(i) * time.Second), Duration: 12 * time.Millisecond,
			OK: true, Output: strings.Clone(o)}
	}
	return rs
}

// observing returns passes("up", ...) with these observed values, in ms.
func observing(values ...any) []Result {
	rs := passes(slices.Repeat([]string{"up"}, len(values))...)
	for i, v := range values {
		rs[i].ObservedValue, rs[i].ObservedUnit = v, "ms"
	}
	return rs
}

func counting(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

func TestHistoryKeepsItsLastResultsAsTheyCame(t *testing.T) {
	outcomes := passes("down", "down", "down", "down")
	outcomes[1].Warn = true
	outcomes[2].OK = false
	long := passes("slow", "slow", "slow", "slow", "slow")
	for i, d := range []time.Duration{3 * time.Second, -3 * time.Second, math.MinInt32, math.MaxInt32, math.MaxInt64} {
		long[i].Duration = d
	}
	times := passes("t", "t", "t", "t", "t")
	times[1].Time = time.Unix(1767225600, 5)
	times[2].Time = times[1].Time.In(time.FixedZone("CET", 3600))
	times[3].Time = time.Time{}
	times[4].Time = time.Now() // with a monotonic reading, which is not kept

	tests := []struct {
		name    string
		size    int
		results []Result
		notes   int  // notes in use at the end: outputs kept
		room    int  // places in the ring
		numbers bool // whether the ring of observed numbers was made
		long    bool // whether the ring of long durations was made
	}{
		{"a check that has not run has no ring", 60, nil, 0, 0, false, false},
		{"fewer results than its size are all kept", 3, passes("a", "b"), 2, 3, false, false},
		{"the ring wraps around, oldest first", 3, passes("1", "2", "3", "4", "5"), 3, 3, false, false},
		{"a ring of one keeps the latest", 1, passes("a", "a", "b"), 1, 1, false, false},
		{"equal outputs share one note", 60, passes(slices.Repeat([]string{"HTTP 200"}, 150)...), 1, 60, false, false},
		{"a changed output starts a note, freed with its last result", 3, passes("a", "a", "b", "b", "c"), 2, 3, false, false},
		{"the ring grows to its size and no further", 60, passes(counting(120)...), 60, 60, false, false},
		{"a ring of 100 grows to 100", 100, passes(counting(200)...), 100, 100, false, false},
		{"a ring grows lazily", 60, passes("a", "b", "c", "d", "e"), 5, 8, false, false},
		{"a changed outcome starts a note", 4, outcomes, 4, 4, false, false},
		{"observed numbers keep their type and bits", 10,
			observing(1, -7, 0, int64(1<<40), int64(-1), 12.5, math.Copysign(0, -1), math.NaN(), math.Inf(1), 0.0), 3, 10, true, false},
		{"other observed values are kept in notes", 10,
			observing("200", "200", true, true, uint8(7), time.Second, []byte("x"), struct{ A []int }{[]int{1}}, nil, nil), 7, 10, false, false},
		{"durations too long for a slot are kept beside it", 5, long, 1, 5, false, true},
		{"times keep their location; the zero time stays zero", 5, times, 5, 5, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHistory(tt.size)
			for i, r := range tt.results {
				h.add(r)
				if cap(h.slots) > tt.size || len(h.notes) > tt.size+1 {
					t.Fatalf("after %d results: room for %d results and %d notes in a history of %d", i+1, cap(h.slots), len(h.notes), tt.size)
				}
			}
			want := tt.results[max(0, len(tt.results)-tt.size):]
			got := h.results()
			if len(got) != len(want) {
				t.Fatalf("%d results kept, want %d", len(got), len(want))
			}
			for i := range want {
				if !sameResult(got[i], want[i]) {
					t.Errorf("result %d:\n got %s\nwant %s", i, showResult(got[i]), showResult(want[i]))
				}
			}
			if notes := len(h.notes) - len(h.free); notes != tt.notes {
				t.Errorf("%d notes in use, want %d", notes, tt.notes)
			}
			if cap(h.slots) != tt.room {
				t.Errorf("room for %d results, want %d", cap(h.slots), tt.room)
			}
			var b besides
			if h.beside != nil {
				b = *h.beside
			}
			if (b.numbers != nil) != tt.numbers || (b.long != nil) != tt.long {
				t.Errorf("ring of numbers made: %v, of long durations: %v; want %v, %v", b.numbers != nil, b.long != nil, tt.numbers, tt.long)
			}
		})
	}
}

// sameResult reports whether a history gave back r as it was added: a time
// equal, in the same location, and identical but for a monotonic reading,
// and an observed value of the same type and value (NaN and -0 too).
func sameResult(got, r Result) bool {
	sameTime := got.Time.Equal(r.Time) && got.Time.Location() == r.Time.Location() && got.Time == got.Time.Round(0)
	if r.Time == r.Time.Round(0) {
		sameTime = sameTime && got.Time == r.Time
	}
	return sameTime && showResult(got) == showResult(r)
}

func showResult(r Result) string {
	return fmt.Sprintf("%v %v ok=%v warn=%v %q %T(%#v) %q", r.Time.Round(0), r.Duration, r.OK, r.Warn, r.Output, r.ObservedValue, r.ObservedValue, r.ObservedUnit)
}

// A full history of a check whose output does not change is well under 2 KB:
// its header (136 bytes), 60 slots of 16 bytes (in an array of 1,024), one
// note (64) and its output, and 8 bytes a result for an observed number.
func TestAFullHistoryOfAnUnchangingCheckIsUnder2KB(t *testing.T) {
	const checks = 1000
	for _, tt := range []struct {
		name     string
		observed bool
		limit    int64 // bytes a history
	}{
		{"no observed value", false, 1408},
		{"an observed latency", true, 1920},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			hs := make([]history, checks)
			for i := range hs {
				hs[i] = newHistory(DefaultHistory)
				for run := range 2 * DefaultHistory {
					r := Result{Time: historyEpoch.Add(time.Duration(run) * 10 * time.Second), Duration: 12 * time.Millisecond,
						OK: true, Output: strings.Clone("HTTP 200")}
					if tt.observed {
						r.ObservedValue, r.ObservedUnit = 12.5+float64(run), "ms"
					}
					hs[i].add(r)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			perCheck := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / checks
			runtime.KeepAlive(hs)
			t.Logf("%d bytes a full history of %d results (the history's own %d included)", perCheck, DefaultHistory, unsafe.Sizeof(history{}))
			if perCheck > tt.limit {
				t.Errorf("a full history takes %d bytes, want at most %d", perCheck, tt.limit)
			}
		})
	}
}

// Adding a result whose output has not changed to a full ring allocates
// nothing. (BenchmarkHistoryAdd measures it; this pins it.)
func TestAddingAnUnchangedResultAllocatesNothing(t *testing.T) {
	h := newHistory(DefaultHistory)
	r := Result{Time: historyEpoch, Duration: 12 * time.Millisecond, OK: true, Output: "HTTP 200", ObservedValue: 12.5, ObservedUnit: "ms"}
	for range DefaultHistory {
		h.add(r)
	}
	if allocs := testing.AllocsPerRun(100, func() { h.add(r) }); allocs != 0 {
		t.Errorf("%v allocations a result, want 0", allocs)
	}
}

// go test -run '^$' -bench HistoryAdd -benchmem ./health/
func BenchmarkHistoryAdd(b *testing.B) {
	for _, output := range []string{"unchanged", "changed"} {
		b.Run(output, func(b *testing.B) {
			h := newHistory(DefaultHistory)
			r := Result{Time: historyEpoch, Duration: 12 * time.Millisecond, OK: true, Output: "HTTP 200", ObservedValue: 12.5, ObservedUnit: "ms"}
			outputs := [2]string{"HTTP 200", "HTTP 503"}
			for range DefaultHistory {
				h.add(r)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r.Time = r.Time.Add(10 * time.Second)
				if output == "changed" {
					r.Output = outputs[i%2]
				}
				h.add(r)
			}
		})
	}
}
