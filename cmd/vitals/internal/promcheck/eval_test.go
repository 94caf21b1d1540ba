package promcheck

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/health"
)

// controllerManager is an exposition as a controller-runtime manager's
// metrics server writes it (client_golang's text format), cut to what the
// tests read: two controllers, one of them stuck, a histogram, a summary,
// and values that are no numbers.
const controllerManager = `# HELP controller_runtime_active_workers Number of currently used workers per controller
# TYPE controller_runtime_active_workers gauge
controller_runtime_active_workers{controller="kafkacluster"} 1
controller_runtime_active_workers{controller="kafkatopic"} 0
# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="kafkacluster",result="error"} 0
controller_runtime_reconcile_total{controller="kafkacluster",result="requeue"} 0
controller_runtime_reconcile_total{controller="kafkacluster",result="requeue_after"} 0
controller_runtime_reconcile_total{controller="kafkacluster",result="success"} 7
controller_runtime_reconcile_total{controller="kafkatopic",result="error"} 0
controller_runtime_reconcile_total{controller="kafkatopic",result="requeue"} 0
controller_runtime_reconcile_total{controller="kafkatopic",result="requeue_after"} 0
controller_runtime_reconcile_total{controller="kafkatopic",result="success"} 3
# HELP controller_runtime_reconcile_time_seconds Length of time per reconciliation per controller
# TYPE controller_runtime_reconcile_time_seconds histogram
controller_runtime_reconcile_time_seconds_bucket{controller="kafkacluster",le="0.005"} 2
controller_runtime_reconcile_time_seconds_bucket{controller="kafkacluster",le="1"} 6
controller_runtime_reconcile_time_seconds_bucket{controller="kafkacluster",le="60"} 7
controller_runtime_reconcile_time_seconds_bucket{controller="kafkacluster",le="+Inf"} 7
controller_runtime_reconcile_time_seconds_sum{controller="kafkacluster"} 3.25
controller_runtime_reconcile_time_seconds_count{controller="kafkacluster"} 7
# HELP go_gc_duration_seconds A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.1e-05
go_gc_duration_seconds{quantile="0.5"} 5e-05
go_gc_duration_seconds{quantile="1"} 0.0012
go_gc_duration_seconds_sum 0.0031
go_gc_duration_seconds_count 40
# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{controller="kafkacluster",name="kafkacluster",priority=""} 312
workqueue_depth{controller="kafkatopic",name="kafkatopic",priority=""} 0
# HELP workqueue_longest_running_processor_seconds How many seconds has the longest running processor for workqueue been running.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{controller="kafkacluster",name="kafkacluster"} 312.4
workqueue_longest_running_processor_seconds{controller="kafkatopic",name="kafkatopic"} 0
# HELP backup_last_success_timestamp_seconds When the last backup succeeded.
# TYPE backup_last_success_timestamp_seconds gauge
backup_last_success_timestamp_seconds 1.7e+09
# TYPE odd gauge
odd{v="nan"} NaN
odd{v="inf"} +Inf
odd{v="-inf"} -Inf
`

// openMetrics is the same kinds of series as OpenMetrics writes them, as
// client_golang does when asked for it: counters' families without _total,
// _created samples, a unit, exemplars, timestamps in seconds, # EOF.
const openMetrics = `# HELP controller_runtime_reconcile Total number of reconciliations per controller.
# TYPE controller_runtime_reconcile counter
controller_runtime_reconcile_total{controller="kafkacluster",result="success"} 7 # {trace_id="abc"} 1.0 1.7e+09
controller_runtime_reconcile_created{controller="kafkacluster",result="success"} 1.69e+09
# HELP rq Request durations.
# TYPE rq histogram
# UNIT rq seconds
rq_bucket{le="0.5"} 1
rq_bucket{le="1.0"} 2 # {trace_id="x # y"} 0.7
rq_bucket{le="+Inf"} 3
rq_sum 2.5
rq_count 3
rq_created 1.69e+09
# TYPE build info
build_info{version="1.2"} 1
# TYPE up_created gauge
up_created 5 1700000000.5
# EOF
`

// at is the moment the tests judge at: backup_last_success_timestamp_seconds
// (1.7e9) was 1000s before it.
var at = time.Unix(1_700_001_000, 0)

// judgeOnce judges expr against one scrape of body.
func judgeOnce(t *testing.T, body string, om bool, expr string) verdict {
	t.Helper()
	x, err := newParser().parse([]byte(body), om)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	e, err := Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	st := newState([]*Expr{e})
	if err := st.observe(x, at); err != nil {
		t.Fatal(err)
	}
	return (&eval{x: x, now: at, st: st}).node(e.root)
}

var truths = [...]string{fails: "fails", holds: "holds", undecided: "undecided"}

// A condition against one scrape: whether it holds, what it says, and the
// value and unit it observed. Every operator, aggregation, matcher, and and
// or, no match, NaN and the infinities, histograms and summaries.
func TestConditionsAgainstAScrape(t *testing.T) {
	const none = math.MaxFloat64 // no observed value
	for _, tt := range []struct {
		expr  string
		truth string
		text  string
		value float64
		unit  string
	}{
		// The operators, on one series.
		{`workqueue_depth{controller="kafkacluster"} < 300`, "fails", `workqueue_depth{controller="kafkacluster",name="kafkacluster",priority=""} = 312 (want < 300)`, 312, "1"},
		{`workqueue_depth{controller="kafkacluster"} <= 312`, "holds", `workqueue_depth{controller="kafkacluster",name="kafkacluster",priority=""} = 312 (want <= 312)`, 312, "1"},
		{`workqueue_depth{controller="kafkacluster"} > 312`, "fails", "", 312, "1"},
		{`workqueue_depth{controller="kafkacluster"} >= 312`, "holds", "", 312, "1"},
		{`workqueue_depth{controller="kafkacluster"} == 312`, "holds", "", 312, "1"},
		{`workqueue_depth{controller="kafkacluster"} != 312`, "fails", "", 312, "1"},
		// Durations compare in seconds.
		{`max(workqueue_longest_running_processor_seconds{controller="kafkacluster"}) < 5m`, "fails",
			`max(workqueue_longest_running_processor_seconds{controller="kafkacluster"}) = 312.4 (want < 5m)`, 312.4, "s"},
		{`max(workqueue_longest_running_processor_seconds) < 5m13s`, "holds", "", 312.4, "s"},
		{`max(workqueue_longest_running_processor_seconds) < 300`, "fails", "max(workqueue_longest_running_processor_seconds) = 312.4 (want < 300)", 312.4, "s"},
		// The aggregations.
		{"sum(workqueue_depth) == 312", "holds", "sum(workqueue_depth) = 312 (want == 312)", 312, "1"},
		{"avg(workqueue_depth) == 156", "holds", "", 156, "1"},
		{"min(workqueue_depth) == 0", "holds", "", 0, "1"},
		{"max(workqueue_depth) == 312", "holds", "", 312, "1"},
		{"count(workqueue_depth) == 2", "holds", "count(workqueue_depth) = 2 (want == 2)", 2, "1"},
		{`count(workqueue_depth{controller="nope"}) == 0`, "holds", `count(workqueue_depth{controller="nope"}) = 0 (want == 0; no series matches workqueue_depth{controller="nope"})`, 0, "1"},
		// The sum of nothing is 0, as the count is: a queue with no item yet
		// has no depth series.
		{`sum(workqueue_depth{controller="nope"}) == 0`, "holds", `sum(workqueue_depth{controller="nope"}) = 0 (want == 0; no series matches workqueue_depth{controller="nope"})`, 0, "1"},
		{`sum(workqueue_depth{controller="nope"}) > 0`, "fails", "", 0, "1"},
		{`avg(workqueue_depth{controller="nope"}) == 0`, "fails", `no series matches workqueue_depth{controller="nope"}`, none, ""},
		{`min(workqueue_depth{controller="nope"}) == 0`, "fails", `no series matches workqueue_depth{controller="nope"}`, none, ""},
		// Without one, every series must hold; the output names those that
		// fail, or the one nearest to failing.
		{"workqueue_depth < 100", "fails", `workqueue_depth{controller="kafkacluster",name="kafkacluster",priority=""} = 312 (want < 100): 1 of 2 series`, 312, "1"},
		{"workqueue_depth < 1000", "holds", `workqueue_depth: 2 series, the nearest workqueue_depth{controller="kafkacluster",name="kafkacluster",priority=""} = 312 (want < 1000)`, 312, "1"},
		{"workqueue_depth > 100", "fails", `workqueue_depth{controller="kafkatopic",name="kafkatopic",priority=""} = 0 (want > 100): 1 of 2 series`, 0, "1"},
		{"controller_runtime_reconcile_total > 5", "fails",
			`controller_runtime_reconcile_total{controller="kafkacluster",result="error"} = 0, controller_runtime_reconcile_total{controller="kafkacluster",result="requeue"} = 0, controller_runtime_reconcile_total{controller="kafkacluster",result="requeue_after"} = 0 (want > 5): 7 of 8 series`, 0, "1"},
		// Label matchers: =, !=, =~ (whole), !~, and a label a series lacks.
		{`workqueue_depth{controller!="kafkacluster"} == 0`, "holds", "", 0, "1"},
		{`workqueue_depth{controller=~"kafka"} == 0`, "fails", `no series matches workqueue_depth{controller=~"kafka"}`, none, ""},
		{`workqueue_depth{controller=~"kafka.*"} >= 0`, "holds", "", 0, "1"},
		{`workqueue_depth{controller!~".*topic"} == 312`, "holds", "", 312, "1"},
		{`workqueue_depth{missing=""} >= 0`, "holds", "", 0, "1"},
		{`workqueue_depth{missing="x"} >= 0`, "fails", `no series matches workqueue_depth{missing="x"}`, none, ""},
		{`{__name__=~"workqueue_d.*", controller="kafkatopic"} == 0`, "holds", "", 0, "1"},
		{`{__name__="workqueue_depth"} >= 0`, "holds", "", 0, "1"},
		// No match fails, and says so; absent holds then.
		{"nope > 0", "fails", "no series matches nope", none, ""},
		{"max(nope) > 0", "fails", "no series matches nope", none, ""},
		{"absent(nope)", "holds", "absent(nope): no series matches", none, ""},
		{"absent(workqueue_depth)", "fails", "absent(workqueue_depth): 2 series match (want none)", none, ""},
		// and, or, and parentheses; the value is the one that decided.
		{"sum(workqueue_depth) == 0 or max(workqueue_longest_running_processor_seconds) < 5m", "fails",
			"sum(workqueue_depth) = 312 (want == 0) or max(workqueue_longest_running_processor_seconds) = 312.4 (want < 5m)", 312, "1"},
		{"sum(workqueue_depth) == 0 or max(workqueue_longest_running_processor_seconds) < 10m", "holds", "", 312.4, "s"},
		{"sum(workqueue_depth) > 0 and max(workqueue_longest_running_processor_seconds) < 5m", "fails", "", 312.4, "s"},
		{"sum(workqueue_depth) > 0 and max(workqueue_longest_running_processor_seconds) < 10m", "holds", "", 312, "1"},
		{"(nope > 0 or absent(nope)) and count(workqueue_depth) == 2", "holds",
			"(absent(nope): no series matches) and count(workqueue_depth) = 2 (want == 2)", 2, "1"}, // an or that holds says what holds
		{"absent(workqueue_depth) or max(workqueue_longest_running_processor_seconds) < 10m", "holds",
			"max(workqueue_longest_running_processor_seconds) = 312.4 (want < 10m)", 312.4, "s"},
		{"max(workqueue_depth) < 1000 and max(workqueue_longest_running_processor_seconds) < 5m", "fails",
			"max(workqueue_longest_running_processor_seconds) = 312.4 (want < 5m)", 312.4, "s"}, // an and that fails says what fails
		// NaN meets != only; the infinities compare as numbers.
		{`odd{v="nan"} != 0`, "holds", `odd{v="nan"} = NaN (want != 0)`, math.NaN(), "1"},
		{`odd{v="nan"} == NaN`, "fails", "", math.NaN(), "1"},
		{`odd{v="nan"} < 1`, "fails", "", math.NaN(), "1"},
		{`odd{v="nan"} >= 1`, "fails", "", math.NaN(), "1"},
		{`odd{v="inf"} == +Inf`, "holds", `odd{v="inf"} = +Inf (want == +Inf)`, math.Inf(1), "1"},
		{`odd{v="inf"} > 1e308`, "holds", "", math.Inf(1), "1"},
		{`odd{v="-inf"} < -1e308`, "holds", "", math.Inf(-1), "1"},
		{`odd < +Inf`, "fails", `odd{v="nan"} = NaN, odd{v="inf"} = +Inf (want < +Inf): 2 of 3 series`, math.NaN(), "1"}, // NaN first: no number at all
		{"sum(odd) > 0", "fails", "sum(odd) = NaN (want > 0)", math.NaN(), "1"},
		{`max(odd{v=~".*inf"}) == +Inf`, "holds", "", math.Inf(1), "1"},
		{`max(odd) == +Inf`, "holds", "", math.Inf(1), "1"}, // max passes NaN by, as PromQL's
		// Histograms and summaries, as their series.
		{`controller_runtime_reconcile_time_seconds_bucket{le="1"} == 6`, "holds",
			`controller_runtime_reconcile_time_seconds_bucket{controller="kafkacluster",le="1.0"} = 6 (want == 6)`, 6, "1"},
		{`controller_runtime_reconcile_time_seconds_bucket{le="1.0"} == 6`, "holds", "", 6, "1"},
		{`controller_runtime_reconcile_time_seconds_bucket{le="+Inf"} == 7`, "holds", "", 7, "1"},
		{`count(controller_runtime_reconcile_time_seconds_bucket) == 4`, "holds", "", 4, "1"},
		{"controller_runtime_reconcile_time_seconds_sum < 5", "holds", "", 3.25, "s"},
		{"controller_runtime_reconcile_time_seconds_count == 7", "holds", "", 7, "1"},
		{"controller_runtime_reconcile_time_seconds > 0", "fails", "no series matches controller_runtime_reconcile_time_seconds", none, ""},
		{`go_gc_duration_seconds{quantile="0.5"} < 1ms`, "holds", `go_gc_duration_seconds{quantile="0.5"} = 5e-05 (want < 1ms)`, 5e-05, "s"},
		{`go_gc_duration_seconds{quantile="1.0"} < 1ms`, "fails", "", 0.0012, "s"},
		{"count(go_gc_duration_seconds) == 3", "holds", "", 3, "1"},
		{"go_gc_duration_seconds_count == 40", "holds", "", 40, "1"},
		// age is now minus a Unix time, in seconds.
		{"age(backup_last_success_timestamp_seconds) < 1h", "holds", "age(backup_last_success_timestamp_seconds) = 1000 (want < 1h)", 1000, "s"},
		{"age(backup_last_success_timestamp_seconds) < 10m", "fails", "", 1000, "s"},
		{"max(age(backup_last_success_timestamp_seconds)) < 900", "fails", "max(age(backup_last_success_timestamp_seconds)) = 1000 (want < 900)", 1000, "s"},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			v := judgeOnce(t, controllerManager, false, tt.expr)
			if got := truths[v.truth]; got != tt.truth {
				t.Errorf("%s: %s, want %s (%s)", tt.expr, got, tt.truth, v.text)
			}
			if tt.text != "" && v.text != tt.text {
				t.Errorf("%s says\n  %s\nwant\n  %s", tt.expr, v.text, tt.text)
			}
			switch {
			case tt.value == none && v.hasValue:
				t.Errorf("%s observed %v %s, want nothing", tt.expr, v.value, v.unit)
			case tt.value == none:
			case !v.hasValue:
				t.Errorf("%s observed nothing, want %v %s", tt.expr, tt.value, tt.unit)
			case !(v.value == tt.value || math.IsNaN(v.value) && math.IsNaN(tt.value)) || v.unit != tt.unit:
				t.Errorf("%s observed %v %s, want %v %s", tt.expr, v.value, v.unit, tt.value, tt.unit)
			}
		})
	}
}

// An OpenMetrics exposition reads as the same series as the text format's:
// a counter by its _total samples, no _created series of a counter or a
// histogram (metadata, not series), exemplars and timestamps left out, and
// le values matched as numbers. Types the text format lacks (info) are read
// too.
func TestOpenMetricsIsReadAsTheSameSeries(t *testing.T) {
	for _, tt := range []struct {
		expr, truth string
	}{
		{`controller_runtime_reconcile_total{result="success"} == 7`, "holds"},
		{`count(controller_runtime_reconcile_total) == 1`, "holds"},
		{`absent(controller_runtime_reconcile_created)`, "holds"},
		{`absent(rq_created)`, "holds"},
		{`absent(controller_runtime_reconcile)`, "holds"},
		{`rq_bucket{le="1"} == 2`, "holds"},
		{`rq_bucket{le="1.0"} == 2`, "holds"},
		{`rq_bucket{le="+Inf"} == 3`, "holds"},
		{`rq_count == 3 and rq_sum == 2.5`, "holds"},
		{`build_info{version="1.2"} == 1`, "holds"},
		{`up_created == 5`, "holds"}, // a gauge named so is a series
	} {
		v := judgeOnce(t, openMetrics, true, tt.expr)
		if got := truths[v.truth]; got != tt.truth {
			t.Errorf("%s: %s, want %s (%s)", tt.expr, got, tt.truth, v.text)
		}
	}
	// Served without its content type, # EOF says what it is.
	v := judgeOnce(t, openMetrics, false, `controller_runtime_reconcile_total{result="success"} == 7`)
	if v.truth != holds {
		t.Errorf("OpenMetrics under another content type: %s (%s)", truths[v.truth], v.text)
	}
}

// What is not an exposition is refused with its line; what is too large
// is refused before it is parsed.
func TestExpositionsRefused(t *testing.T) {
	for _, tt := range []struct {
		name, body, want string
	}{
		{"html", "<html><body>hello</body></html>\n", "the answer is not a Prometheus exposition: line 1: "},
		{"a bad value", "# TYPE x gauge\nx 1\ny abc\n", "line 3: "},
		{"a second type", "# TYPE x gauge\n# TYPE x counter\nx 1\n", "line 2: second TYPE line"},
		{"too many samples", strings.Repeat("x 1\n", MaxSamples+1), "more than 50000 samples"},
		{"too many labels", strings.Repeat(`x{a="1",b="2",c="3",d="4",e="5",f="6"} 1`+"\n", MaxSamples), "more than 250000 labels"},
	} {
		_, err := newParser().parse([]byte(tt.body), false)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want …%s…", tt.name, err, tt.want)
		}
	}
	if _, err := newParser().parse([]byte(strings.Repeat("# only comments\n", MaxSamples+1)), false); err != nil {
		t.Errorf("comments are no samples: %v", err)
	}
}

// The unit of a condition's value.
func TestUnits(t *testing.T) {
	for _, tt := range []struct{ expr, unit string }{
		{"x > 1", health.Dimensionless},
		{"x_seconds > 1", "s"},
		{"x_seconds_total > 1", "s"},
		{"x_bytes > 1", "bytes"},
		{"x_ratio > 1", "ratio"},
		{"x_seconds_count > 1", health.Dimensionless},
		{"x_seconds_bucket > 1", health.Dimensionless},
		{"x_seconds_sum > 1", "s"},
		{"x > 1s", "s"},
		{"age(x) > 1", "s"},
		{"count(x_bytes) > 1", health.Dimensionless},
		{"rate(x_total[5m]) > 1", "/s"},
		{"rate(x_bytes_total[5m]) > 1", "bytes/s"},
		{"increase(x_seconds_total[5m]) > 1", "s"},
	} {
		e, err := Parse(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		c := e.root.(*compare)
		if got := unitOf(c.value, c.want); got != tt.unit {
			t.Errorf("%s: unit %q, want %q", tt.expr, got, tt.unit)
		}
	}
}
