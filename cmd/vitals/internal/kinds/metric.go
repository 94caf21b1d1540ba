package kinds

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/promcheck"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Metric is a program's own Prometheus metrics, scraped over HTTP and
// judged by conditions (package promcheck).
var Metric = define(Kind{
	Name:          "metric",
	Summary:       "A program's own Prometheus metrics, scraped over HTTP as Prometheus scrapes them, and conditions on their values that must hold: a controller's reconcilers judged by its workqueue metrics, with no change to it.",
	Example:       `{url: http://localhost:8080/metrics, expr: "max(workqueue_longest_running_processor_seconds) < 5m"}`,
	ComponentType: health.ComponentTypeComponent, // the workload's own metrics
	CLI:           metricCLI,
	Details:       metricDetails,
}, block[MetricSpec]{
	fields: func(s *MetricSpec) []config.Field {
		return append(append([]config.Field{
			{Key: "url", Value: config.String(&s.Request.URL), Required: true,
				Doc: "Required: http:// or https://, the exposition's, as /metrics; the text format or OpenMetrics, gzip or not, at most 8 MiB, 50,000 samples and 250,000 labels."},
			{Key: "expr", Value: conditions(&s.Exprs), Required: true,
				Doc: "Required: a condition, or a list of them that must all hold, such as max(workqueue_depth) < 100, in the grammar of the metric kind's reference (docs/reference/config.md#metric). Each is read when the file loads; what is wrong is said at its column."},
		}, requestFields(&s.Request)...), tlsFields(&s.Request.TLS)...)
	},
	tls:   func(s *MetricSpec) *probe.TLSOptions { return &s.Request.TLS },
	token: func(s *MetricSpec) *string { return &s.Request.BearerTokenFile },
	timing: func(s MetricSpec, period, _ time.Duration) error {
		if w := promcheck.ShortestWindow(s.Exprs); w > 0 && w < 2*period {
			return config.FieldError("expr", fmt.Errorf("a window of %v holds two scrapes only when a scrape comes at least every %v: the period is %v; make the window at least %v", w, w/2, period, 2*period))
		}
		return nil
	},
	build: func(_ string, s MetricSpec, _ Env) (health.Checker, error) {
		if s.Request.URL == "" {
			return nil, errors.New("url is required")
		}
		return promcheck.New(promcheck.Spec{Request: s.Request, Exprs: s.Exprs})
	},
})

// MetricSpec is a metric check's block.
type MetricSpec struct {
	// Request is the scrape's request: its URL, headers, bearer token and
	// TLS, as an http check's.
	Request probe.HTTPSpec
	// Exprs are the conditions, as written.
	Exprs []string
}

// conditions reads expr: a condition or a list of them, each parsed, with
// what is wrong said at its column in the file.
func conditions(dst *[]string) config.Value {
	v := config.Strings(dst)
	v.Type = "condition or list of conditions"
	v.Read = func(d *config.Decoder, n ast.Node, path string) {
		items := []ast.Node{n}
		seq, isList := yamlnode.Unwrap(n).(*ast.SequenceNode)
		if isList {
			if len(seq.Values) == 0 {
				d.Errorf(n, path, "an empty list: give at least one condition")
				return
			}
			items = seq.Values
		}
		var out []string
		for i, item := range items {
			at := path
			if isList {
				at = fmt.Sprintf("%s[%d]", path, i)
			}
			var text string
			mark := d.Failures()
			config.String(&text).Read(d, item, at)
			if d.Failures() != mark {
				continue
			}
			if _, err := promcheck.Parse(text); err != nil {
				if se, ok := errors.AsType[*promcheck.SyntaxError](err); ok {
					d.ErrorfAt(item, text, se.Offset, at, "%s", se.Msg)
				} else {
					d.Errorf(item, at, "%v", err)
				}
				continue
			}
			out = append(out, text)
		}
		*dst = out
	}
	return v
}

// metricArgs are what a metric target is built from: the request's flags,
// and the conditions.
type metricArgs struct {
	request requestArgs
	exprs   []string // --expr
}

// metricScheme is what the schemes of metric targets put before a URL's
// own: metrics+http://HOST:PORT/metrics is http://HOST:PORT/metrics.
const metricScheme = "metrics+"

var metricCLI = takes(CLI{
	Schemes: []string{metricScheme + "http", metricScheme + "https"}, Target: "metrics+http://HOST[:PORT]/PATH, metrics+https://…",
	Help:    "a Prometheus exposition and --expr conditions on it",
	Example: "metrics+http://localhost:8080/metrics", ExampleFlags: []string{"--expr", "max(workqueue_depth) < 100"},
}, targets[metricArgs]{
	flags: func(a *metricArgs) []Flag {
		return append([]Flag{
			{Name: "expr", Value: stringsFlag(&a.exprs), Usage: "a condition on the metrics, such as 'max(workqueue_depth) < 100' (repeatable: all must hold)"},
		}, requestFlags(&a.request)...)
	},
	window: func(a metricArgs) time.Duration { return promcheck.ShortestWindow(a.exprs) },
	url: func(target string, a metricArgs) (*probe.Prober, error) {
		if len(a.exprs) == 0 {
			return nil, fmt.Errorf("target %q: a metric target needs --expr, a condition such as --expr 'max(workqueue_depth) < 100'", target)
		}
		for _, e := range a.exprs {
			if _, err := promcheck.Parse(e); err != nil {
				return nil, fmt.Errorf("--expr %q: %w", e, err)
			}
		}
		u, err := parseTarget(target)
		if err != nil {
			return nil, err
		}
		u.Scheme = strings.TrimPrefix(strings.ToLower(u.Scheme), metricScheme)
		s := MetricSpec{Exprs: a.exprs}
		if err := a.request.apply(&s.Request); err != nil {
			return nil, err
		}
		s.Request.URL = u.String()
		return promcheck.New(promcheck.Spec{Request: s.Request, Exprs: s.Exprs})
	},
})

// metricDetails is the reference's account of the conditions' grammar.
const metricDetails = "A condition compares a value read from the exposition with a number or a duration; `and` and `or` join conditions (`and` first, as in PromQL), and parentheses group them. `expr` may be a list: every condition must hold.\n\n" +
	"| part | written | |\n|---|---|---|\n" +
	"| selector | `name`, `name{label=\"v\", label!=\"v\", label=~\"re\", label!~\"re\"}`, `{__name__=~\"re\"}` | the series, as PromQL selects them: regular expressions (RE2) match whole; a label a series lacks is `\"\"`; `le` and `quantile` match as numbers (`le=\"1\"` is `le=\"1.0\"`); a histogram is its `_bucket`, `_sum` and `_count` series, a summary its quantiles, `_sum` and `_count` |\n" +
	"| aggregation | `max(…)`, `min(…)`, `sum(…)`, `avg(…)`, `count(…)` | one value of every series selected; without one, every series must hold on its own: `increase(controller_runtime_reconcile_total[5m]) > 0` asks every result (`error` too) to grow, `sum(increase(…)) > 0` any reconcile |\n" +
	"| `increase(SELECTOR[5m])`, `rate(SELECTOR[5m])` | | a counter's increase over the window, or its rate per second, from this check's own earlier scrapes, as Prometheus computes them (a drop is a reset; extrapolated to the window's edges). Until a series has two samples in the window the check stays pending, saying so |\n" +
	"| `age(SELECTOR)` | | now minus the value, a Unix time in seconds (`*_last_success_timestamp_seconds`), in seconds |\n" +
	"| comparison | `<`, `<=`, `>`, `>=`, `==`, `!=` and a number (`100`, `0.5`, `1e3`, `NaN`, `+Inf`) or a duration (`300ms`, `5m`, `1h30m`, `14d`), compared in seconds | a NaN meets only `!=`, as in PromQL |\n" +
	"| `absent(SELECTOR)` | | holds when no series matches |\n\n" +
	"A selector that matches no series fails its condition, saying `no series matches …`, but in `count(…)` and `sum(…)`, which are `0` (the count and the sum of nothing: controller-runtime's queue has no `workqueue_depth` series until its first item), and in `absent(…)`, which holds. The output says what each condition saw and wanted: `max(workqueue_longest_running_processor_seconds{controller=\"kafkacluster\"}) = 312.4 (want < 5m)`; without an aggregation it names the series that fail, the worst first, or the one nearest to failing. The observed value is that of the first condition that fails (else of the first), in its unit: `s` for `age`, a duration's comparison and `_seconds`, `/s` for `rate`, `1` for a number without one.\n\n" +
	"```yaml\n" +
	"checks:\n" +
	"  reconcilers:\n" +
	"    level: live\n" +
	"    metric:\n" +
	"      url: http://127.0.0.1:8080/metrics\n" +
	"      expr:\n" +
	"        # no reconcile has run 5 minutes (absent: a standby replica has no queue)\n" +
	"        - absent(workqueue_longest_running_processor_seconds{controller=\"kafkacluster\"}) or max(workqueue_longest_running_processor_seconds{controller=\"kafkacluster\"}) < 5m\n" +
	"        # progress while work waits\n" +
	"        - sum(increase(controller_runtime_reconcile_total{controller=\"kafkacluster\"}[5m])) > 0 or sum(workqueue_depth{controller=\"kafkacluster\"}) == 0\n" +
	"  backups:\n" +
	"    level: ready\n" +
	"    metric: {url: http://127.0.0.1:9100/metrics, expr: age(backup_last_success_timestamp_seconds) < 1d}\n" +
	"```"
