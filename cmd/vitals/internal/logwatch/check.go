package logwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/internal/escape"
)

// maxShown caps what a failing check shows of the line that failed it:
// enough to recognise the error, and the result's output is capped at 1 KiB.
const maxShown = 200

// Check is a log check: a health.Checker that answers from the lines
// Streams showed it. Running it reads its state and nothing else, so it is
// cheap at any period. Safe for concurrent use.
type Check struct {
	name                 string
	spec                 Spec
	pattern, failPattern *matcher // nil when not given
	now                  func() time.Time
	clock                health.Clock // nil: the system clock
	// expired is called when the latest line that matched FailPattern
	// leaves the window: the check's answer changes then (Streams wakes
	// it). Nil: nothing is told.
	expired func()

	seen atomic.Bool // a line matched Pattern since the last Reset

	mu       sync.Mutex // guards the latest line that matched FailPattern
	failed   bool       // there is one since the last Reset
	failedAt time.Time
	line     [maxShown]byte
	lineLen  int
	cut      bool // the line was longer than maxShown
	armed    bool // a goroutine waits for the window's end (expire)
}

var _ health.Measurer = (*Check)(nil)

// NewCheck validates spec and returns its check, named name (the name the
// agent gives it in its Monitor). The time a line was seen is read from
// clock; nil is the system clock. An error lists everything wrong with spec,
// each problem with a field a *FieldError.
func NewCheck(name string, spec Spec, clock health.Clock) (*Check, error) {
	spec, pattern, failPattern, err := spec.compile()
	if err != nil {
		return nil, err
	}
	now := time.Now
	if clock != nil {
		now = clock.Now
	}
	return &Check{name: name, spec: spec, pattern: pattern, failPattern: failPattern, now: now, clock: clock}, nil
}

// Name is the name NewCheck was given.
func (c *Check) Name() string { return c.name }

// Spec is the check's spec, with its defaults filled in.
func (c *Check) Spec() Spec { return c.spec }

// Check reports nil when the check passes: a line matched Pattern since the
// last Reset, and no line matched FailPattern within Window. Otherwise it
// says which condition fails, and shows the line that failed it.
func (c *Check) Check(ctx context.Context) error {
	_, err := c.Measure(ctx)
	return err
}

// Measure is Check, with a message saying why a passing check passes.
func (c *Check) Measure(context.Context) (health.Observation, error) {
	var problems, passes []string
	if c.pattern != nil {
		if c.seen.Load() {
			passes = append(passes, fmt.Sprintf("a line matched %q", c.spec.Pattern))
		} else {
			problems = append(problems, fmt.Sprintf("no line matching %q yet", c.spec.Pattern))
		}
	}
	if c.failPattern != nil {
		c.mu.Lock()
		failed, at, line := c.failed, c.failedAt, shown(c.line[:c.lineLen], c.cut)
		c.mu.Unlock()
		age := max(c.now().Sub(at), 0)
		if failed && age < c.spec.Window {
			// The window, not the line's age: the same line fails with the
			// same words at every run, so that Kubernetes counts one Event
			// and the status page shows the reason once.
			problems = append(problems, fmt.Sprintf("line matching %q in the last %v: %s", c.spec.FailPattern, c.spec.Window, line))
		} else {
			passes = append(passes, fmt.Sprintf("no line matching %q in the last %v", c.spec.FailPattern, c.spec.Window))
		}
	}
	if len(problems) > 0 {
		return health.Observation{}, errors.New(strings.Join(problems, "; "))
	}
	return health.Observation{Message: strings.Join(passes, "; ")}, nil
}

// see shows the check lines of its stream, and reports whether its answer
// may have changed: Pattern matched for the first time, or FailPattern
// matched while no earlier match was younger than Window. A line that only
// keeps a failing check failing changes nothing, so that a stream of them
// does not run the check, and count toward its failure threshold, more
// often than its period.
func (c *Check) see(t *text) (changed bool) {
	if c.pattern != nil && !c.seen.Load() {
		if _, ok := c.pattern.find(t, false); ok {
			changed = c.seen.CompareAndSwap(false, true)
		}
	}
	if c.failPattern != nil {
		if line, ok := c.failPattern.find(t, true); ok {
			changed = c.fail(line) || changed
		}
	}
	return changed
}

// fail keeps line as the latest that matched FailPattern, seen now, and
// reports whether the check was passing on that count until now.
func (c *Check) fail(line []byte) (flipped bool) {
	n, cut := len(line), false
	if n > maxShown {
		n, cut = maxShown, true
		for n > 0 && !utf8.RuneStart(line[n]) { // cut before a character, not inside one
			n--
		}
	}
	now := c.now()
	c.mu.Lock()
	flipped = !c.failed || now.Sub(c.failedAt) >= c.spec.Window
	c.failed, c.failedAt, c.cut = true, now, cut
	c.lineLen = copy(c.line[:], line[:n])
	if !c.armed && c.expired != nil {
		c.armed = true
		go c.expire()
	}
	c.mu.Unlock()
	return flipped
}

// expire waits for the latest line that matched FailPattern to leave the
// window, and then tells expired: the check passes again at that moment,
// not at its next period (a failure that ends passes at its end). A newer
// line moves the end; one goroutine waits, whatever the lines, until the
// window of the latest is over (after a reset too: it then tells
// nothing).
func (c *Check) expire() {
	for {
		c.mu.Lock()
		end := c.failedAt.Add(c.spec.Window)
		if !c.failed || !c.now().Before(end) {
			c.armed = false
			failed := c.failed
			c.mu.Unlock()
			if failed {
				c.expired()
			}
			return
		}
		c.mu.Unlock()
		<-c.at(end)
	}
}

// at is a channel that fires at t on the check's clock: at t, not d after
// the moment it is asked for, so that a fake clock that jumps past t
// fires it too (health.TimerAt).
func (c *Check) at(t time.Time) <-chan time.Time {
	switch clock := c.clock.(type) {
	case nil:
		return time.After(time.Until(t))
	case health.TimerAt:
		return clock.NewTimerAt(t).C()
	default:
		return clock.NewTimer(t.Sub(clock.Now())).C()
	}
}

// reset forgets what the check saw.
func (c *Check) reset() {
	c.seen.Store(false)
	c.mu.Lock()
	c.failed = false
	c.mu.Unlock()
}

// shown is a line as a check's output shows it: control characters and
// invalid UTF-8 escaped as every output is (escape.Text: a terminal reading
// the probe endpoints must not obey a colour escape), and "…" where it was
// cut.
func shown(line []byte, cut bool) string {
	s := escape.Text(string(line))
	if cut {
		s += "…"
	}
	return s
}
