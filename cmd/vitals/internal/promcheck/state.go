package promcheck

import (
	"fmt"
	"time"
)

const (
	// maxWindowSamples caps the samples a window keeps of one series: past
	// it, samples that come sooner than window/maxWindowSamples after the
	// one before the last replace the last, so that a 1h window at a 1s
	// period keeps 256 samples, not 3,600. A counter's reset between two
	// kept samples is still seen, as a drop; only a second one in that gap
	// would not be. A 5m window at the default 10s period keeps all 30.
	maxWindowSamples = 256
	// maxWindowSeries caps the series one selector of increase or rate
	// keeps the history of: 5,000 of them at maxWindowSamples is 20 MiB.
	// A selector that matches more fails the check, saying so, rather than
	// keep a scrape's worth of history for each.
	maxWindowSeries = 5000
)

// state is what a metric check keeps between its scrapes: the history of
// the series its range functions (increase, rate) read, by selector.
type state struct {
	windows map[string]*window
}

// size is about how many bytes the state holds.
func (st *state) size() int {
	n := 0
	for _, w := range st.windows {
		n += w.size()
	}
	return n
}

// newState makes the state of exprs: a window for each selector of a range
// function, as long as the longest range over it.
func newState(exprs []*Expr) *state {
	st := &state{windows: map[string]*window{}}
	for _, e := range exprs {
		for _, v := range e.ranges {
			w := st.windows[v.sel.text]
			if w == nil {
				w = &window{sel: v.sel, series: map[string]*[]float64{}}
				st.windows[v.sel.text] = w
			}
			w.rng = max(w.rng, v.rng)
		}
	}
	return st
}

// window is the history of the series one selector matches, over rng up
// to the last scrape. The scrapes' times are kept once, for every series:
// a series' values are those of the window's last scrapes, one each, as a
// series is forgotten the moment a scrape lacks it.
type window struct {
	sel    *selector
	rng    time.Duration
	times  []int64 // the scrapes' times in Unix nanoseconds, oldest first
	series map[string]*[]float64
}

// observe adds the scrape x, made at now, to every window: a sample of
// each series its selector matches, and of none that it no longer matches
// (a series that went away is forgotten, as Prometheus marks it stale);
// samples older than the window go. A scrape whose series are more than a
// window keeps changes no window: it fails the run, and the windows stay
// as the scrape before left them.
func (st *state) observe(x exposition, now time.Time) error {
	type sample struct {
		key   string
		value float64
	}
	scraped := make(map[*window][]sample, len(st.windows))
	for _, w := range st.windows {
		var got []sample
		seen := map[string]bool{}
		x.selectSeries(w.sel, func(s series) {
			if key := s.key(); !seen[key] { // a series the exposition has twice counts once
				seen[key] = true
				got = append(got, sample{key, s.value})
			}
		})
		if len(got) > maxWindowSeries {
			return fmt.Errorf("%s matches %d series, more than the %d a window of increase or rate keeps: narrow its selector", w.sel.text, len(got), maxWindowSeries)
		}
		scraped[w] = got
	}
	at := now.UnixNano()
	for w, got := range scraped {
		// Past maxWindowSamples a window thins: a scrape sooner than gap
		// after the one before the last replaces the last.
		gap := int64(w.rng / maxWindowSamples)
		n := len(w.times)
		replace := n >= 2 && at-w.times[n-2] < gap
		kept := make(map[string]*[]float64, len(got))
		for _, s := range got {
			values := w.series[s.key]
			if values == nil {
				values = new([]float64)
			}
			if replace && len(*values) > 0 {
				(*values)[len(*values)-1] = s.value
			} else {
				*values = append(*values, s.value)
			}
			kept[s.key] = values
		}
		w.series = kept
		if replace {
			w.times[n-1] = at
		} else {
			w.times = append(w.times, at)
		}
		// Drop the scrapes at or before the window's start, and the
		// values that went with them.
		from := at - int64(w.rng)
		drop := 0
		for drop < len(w.times) && w.times[drop] <= from {
			drop++
		}
		w.times = trim(w.times, drop)
		for _, values := range w.series {
			if extra := len(*values) - len(w.times); extra > 0 {
				*values = trim(*values, extra)
			}
		}
	}
	return nil
}

// trim drops the first n of s, copying what is left to the start of its
// array once more than half of it is dropped, so that a window that slides
// keeps to its size.
func trim[T any](s []T, n int) []T {
	switch {
	case n == 0:
		return s
	case n > len(s)/2:
		return append(s[:0], s[n:]...)
	}
	return s[n:]
}

// scrapesWithin is how many scrapes the window has within rng of now.
func (w *window) scrapesWithin(now time.Time, rng time.Duration) int {
	from := now.UnixNano() - int64(rng)
	n := 0
	for _, t := range w.times {
		if t > from {
			n++
		}
	}
	return n
}

// samples are the times and values of one series' samples in its window.
func (w *window) samples(values []float64) (ts []int64, vs []float64) {
	return w.times[len(w.times)-len(values):], values
}

// size is about how many bytes the window holds: its arrays and its keys,
// and what a map keeps of an entry.
func (w *window) size() int {
	const entry = 48 // a map entry's key header, value pointer and bookkeeping, about
	n := cap(w.times) * 8
	for key, values := range w.series {
		n += len(key) + entry + 24 + cap(*values)*8 // 24: the slice's header
	}
	return n
}

// extrapolated is a series' increase over the range (now-rng, now], or its
// rate per second, as Prometheus computes increase() and rate(): a drop is
// a counter's reset, its value before it added back; the increase between
// the first and the last sample is extrapolated toward each edge of the
// range by the gap to it when that gap is under 1.1 times the average
// interval between samples, else by half an interval, and at the start no
// further than where the counter would be 0. ok is false with fewer than
// two samples in the range.
func extrapolated(ts []int64, vs []float64, now time.Time, rng time.Duration, isRate bool) (float64, bool) {
	end := now.UnixNano()
	start := end - int64(rng)
	i := 0
	for i < len(ts) && ts[i] <= start {
		i++
	}
	ts, vs = ts[i:], vs[i:]
	n := len(ts)
	if n < 2 {
		return 0, false
	}
	result := vs[n-1] - vs[0]
	var last float64
	for _, v := range vs {
		if v < last {
			result += last
		}
		last = v
	}
	toStart := float64(ts[0]-start) / 1e9
	toEnd := float64(end-ts[n-1]) / 1e9
	sampled := float64(ts[n-1]-ts[0]) / 1e9
	if sampled <= 0 {
		return 0, false
	}
	average := sampled / float64(n-1)
	threshold := average * 1.1
	if toStart >= threshold {
		toStart = average / 2
	}
	if result > 0 && vs[0] >= 0 {
		// A counter is never below 0: extrapolate no further back than
		// where it would be.
		if toZero := sampled * (vs[0] / result); toZero < toStart {
			toStart = toZero
		}
	}
	if toEnd >= threshold {
		toEnd = average / 2
	}
	factor := (sampled + toStart + toEnd) / sampled
	if isRate {
		factor /= rng.Seconds()
	}
	return result * factor, true
}
