package health

import (
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
type history struct {
	buf  []Result
	size int
	next int // where the next result goes once the ring is full
}

func newHistory(size int) history { return history{size: size} }

func (h *history) add(r Result) {
	if len(h.buf) < h.size {
		if len(h.buf) == cap(h.buf) {
			// Grow as append would, but never past size: append's own
			// growth would leave 60 results in an array of 69.
			grown := make([]Result, len(h.buf), min(max(4, 2*cap(h.buf)), h.size))
			copy(grown, h.buf)
			h.buf = grown
		}
		h.buf = append(h.buf, r)
		return
	}
	h.buf[h.next] = r
	h.next = (h.next + 1) % h.size
}

// results returns a copy, oldest first.
func (h *history) results() []Result {
	out := make([]Result, 0, len(h.buf))
	out = append(out, h.buf[h.next:]...)
	return append(out, h.buf[:h.next]...)
}
