package health

import (
	"math"
	"time"

	"github.com/vitals-dev/vitals/internal/escape"
)

// Result is one run of a check.
type Result struct {
	Time     time.Time     // when the run started
	Duration time.Duration // how long it took; the timeout for a run that overran it
	OK       bool
	// Warn marks a passing result that warns: the check reports warn
	// while it is the latest result (a passing check, or one whose results
	// meet its success threshold), and it counts as passing. A heartbeat's
	// Report with status Warn gives one; a run never does.
	Warn bool
	// Undecided marks a run that decided nothing (its checker's error was
	// ErrUndecided): it is not OK, yet counts neither as a success nor as
	// a failure, and its output says what the check waits for.
	Undecided bool
	// Output is the error text of a failed run, or the Measurer's message of a
	// passing one; at most MaxOutput bytes. As a Monitor keeps it, control
	// and bidi characters are escaped (\x1b, \u202e), line breaks and tabs
	// kept; Run returns it as the checker gave it.
	Output        string
	ObservedValue any    // from a Measurer; nil when none
	ObservedUnit  string // from a Measurer
}

// MaxOutput caps a result's output: enough for any error message, and small
// enough that 60 results of 1000 checks stay in memory and probe bodies stay
// under the 4 KiB that Docker and Consul keep.
const MaxOutput = 1 << 10 // 1 KiB

const truncationMark = " [truncated]"

// capOutput cuts s to MaxOutput bytes on a rune boundary, and not inside
// an escape that escape.Text wrote, marking the cut.
func capOutput(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	return s[:escape.Cut(s, MaxOutput-len(truncationMark))] + truncationMark
}

// history is a ring of a check's last results. It grows as results come, up
// to its size, so that 10,000 checks that have not run cost nothing.
//
// A result is kept in a slot of 16 bytes: its time, its duration, and a note
// of the rest. Consecutive results that say the same (the same outcome,
// output and unit, as most do) share one note, so that a check whose output
// never changes keeps one string however many results it keeps, and a note is
// freed with the last result that refers to it. An observed number, which
// changes from run to run, is kept beside the slots in a ring made only for a
// check that observes one; so is a duration too long for a slot.
type history struct {
	size  int32
	next  int32 // where the next result goes once the ring is full
	slots []slot

	notes []note
	free  []uint32 // notes that no slot refers to, to be used again

	beside *besides // nil until a result needs it, as most checks' never do
}

// besides is what a history keeps beside its slots for the results that
// need it.
type besides struct {
	numbers []uint64        // observed numbers, by slot; nil until the check observes one
	long    []time.Duration // durations that do not fit in a slot, by slot; nil until one comes
}

// slot is one result.
type slot struct {
	// unixNano is the result's time, which its note places in its location.
	// It holds any time from 1678 to 2262, which is every clock's; the zero
	// time is marked in the note.
	unixNano int64
	took     int32 // the duration, in nanoseconds, or longTook
	note     uint32
}

// longTook marks a slot whose duration, 2.1s or more, is kept in history.long.
const longTook = math.MinInt32

// note is what consecutive results share: everything of a result but its
// time, duration and observed number.
type note struct {
	gist
	value any   // an observed value that is not kept as a number
	refs  int32 // the slots that refer to it; 0 when it is free
}

// gist is the part of a note that == compares.
type gist struct {
	ok, warn     bool
	undecided    bool
	zeroTime     bool           // the results' Time is the zero time, which has no Unix nanoseconds
	number       numberType     // the type of the observed value kept in history.numbers
	loc          *time.Location // of the results' times
	output, unit string
}

func newHistory(size int) history { return history{size: int32(min(size, math.MaxInt32))} }

func (h *history) add(r Result) {
	g := gist{ok: r.OK, warn: r.Warn, undecided: r.Undecided, zeroTime: r.Time.IsZero(), loc: r.Time.Location(), output: r.Output, unit: r.ObservedUnit}
	value := r.ObservedValue
	bits, number := asNumber(value)
	if number != notNumber {
		g.number, value = number, nil
	}
	// Before the slot it replaces lets go of its note, which it may share.
	s := slot{unixNano: r.Time.UnixNano(), took: int32(r.Duration), note: h.intern(g, value)}
	i := int(h.next)
	if len(h.slots) < int(h.size) {
		i = len(h.slots)
		if i == cap(h.slots) {
			// Grow as append would, but never past size: append's own
			// growth would leave 60 results in an array of 64.
			grown := make([]slot, i, min(max(4, 2*i), int(h.size)))
			copy(grown, h.slots)
			h.slots = grown
		}
		h.slots = h.slots[:i+1]
	} else {
		h.release(h.slots[i].note)
		h.next = int32((i + 1) % int(h.size))
	}
	if time.Duration(s.took) != r.Duration || s.took == longTook {
		s.took = longTook
		h.besides().long = beside(h.beside.long, cap(h.slots))
		h.beside.long[i] = r.Duration
	}
	if number != notNumber {
		h.besides().numbers = beside(h.beside.numbers, cap(h.slots))
		h.beside.numbers[i] = bits
	}
	h.slots[i] = s
}

// besides returns h.beside, made if need be.
func (h *history) besides() *besides {
	if h.beside == nil {
		h.beside = new(besides)
	}
	return h.beside
}

// beside returns ring, made or grown to n places, n being the slots' room:
// a slot's place in it is its own, which growing the slots does not move.
func beside[T any](ring []T, n int) []T {
	if len(ring) == n {
		return ring
	}
	grown := make([]T, n)
	copy(grown, ring)
	return grown
}

// intern returns the note of the latest result if it says what g and value
// say, or a new one.
func (h *history) intern(g gist, value any) uint32 {
	if len(h.slots) > 0 {
		last := h.slots[(int(h.next)+len(h.slots)-1)%len(h.slots)].note
		if h.notes[last].says(g, value) {
			h.notes[last].refs++
			return last
		}
	}
	n := note{gist: g, value: value, refs: 1}
	if k := len(h.free) - 1; k >= 0 {
		i := h.free[k]
		h.free = h.free[:k]
		h.notes[i] = n
		return i
	}
	h.notes = append(h.notes, n)
	return uint32(len(h.notes) - 1)
}

func (h *history) release(i uint32) {
	if h.notes[i].refs--; h.notes[i].refs == 0 {
		h.notes[i] = note{} // its strings and value can go
		h.free = append(h.free, i)
	}
}

// says reports whether n says g and value. Observed values other than
// numbers are compared only when they are strings or bools: a value of
// another type may not be comparable, and its results keep a note each.
func (n *note) says(g gist, value any) bool {
	switch n.value.(type) {
	case nil, string, bool:
		return n.gist == g && n.value == value
	}
	return false
}

// results returns a copy, oldest first.
func (h *history) results() []Result {
	out := make([]Result, len(h.slots))
	for k := range out {
		out[k] = h.result((int(h.next) + k) % len(h.slots))
	}
	return out
}

func (h *history) result(i int) Result {
	s := h.slots[i]
	n := &h.notes[s.note]
	r := Result{Time: time.Unix(0, s.unixNano).In(n.loc), Duration: time.Duration(s.took), OK: n.ok, Warn: n.warn,
		Undecided: n.undecided, Output: n.output, ObservedValue: n.value, ObservedUnit: n.unit}
	if n.zeroTime {
		r.Time = time.Time{}.In(n.loc)
	}
	if s.took == longTook {
		r.Duration = h.beside.long[i]
	}
	if n.number != notNumber {
		r.ObservedValue = n.number.value(h.beside.numbers[i])
	}
	return r
}

// numberType is the type of an observed value kept as a number: the types
// that probes and decoded JSON give. A value of another type is kept in its
// result's note.
type numberType uint8

const (
	notNumber numberType = iota
	isInt
	isInt64
	isFloat64
)

func asNumber(v any) (uint64, numberType) {
	switch v := v.(type) {
	case int:
		return uint64(v), isInt
	case int64:
		return uint64(v), isInt64
	case float64:
		return math.Float64bits(v), isFloat64
	}
	return 0, notNumber
}

func (t numberType) value(bits uint64) any {
	switch t {
	case isInt:
		return int(bits)
	case isInt64:
		return int64(bits)
	}
	return math.Float64frombits(bits)
}
