package promcheck

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// scrapes judges expr at each of a series of scrapes, the exposition of
// each made by body from its time (seconds from t0), and returns the
// verdicts.
type scraper struct {
	t     *testing.T
	e     *Expr
	st    *state
	start time.Time
}

func newScraper(t *testing.T, expr string) *scraper {
	t.Helper()
	e, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return &scraper{t: t, e: e, st: newState([]*Expr{e}), start: time.Unix(1_700_000_000, 0)}
}

// at judges a scrape of body made sec seconds after the start.
func (s *scraper) at(sec float64, body string) verdict {
	s.t.Helper()
	x, err := newParser().parse([]byte(body), false)
	if err != nil {
		s.t.Fatal(err)
	}
	now := s.start.Add(time.Duration(sec * float64(time.Second)))
	if err := s.st.observe(x, now); err != nil {
		return verdict{truth: fails, text: err.Error()}
	}
	return (&eval{x: x, now: now, st: s.st}).node(s.e.root)
}

func counter(v float64) string { return fmt.Sprintf("c_total{a=\"b\"} %v\n", v) }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// increase and rate are Prometheus's, from the check's own scrapes: a
// counter's resets added back, the increase extrapolated to the window's
// edges, and no further back than the counter's zero.
func TestIncreaseAndRateAsPrometheusComputesThem(t *testing.T) {
	for _, tt := range []struct {
		name   string
		expr   string
		times  []float64
		values []float64
		want   float64
	}{
		// From 0, every 10s: the zero bounds the extrapolation to the start.
		{"from zero", "increase(c_total[2m]) > 0", []float64{0, 10, 20, 30}, []float64{0, 5, 10, 15}, 15},
		{"its rate", "rate(c_total[2m]) > 0", []float64{0, 10, 20, 30}, []float64{0, 5, 10, 15}, 15.0 / 120},
		// A reset: 20 then 5 is 20 lost and 5 gained. The start is more
		// than 1.1 intervals before the first sample: half an interval.
		{"a reset", "increase(c_total[2m]) > 0", []float64{0, 10, 20, 30}, []float64{10, 20, 5, 15}, 25 * 35.0 / 30},
		// A full window: the first sample 10s after its start, within 1.1
		// intervals, extrapolated all the way.
		{"a full window", "increase(c_total[1m]) > 0", []float64{140, 150, 160, 170, 180, 190, 200}, []float64{14, 15, 16, 17, 18, 19, 20}, 6},
		// Samples older than the window are not in it.
		{"the window slides", "increase(c_total[30s]) > 0", []float64{0, 10, 20, 30, 40, 50}, []float64{0, 100, 100, 100, 101, 102}, 2 * 30.0 / 20},
		// A counter that did not move increased by 0, however extrapolated.
		{"no increase", "increase(c_total[2m]) == 0", []float64{0, 10, 20}, []float64{42, 42, 42}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newScraper(t, tt.expr)
			var v verdict
			for i, sec := range tt.times {
				v = s.at(sec, counter(tt.values[i]))
			}
			if !v.hasValue || !near(v.value, tt.want) {
				t.Errorf("%s = %v (%s), want %v", tt.expr, v.value, v.text, tt.want)
			}
		})
	}
}

// Until a series has two samples in the window a range function decides
// nothing, and says so; a condition beside it may still decide.
func TestARangeIsUndecidedUntilItsWindowHasTwoScrapes(t *testing.T) {
	s := newScraper(t, "increase(c_total[2m]) > 0")
	v := s.at(0, counter(1))
	if v.truth != undecided || v.text != "increase(c_total[2m]) needs two scrapes in its 2m window, and has 1 so far" {
		t.Errorf("the first scrape: %s %q", truths[v.truth], v.text)
	}
	if v = s.at(10, counter(2)); v.truth != holds {
		t.Errorf("the second scrape: %s %q", truths[v.truth], v.text)
	}
	// Past the window, with no scrape in between: the window has one again.
	if v = s.at(200, counter(3)); v.truth != undecided {
		t.Errorf("a scrape after a gap longer than the window: %s %q", truths[v.truth], v.text)
	}

	// An or is decided by a side that holds, an and by one that fails.
	for _, tt := range []struct{ expr, body, truth string }{
		{"increase(c_total[2m]) > 0 or g == 0", counter(1) + "g 0\n", "holds"},
		{"increase(c_total[2m]) > 0 or g == 0", counter(1) + "g 1\n", "undecided"},
		{"increase(c_total[2m]) > 0 and g == 0", counter(1) + "g 1\n", "fails"},
		{"increase(c_total[2m]) > 0 and g == 0", counter(1) + "g 0\n", "undecided"},
		{"count(increase(c_total[2m])) == 0", counter(1), "undecided"},
		{"count(increase(nope[2m])) == 0", counter(1), "holds"},
		{"increase(nope[2m]) > 0", counter(1), "fails"},
	} {
		v := newScraper(t, tt.expr).at(0, tt.body)
		if truths[v.truth] != tt.truth {
			t.Errorf("%s, at the first scrape of %q: %s, want %s (%s)", tt.expr, tt.body, truths[v.truth], tt.truth, v.text)
		}
	}
}

// A series that goes away is forgotten, as Prometheus marks it stale; one
// that comes back starts over; a series that is new waits for its second
// sample while the others are judged.
func TestSeriesComeAndGo(t *testing.T) {
	s := newScraper(t, "increase(c_total[1m]) >= 0")
	s.at(0, counter(1))
	s.at(10, counter(2))
	if v := s.at(20, "other 1\n"); v.truth != fails || v.text != "no series matches c_total" {
		t.Errorf("gone: %s %q", truths[v.truth], v.text)
	}
	if v := s.at(30, counter(5)); v.truth != undecided || !strings.Contains(v.text, "the 1 it matches are new") {
		t.Errorf("back: %s %q", truths[v.truth], v.text)
	}
	if v := s.at(40, counter(6)); v.truth != holds {
		t.Errorf("back, a second sample: %s %q", truths[v.truth], v.text)
	}
	w := s.st.windows["c_total"]
	if n := len(w.series); n != 1 {
		t.Errorf("the window keeps %d series, want 1", n)
	}

	// A new series is left out until its second sample.
	s = newScraper(t, "sum(increase(c_total[1m])) == 2.5") // 2 in 20s, extrapolated by half an interval
	s.at(0, counter(1))
	s.at(10, counter(2))
	if v := s.at(20, counter(3)+"c_total{a=\"new\"} 100\n"); v.truth != holds {
		t.Errorf("with a new series: %s %q", truths[v.truth], v.text)
	}
}

// A window keeps at most maxWindowSamples samples of a series however short
// the period, and its increase stays right.
func TestAWindowKeepsItsSize(t *testing.T) {
	s := newScraper(t, "increase(c_total[1h]) > 0")
	var v verdict
	for sec := 0; sec <= 7200; sec++ {
		v = s.at(float64(sec), counter(float64(sec)))
	}
	w := s.st.windows["c_total"]
	values := *w.series[`c_total{a="b"}`]
	if len(values) > maxWindowSamples+2 || cap(values) > 4*maxWindowSamples || len(w.times) != len(values) || cap(w.times) > 4*maxWindowSamples {
		t.Errorf("the window keeps %d samples in %d, and %d times in %d, want at most about %d", len(values), cap(values), len(w.times), cap(w.times), maxWindowSamples)
	}
	if math.Abs(v.value-3600) > 3600*0.01 {
		t.Errorf("increase over 1h at 1 a second = %v, want about 3600", v.value)
	}
}

// A range selector that matches more series than a window keeps fails the
// check, saying so.
func TestAWindowKeepsAtMostItsSeries(t *testing.T) {
	var b strings.Builder
	for i := range maxWindowSeries + 1 {
		fmt.Fprintf(&b, "c_total{i=\"%d\"} 1\n", i)
	}
	s := newScraper(t, "sum(increase(c_total[5m])) >= 0")
	s.at(0, `c_total{i="a"} 100`+"\n")
	v := s.at(10, `c_total{i="a"} 200`+"\n"+b.String())
	if v.truth != fails || !strings.Contains(v.text, "matches 5002 series, more than the 5000 a window") {
		t.Errorf("%s %q", truths[v.truth], v.text)
	}
	// The scrape refused left the window as it was: the next one's
	// increase is from the first, 100 to 300 in 20s.
	v = s.at(20, `c_total{i="a"} 300`+"\n")
	w := s.st.windows["c_total"]
	if values := *w.series[`c_total{i="a"}`]; len(w.times) != 2 || len(values) != 2 || values[0] != 100 || values[1] != 300 {
		t.Errorf("the window after a scrape refused: times %v, values %v; want the first scrape's and the third's", w.times, values)
	}
	if v.truth != holds || !near(v.value, 200*30.0/20) { // extrapolated by half an interval, 10s
		t.Errorf("after a scrape refused: %s %q, want the increase from 100 to 300, extrapolated", truths[v.truth], v.text)
	}
}

// manager writes the exposition of a controller-runtime manager with n
// controllers, each having reconciled i times, as its metrics server does
// (the series that controller-runtime registers for each controller).
func manager(n, i int) string {
	var b strings.Builder
	for c := range n {
		for _, result := range []string{"error", "requeue", "requeue_after", "success"} {
			v := 0
			if result == "success" {
				v = i
			}
			fmt.Fprintf(&b, "controller_runtime_reconcile_total{controller=\"controller-%d\",result=%q} %d\n", c, result, v)
		}
		fmt.Fprintf(&b, "controller_runtime_active_workers{controller=\"controller-%d\"} 0\n", c)
		fmt.Fprintf(&b, "workqueue_depth{controller=\"controller-%d\",name=\"controller-%d\",priority=\"\"} 0\n", c, c)
		fmt.Fprintf(&b, "workqueue_longest_running_processor_seconds{controller=\"controller-%d\",name=\"controller-%d\"} 0\n", c, c)
		fmt.Fprintf(&b, "workqueue_unfinished_work_seconds{controller=\"controller-%d\",name=\"controller-%d\"} 0\n", c, c)
	}
	return b.String()
}

// stateBound is the most a check's own state may hold for a 5-minute
// increase window at the default 10s period.
const stateBound = 64 << 10

// A check's own state, for a 5-minute increase window at a 10s period over
// every reconcile series of a manager of 10 controllers (40 series, 31
// samples each), stays well under 64 KiB, and does not grow as the window
// slides for an hour.
func TestTheStateOfA5MinuteWindowIsSmall(t *testing.T) {
	s := newScraper(t, "increase(controller_runtime_reconcile_total[5m]) > 0 or sum(workqueue_depth) == 0")
	most := 0
	for i := range 360 { // an hour at 10s
		s.at(float64(10*i), manager(10, i))
		most = max(most, s.st.size())
	}
	t.Logf("the state holds %d bytes at most", most)
	if most > stateBound {
		t.Errorf("the state held %d bytes, more than %d", most, stateBound)
	}
	w := s.st.windows["controller_runtime_reconcile_total"]
	if len(w.series) != 40 || len(w.times) != 30 {
		t.Errorf("the window has %d series and %d times, want 40 and 30", len(w.series), len(w.times))
	}
}
