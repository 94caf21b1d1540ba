package health

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Heartbeat is a check fed by the program itself: a loop calls Beat on every
// pass, idle ones included, and the check fails once ttl passes without a beat.
// It catches what a constant "return nil" liveness check cannot: a loop that
// hangs. A beat may also say how the program is (Report): a warning, or a
// failure the program saw itself, with its output.
//
// It is pending until the first beat, but for at most ttl after it starts to
// count (at Start, or once startup passes for a live or ready heartbeat): a
// loop that hangs before its first beat is hung too. It passes while the last
// beat is younger than ttl and fails the moment it is not.
type Heartbeat struct {
	clock Clock
	ttl   time.Duration
	base  time.Time    // beats are kept as nanoseconds since base, on the monotonic clock
	last  atomic.Int64 // the last plain beat (Beat), or never
	// said is the last Report, nil when a plain beat came after it or none
	// came: a Report stores nothing else, and its time counts as a beat.
	said atomic.Pointer[said]
	// quiet is true while the check last judged itself passing on a plain
	// beat: Beat wakes the worker only when it is not, so that a beat on
	// the happy path is a few atomics.
	quiet atomic.Bool
	woken chan struct{}
	// start is when the check started to count, as nanoseconds since base;
	// never until then, and again after a Reset.
	start atomic.Int64
}

// Report is what a program says of itself with a beat (Heartbeat.Report),
// as Consul's TTL checks and Uptime Kuma's push monitors take it.
type Report struct {
	// Status is Pass, Warn or Fail: Warn makes the check warn (it still
	// passes), Fail fails it at once.
	Status Status
	// Output is the result's output: why it warns or fails, or what the
	// program did. At most MaxOutput bytes are kept.
	Output string
	// Value and Unit are a value the program observed, such as how long a
	// job took (Uptime Kuma's ping): the result's observed value while the
	// beat is in time, in place of the beat's age. Optional; a Value needs
	// its Unit, as in an Observation.
	Value any
	Unit  string
}

// said is a Report and when it came, as nanoseconds since base.
type said struct {
	Report
	at int64
}

const never = math.MinInt64

// Heartbeat adds a heartbeat check. ttl must be positive. The check is judged
// again every default period, which refreshes how long ago the last beat was.
// It fails the moment the ttl passes (its failure threshold is
// EventFailureThreshold, 1). opts may give it a StableFor.
func (m *Monitor) Heartbeat(name string, ttl time.Duration, level Level, opts ...TimedOption) (*Heartbeat, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("heartbeat %q: ttl %v is not positive: %w", name, ttl, ErrInvalidCheck)
	}
	o := timedOpts(opts)
	if o.endUnitsOnReset {
		return nil, fmt.Errorf("heartbeat %q: EndUnitsOnReset is a watchdog's option: a heartbeat has no units of work: %w", name, ErrInvalidCheck)
	}
	h := &Heartbeat{clock: m.clock, ttl: ttl, base: m.clock.Now(), woken: make(chan struct{}, 1)}
	h.last.Store(never)
	h.start.Store(never)
	if err := m.addTimed(name, level, h, "heartbeat", o); err != nil {
		return nil, err
	}
	return h, nil
}

// Beat records that the program is making progress. It is cheap and safe to
// call from any goroutine, as often as you like. It says nothing more: the
// check passes, as after a Report with status Pass and no output.
func (h *Heartbeat) Beat() {
	h.said.Store(nil)
	h.last.Store(int64(h.clock.Now().Sub(h.base)))
	if !h.quiet.Load() {
		notify(h.woken)
	}
}

// Report records a beat that says how the program is: with status Pass it
// passes the check, with Warn it warns (and passes), with Fail it fails it
// at once, each with r's output (and r's value, if any) as the result's, as
// Consul's TTL checks take pass, warn and fail with a note. The ttl counts
// from it as from any beat: the check fails once ttl passes with no beat
// after it, whatever it said. It is safe to call from any goroutine; the
// error says what is wrong with r: a status other than Pass, Warn or Fail,
// a Value without a Unit, or a Value that is not a finite number (NaN and
// the infinities have no JSON, the health format's and the API's).
func (h *Heartbeat) Report(r Report) error {
	switch {
	case r.Status != Pass && r.Status != Warn && r.Status != Fail:
		return fmt.Errorf("heartbeat report: status %v is not pass, warn or fail", r.Status)
	case r.Value != nil && r.Unit == "":
		return fmt.Errorf("heartbeat report: observed value %v has no unit", r.Value)
	case !finite(r.Value):
		return fmt.Errorf("heartbeat report: observed value %v is not a finite number", r.Value)
	}
	h.said.Store(&said{Report: r, at: int64(h.clock.Now().Sub(h.base))})
	notify(h.woken) // what it says may change the check, whatever it was
	return nil
}

func (h *Heartbeat) activate(now time.Time) { h.start.Store(int64(now.Sub(h.base))) }

// reset forgets the last beat: after a Reset (the workload restarted), the
// check waits for a beat of the new instance, for at most ttl once it counts.
func (h *Heartbeat) reset() {
	h.last.Store(never)
	h.said.Store(nil)
	h.start.Store(never)
	h.quiet.Store(false)
}

func (h *Heartbeat) wake() <-chan struct{} { return h.woken }

func (h *Heartbeat) evaluate(now time.Time) (Result, bool) {
	last, s := h.last.Load(), h.said.Load()
	r, decided := h.judge(now, last, s)
	if !quiet(r, s) {
		// Store first, then look again: a Beat either sees the check is not
		// quiet and wakes the worker, or stored its beat before this second
		// load.
		h.quiet.Store(false)
		if again, sAgain := h.last.Load(), h.said.Load(); again != last || sAgain != s {
			s = sAgain
			r, decided = h.judge(now, again, s)
		}
	}
	h.quiet.Store(quiet(r, s))
	return r, decided
}

// quiet reports whether r, judged on s, is a pass on a plain beat: one that
// a later plain beat would not change but for the beat's age.
func quiet(r Result, s *said) bool { return r.OK && s == nil }

func (h *Heartbeat) judge(now time.Time, last int64, s *said) (Result, bool) {
	r := Result{Time: now, ObservedUnit: "s"}
	if s != nil && s.at >= last {
		last = s.at
	} else {
		s = nil // a plain beat came after it
	}
	start := h.start.Load()
	if last == never && start == never {
		return r, false // not counting yet: waiting for Start, or for startup
	}
	if last == never {
		waited := now.Sub(h.base.Add(time.Duration(start)))
		if waited < h.ttl {
			return r, false
		}
		r.Output = fmt.Sprintf("no beat since the check started %v ago (ttl %v)", waited.Round(time.Millisecond), h.ttl)
		return r, true
	}
	age := now.Sub(h.base.Add(time.Duration(last)))
	r.ObservedValue = age.Seconds()
	if age >= h.ttl {
		r.Output = fmt.Sprintf("no beat for %v (ttl %v)", age.Round(time.Millisecond), h.ttl)
		return r, true
	}
	r.OK = true
	if s != nil {
		r.OK, r.Warn, r.Output = s.Status != Fail, s.Status == Warn, s.Output
		if s.Value != nil {
			r.ObservedValue, r.ObservedUnit = s.Value, s.Unit
		}
	}
	return r, true
}

func (h *Heartbeat) deadline(now time.Time) time.Time {
	var d time.Time
	if start := h.start.Load(); start != never {
		d = h.base.Add(time.Duration(start) + h.ttl)
	}
	last := h.last.Load()
	if s := h.said.Load(); s != nil {
		last = max(last, s.at)
	}
	if last != never {
		d = h.base.Add(time.Duration(last) + h.ttl)
	}
	if d.After(now) {
		return d
	}
	return time.Time{} // already past: only a beat changes the answer now
}

// finite reports whether v, an observed value, is no float that is NaN or
// infinite.
func finite(v any) bool {
	switch f := v.(type) {
	case float64:
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case float32:
		return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0)
	}
	return true
}
