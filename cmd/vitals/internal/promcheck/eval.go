package promcheck

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// truth is a condition's verdict: it holds, it fails, or it cannot be
// decided yet (a rate whose window has one scrape so far). and and or
// combine them as Kleene's logic does: one that fails decides an and, one
// that holds decides an or, whatever the other.
type truth int

const (
	fails truth = iota
	holds
	undecided
)

func and(a, b truth) truth {
	switch {
	case a == fails || b == fails:
		return fails
	case a == undecided || b == undecided:
		return undecided
	}
	return holds
}

func or(a, b truth) truth {
	switch {
	case a == holds || b == holds:
		return holds
	case a == undecided || b == undecided:
		return undecided
	}
	return fails
}

// verdict is what a condition came to: its truth, what the output says of
// it, and the value it observed, with its unit (the first of its leaves that
// came to its truth, for a condition of several).
type verdict struct {
	truth    truth
	text     string
	value    float64
	unit     string
	hasValue bool
}

// eval judges a condition against one scrape, at now, with the windows of
// its range functions brought up to that scrape (state.observe).
type eval struct {
	x   exposition
	now time.Time
	st  *state
}

func (ev *eval) node(n node) verdict {
	switch n := n.(type) {
	case *binary:
		l, r := ev.node(n.left), ev.node(n.right)
		word, t := " or ", or(l.truth, r.truth)
		if n.and {
			word, t = " and ", and(l.truth, r.truth)
		}
		v := verdict{truth: t, text: l.text + word + r.text}
		// An or that holds is said by the sides that hold, an and that fails
		// by those that fail: what decided it, not what did not.
		if decided := n.and && t == fails || !n.and && t == holds; decided && l.truth != r.truth {
			if l.truth == t {
				v.text = l.text
			} else {
				v.text = r.text
			}
		}
		// The value is that of the first side that came to the whole's
		// truth, which decided it; none when that side has none (absent).
		for _, side := range []verdict{l, r} {
			if side.truth == t && side.hasValue {
				v.value, v.unit, v.hasValue = side.value, side.unit, true
				break
			}
		}
		return v
	case *group:
		v := ev.node(n.inner)
		v.text = "(" + v.text + ")"
		return v
	case *absent:
		found := 0
		ev.x.selectSeries(n.sel, func(series) { found++ })
		if found == 0 {
			return verdict{truth: holds, text: n.text + ": no series matches"}
		}
		return verdict{truth: fails, text: fmt.Sprintf("%s: %d series match (want none)", n.text, found)}
	case *compare:
		return ev.compare(n)
	}
	panic(fmt.Sprintf("promcheck: a node of type %T", n))
}

// point is one series' value now: through its function, if any.
type point struct {
	key   string // the series, as PromQL writes it
	value float64
}

// compare judges one comparison.
func (ev *eval) compare(c *compare) verdict {
	v := c.value
	unit := unitOf(v, c.want)
	points, matched, why := ev.points(v)
	want := "(want " + c.want.String() + ")"
	switch {
	case why != "":
		return verdict{truth: undecided, text: why}
	case matched == 0 && (v.agg == "count" || v.agg == "sum"):
		// The count and the sum of nothing are 0: a queue that has had no
		// item yet has no depth series (controller-runtime's priority
		// queue), and sum(workqueue_depth) == 0 holds of it. Said, all the
		// same.
		return leaf(c.want, v.text, 0, "(want "+c.want.String()+"; no series matches "+v.sel.text+")", unit)
	case v.agg == "count":
		return leaf(c.want, v.text, float64(len(points)), want, unit)
	case matched == 0:
		return verdict{truth: fails, text: "no series matches " + v.sel.text}
	case v.agg != "":
		return leaf(c.want, v.text, aggregate(v.agg, points), want, unit)
	}
	return perSeries(c, points, want, unit)
}

// leaf is the verdict of one value against want.
func leaf(want probe.Comparison, text string, value float64, wantText, unit string) verdict {
	t := fails
	if want.Holds(value) {
		t = holds
	}
	return verdict{truth: t, text: fmt.Sprintf("%s = %s %s", text, probe.FormatNumber(value), wantText),
		value: value, unit: unit, hasValue: true}
}

// maxNamed is how many failing series an output names: the rest are
// counted.
const maxNamed = 3

// perSeries judges a value without an aggregation: every series must hold.
// The output names the series that fail, the worst first, or, when all
// hold, the one nearest to failing (the highest against < and <=, the
// lowest against > and >=), which is also the observed value.
func perSeries(c *compare, points []point, want, unit string) verdict {
	worse := func(a, b float64) bool { // a is nearer to failing, or further past it, than b
		switch c.want.Op {
		case "<", "<=":
			return a > b || math.IsNaN(a) && !math.IsNaN(b)
		case ">", ">=":
			return a < b || math.IsNaN(a) && !math.IsNaN(b)
		}
		return false
	}
	var bad []point
	for _, p := range points {
		if !c.want.Holds(p.value) {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		nearest := points[0]
		for _, p := range points[1:] {
			if worse(p.value, nearest.value) {
				nearest = p
			}
		}
		v := verdict{truth: holds, value: nearest.value, unit: unit, hasValue: true}
		if len(points) == 1 {
			v.text = fmt.Sprintf("%s = %s %s", seriesText(c.value, nearest.key), probe.FormatNumber(nearest.value), want)
		} else {
			v.text = fmt.Sprintf("%s: %d series, the nearest %s = %s %s", c.value.text, len(points),
				seriesText(c.value, nearest.key), probe.FormatNumber(nearest.value), want)
		}
		return v
	}
	slices.SortStableFunc(bad, func(a, b point) int {
		switch {
		case worse(a.value, b.value):
			return -1
		case worse(b.value, a.value):
			return 1
		}
		return 0
	})
	named := make([]string, 0, maxNamed)
	for _, p := range bad[:min(len(bad), maxNamed)] {
		named = append(named, seriesText(c.value, p.key)+" = "+probe.FormatNumber(p.value))
	}
	text := strings.Join(named, ", ") + " " + want
	if len(points) > 1 {
		text += fmt.Sprintf(": %d of %d series", len(bad), len(points))
	}
	return verdict{truth: fails, text: text, value: bad[0].value, unit: unit, hasValue: true}
}

// seriesText writes a value of one series: the series, through the value's
// function (increase(x{a="b"}[5m])).
func seriesText(v *valueExpr, key string) string {
	switch v.fn {
	case "increase", "rate":
		return v.fn + "(" + key + "[" + v.rngText + "])"
	case "age":
		return "age(" + key + ")"
	}
	return key
}

// points are the values of v's series now, sorted by series, and how many
// series the selector matched. why, when not "", says why v cannot be
// decided yet: its function needs two samples of a series in its window,
// and no series it matched has them.
func (ev *eval) points(v *valueExpr) (points []point, matched int, why string) {
	switch v.fn {
	case "increase", "rate":
		w := ev.st.windows[v.sel.text]
		matched = len(w.series)
		for key, values := range w.series {
			ts, vs := w.samples(*values)
			if r, ok := extrapolated(ts, vs, ev.now, v.rng, v.fn == "rate"); ok {
				points = append(points, point{key, r})
			}
		}
		if matched > 0 && len(points) == 0 {
			scrapes := w.scrapesWithin(ev.now, v.rng)
			if scrapes < 2 {
				why = fmt.Sprintf("%s needs two scrapes in its %s window, and has %d so far", v.text, v.rngText, scrapes)
			} else {
				why = fmt.Sprintf("%s needs two samples of a series in its %s window, and the %d it matches are new", v.text, v.rngText, matched)
			}
		}
	default:
		now := float64(ev.now.UnixNano()) / 1e9
		named := v.agg == "" // only an output that names series needs their keys
		ev.x.selectSeries(v.sel, func(s series) {
			matched++
			value := s.value
			if v.fn == "age" {
				value = now - value
			}
			p := point{value: value}
			if named {
				p.key = s.key()
			}
			points = append(points, p)
		})
	}
	if v.agg == "" {
		slices.SortFunc(points, func(a, b point) int { return strings.Compare(a.key, b.key) })
	}
	return points, matched, why
}

// aggregate is an aggregation of values, as PromQL's: a NaN counts in sum
// and avg, and max and min take it only when every value is one.
func aggregate(agg string, points []point) float64 {
	r := points[0].value
	switch agg {
	case "sum", "avg":
		r = 0
		for _, p := range points {
			r += p.value
		}
		if agg == "avg" {
			r /= float64(len(points))
		}
	case "max":
		for _, p := range points[1:] {
			if p.value > r || math.IsNaN(r) {
				r = p.value
			}
		}
	case "min":
		for _, p := range points[1:] {
			if p.value < r || math.IsNaN(r) {
				r = p.value
			}
		}
	}
	return r
}

// unitOf is the unit of a value's observed number: seconds for age and for
// a value compared with a duration, the unit a metric's name ends with by
// Prometheus's conventions (_seconds, _bytes, …; before _total), per second
// for rate, and health.Dimensionless for a count, a bucket or a name that
// says none.
func unitOf(v *valueExpr, want probe.Comparison) string {
	unit := nameUnit(v.sel.name)
	switch {
	case v.agg == "count":
		return health.Dimensionless
	case v.fn == "age":
		return "s"
	case v.fn == "rate" && unit == health.Dimensionless:
		return "/s"
	case v.fn == "rate":
		return unit + "/s"
	case want.Duration:
		return "s"
	}
	return unit
}

// nameUnits are the units that Prometheus's naming conventions put at the
// end of a metric's name, and how an observed value writes them.
var nameUnits = map[string]string{
	"seconds": "s", "milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns",
	"bytes": "bytes", "bits": "bits", "ratio": "ratio", "percent": "percent",
	"celsius": "celsius", "meters": "meters", "volts": "volts", "amperes": "amperes",
	"joules": "joules", "grams": "grams", "hertz": "hertz",
}

func nameUnit(name string) string {
	if strings.HasSuffix(name, "_count") || strings.HasSuffix(name, "_bucket") {
		return health.Dimensionless
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, "_sum"), "_total")
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		if u, ok := nameUnits[name[i+1:]]; ok {
			return u
		}
	}
	return health.Dimensionless
}
