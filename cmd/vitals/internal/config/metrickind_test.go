package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What is wrong with a metric check is said where it is: a condition's
// mistake at its column in the file, however the condition is written
// (plain, quoted, in a list, in a literal block).
func TestBadMetricChecksSayWhatAndWhere(t *testing.T) {
	_, err := parse(t, y(
		"checks:",
		"  a: {metric: {url: http://localhost:8080/metrics, expr: max(x) > }}",
		`  b: {metric: {url: http://localhost:8080/metrics, expr: "rate(x[5]) > 1"}}`,
		"  c:",
		"    metric:",
		"      url: http://localhost:8080/metrics",
		"      expr:",
		"        - max(x) < 5m",
		`        - 'x{a="b"} < 1oo'`,
		"  d:",
		"    metric:",
		"      url: http://localhost:8080/metrics",
		"      expr: |",
		"        max(x) < 5m",
		"          and y{a=~\"(\"} > 0",
		"  e: {metric: {url: ftp://localhost/metrics, expr: x > 1}}",
		"  f: {metric: {url: http://localhost:8080/metrics}}",
		"  g: {metric: {url: http://localhost:8080/metrics, expr: []}}",
		"  h: {metric: {url: http://localhost:8080/metrics, expr: x > 1, method: POST}}",
		"  i: {metric: {url: http://localhost:8080/metrics, expr: x > 1, bearer-token-file: /nonexistent/token}}",
	))
	want := []string{
		`vitals.yaml:2:66: checks.a.metric.expr: want a number or a duration after >, such as > 100 or > 5m; got the end`,
		`vitals.yaml:3:66: checks.b.metric.expr: the window: "5" has no unit: write 5s (or ms, m, h, d, w, y)`,
		`vitals.yaml:9:23: checks.c.metric.expr[1]: "1oo": "oo" is not a unit of a duration (want ms, s, m, h, d, w or y, as in 1h30m)`,
		`vitals.yaml:15:20: checks.d.metric.expr: the regular expression "(": error parsing regexp: missing closing ): ` + "`(`",
		`vitals.yaml:16:15: checks.e.metric: URL "ftp://localhost/metrics": scheme must be http or https`,
		`vitals.yaml:17:15: checks.f.metric: expr is required: give one condition or a list of them`,
		`vitals.yaml:18:58: checks.g.metric.expr: an empty list: give at least one condition`,
		`vitals.yaml:19:65: checks.h.metric.method: unknown field "method" (want bearer-token-file, ca-file, cert, expr, headers, insecure, key, server-name, url)`,
		`vitals.yaml:20:15: checks.i.metric: bearer token file: open /nonexistent/token: no such file or directory`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Parse error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// Where the file writes a condition so that the column of what is wrong
// cannot be pointed at (a folded block, a ${VAR} expanded), the error is
// where the condition starts, and says the column in it.
func TestAConditionsColumnWhereTheFileCannotShowIt(t *testing.T) {
	_, err := parse(t, y(
		"checks:",
		"  a:",
		"    metric:",
		"      url: http://x/metrics",
		"      expr: >",
		"        max(x) < 5m",
		"        and y ~ 1",
		`  b: {metric: {url: http://x/metrics, expr: "x{h=\"${HOST}\"} > 1oo"}}`,
	))
	want := []string{
		`vitals.yaml:5:13: checks.a.metric.expr: column 19 of the value: '~' has no place in a condition`,
		`vitals.yaml:8:45: checks.b.metric.expr: column 22 of the value: "1oo": "oo" is not a unit of a duration (want ms, s, m, h, d, w or y, as in 1h30m)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Parse error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// A check's timing must let its kind judge: a window of increase or rate
// holds two scrapes, a bound on an answer's time is under the timeout.
func TestTimingsThatCannotJudge(t *testing.T) {
	_, err := parse(t, y(
		"checks:",
		`  a: {period: 1m, metric: {url: http://x/metrics, expr: [x > 1, "increase(c_total[30s]) > 0 or rate(d_total[5m]) > 1"]}}`,
		"  b: {timeout: 500ms, http: {url: http://x/, max-duration: 500ms}}",
		`  c: {period: 1m, metric: {url: http://x/metrics, expr: "increase(c_total[2m]) > 0"}}`,
		"  d: {timeout: 2s, period: 5s, http: {url: http://x/, max-duration: 1s}}",
	))
	want := []string{
		`vitals.yaml:2:57: checks.a.metric.expr: a window of 30s holds two scrapes only when a scrape comes at least every 15s: the period is 1m0s; make the window at least 2m0s`,
		`vitals.yaml:3:60: checks.b.http.max-duration: 500ms is not under the check's timeout 500ms, which ends a run first: make it shorter, or the timeout longer`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Parse error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
}

// A metric check that loads, with its conditions as written; a bearer
// token file is not looked for when the file is checked for another
// machine.
func TestAMetricCheck(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("t0ken\n"), 0o600)
	c, err := parse(t, y(
		"checks:",
		"  reconcilers:",
		"    level: live",
		"    metric:",
		"      url: https://127.0.0.1:8443/metrics",
		"      bearer-token-file: "+token,
		"      insecure: true",
		"      expr:",
		`        - max(workqueue_longest_running_processor_seconds{controller="kafkacluster"}) < 5m`,
		`        - increase(controller_runtime_reconcile_total[2m]) > 0 or sum(workqueue_depth) == 0`,
	))
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Checks[0]; ch.Kind != "metric" || ch.ComponentType != "component" || ch.FailureThreshold != 3 {
		t.Fatalf("%+v", ch)
	}
	// Written on one line (vitals validate --print), the block reads back
	// the same: a condition's braces and commas are quoted.
	want := `{url: https://127.0.0.1:8443/metrics, bearer-token-file: ` + token + `, insecure: true, expr: ["max(workqueue_longest_running_processor_seconds{controller=\"kafkacluster\"}) < 5m", "increase(controller_runtime_reconcile_total[2m]) > 0 or sum(workqueue_depth) == 0"]}`
	if got := c.Checks[0].Source; got != want {
		t.Fatalf("Source:\n%s\nwant\n%s", got, want)
	}
	again, err := parse(t, y("checks:", "  reconcilers: {level: live, metric: "+c.Checks[0].Source+"}"))
	if err != nil || again.Checks[0].Source != want {
		t.Fatalf("the block as written on one line does not read back: %v", err)
	}
}

// A block written on one line reads back as the same block, whatever its
// scalars hold: a JSONPath query's brackets, a block scalar, quotes.
func TestABlockOnOneLineReadsBack(t *testing.T) {
	c, err := parse(t, y(
		"checks:",
		"  api:",
		"    http:",
		"      url: http://localhost:8080/x",
		"      json:",
		"        $.checks[?@.name=='db'].status: pass",
		`        "$.a": "< 100"`,
		"        $.ratio: 1.50",
		"  cmd:",
		"    exec:",
		`      command: [sh, -c, 'echo "a, b" # not a comment', "\u00e9\x41\t", 'it''s', "two \`,
		`        lines"]`,
		"      output: |",
		"        < 80",
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range c.Checks {
		again, err := parse(t, y("checks:", "  "+ch.Name+": {"+ch.Kind+": "+ch.Source+"}"))
		if err != nil || again.Checks[0].Source != ch.Source {
			t.Errorf("%s: %s does not read back: %v", ch.Name, ch.Source, err)
		}
	}
	if want := `{url: http://localhost:8080/x, json: {"$.checks[?@.name=='db'].status": pass, "$.a": "< 100", $.ratio: 1.50}}`; c.Checks[0].Source != want {
		t.Errorf("Source %s, want %s", c.Checks[0].Source, want)
	}
	if want := `{command: [sh, -c, "echo \"a, b\" # not a comment", "éA\t", "it's", "two lines"], output: "< 80\n"}`; c.Checks[1].Source != want {
		t.Errorf("Source %s, want %s", c.Checks[1].Source, want)
	}
}

// The other comparisons of vitals: an http check's json values (a
// comparison when one whole, else a pattern, as before) and its response
// time, an exec command's output; each said wrong at its field.
func TestBadComparisonsSayWhatAndWhere(t *testing.T) {
	_, err := parse(t, y(
		"checks:",
		`  a: {http: {url: "http://x/", json: {$.depth: "<(1"}}}`,
		`  c: {http: {url: "http://x/", max-duration: fast}}`,
		`  d: {exec: {command: [df], output: "about 80"}}`,
		`  e: {exec: {command: [df], output: "< eighty"}}`,
	))
	want := []string{
		`vitals.yaml:2:48: checks.a.http.json.$.depth: pattern "<(1": error parsing regexp: missing closing ): ` + "`<(1`",
		`vitals.yaml:3:46: checks.c.http.max-duration: "fast" is not a duration such as 10s, 500ms or 1m30s`,
		`vitals.yaml:4:37: checks.d.exec.output: comparison "about 80": want an operator (<, <=, >, >=, == or !=) and a number or a duration, such as < 100 or <= 5m`,
		`vitals.yaml:5:37: checks.e.exec.output: comparison "< eighty": "eighty" is neither a number nor a duration (such as 100, 0.5, 1e3 or 5m)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("Parse error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	if _, err := parse(t, y(
		"checks:",
		`  a: {http: {url: "http://x/", max-duration: 300ms, json: {$.depth: "< 100", $.status: UP, $.html: "<html>", $.lag: ">= 5m"}}}`,
		`  b: {exec: {command: [df], output: "< 80"}}`,
	)); err != nil {
		t.Fatal(err)
	}
}
