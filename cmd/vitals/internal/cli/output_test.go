//go:build !vitals_probe

package cli

import (
	"bytes"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/vitalstest"
	"github.com/vitals-dev/vitals/health"
)

// printsNothing are the commands that print no result, and so take no -o:
// vitals run and work run (the workload's or the command's output, and the
// logs), beat and work end (quiet), the parents of subcommands, and cobra's
// own. vitals beat's --output is another thing: the text of the result it
// reports, with no -o.
var printsNothing = []string{"vitals", "vitals run", "vitals beat", "vitals import", "vitals work", "vitals work end",
	"vitals work run", "vitals completion", "vitals help"}

// printsTables are the commands that print a table, and so take wide too.
var printsTables = []string{"vitals checks", "vitals hooks"}

// Every command that prints a result takes the one -o: the same flag, the
// same set (wide where it prints a table), the same help.
func TestEveryCommandThatPrintsTakesTheOneOutputFlag(t *testing.T) {
	var walk func(cmd *cobra.Command)
	seen := 0
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		path := cmd.CommandPath()
		if strings.HasPrefix(path, "vitals completion ") || slices.Contains(printsNothing, path) {
			if f := cmd.Flags().Lookup("output"); f != nil {
				if _, format := f.Value.(*outputFlag); format || f.Shorthand != "" {
					t.Errorf("%s: an -o, for a command that prints no result", path)
				}
			}
			return
		}
		seen++
		f := cmd.Flags().Lookup("output")
		if f == nil {
			t.Errorf("%s: no -o", path)
			return
		}
		o, ok := f.Value.(*outputFlag)
		if !ok || f.Shorthand != "o" || f.DefValue != "text" {
			t.Errorf("%s: -o is %T, -%s, default %q; want the outputFlag, -o, text", path, f.Value, f.Shorthand, f.DefValue)
			return
		}
		wantUsage := "how to print the result: text, json or yaml"
		if slices.Contains(printsTables, path) {
			wantUsage = "how to print the result: text (a table), wide (more columns), json or yaml"
		}
		if o.table != slices.Contains(printsTables, path) || f.Usage != wantUsage {
			t.Errorf("%s: -o takes %v, %q", path, o.allowed(), f.Usage)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	if seen < 15 { // version, checks, check, health, events, restart, notify, stop, start, hooks, probe, wait, validate, import pebble, import k8s
		t.Errorf("%d commands take -o, want at least 15", seen)
	}
}

// -o takes its set and refuses the rest, saying the set; wide is for tables.
func TestTheOutputFlagTakesItsSet(t *testing.T) {
	for _, tc := range []struct {
		table bool
		value string
		err   string // "": taken
	}{
		{false, "text", ""},
		{false, "json", ""},
		{false, "yaml", ""},
		{false, "wide", "use text, json or yaml"},
		{false, "table", "use text, json or yaml"},
		{false, "JSON", "use text, json or yaml"},
		{false, "", "use text, json or yaml"},
		{true, "wide", ""},
		{true, "text", ""},
		{true, "table", "use text, wide, json or yaml"},
		{true, "yml", "use text, wide, json or yaml"},
	} {
		o := &outputFlag{value: formatText, table: tc.table}
		err := o.Set(tc.value)
		switch {
		case tc.err == "" && (err != nil || o.String() != tc.value):
			t.Errorf("table %v, %q: %v, %q; want it taken", tc.table, tc.value, err, o)
		case tc.err != "" && (err == nil || err.Error() != tc.err || o.value != formatText):
			t.Errorf("table %v, %q: %v, %q; want %q, and text kept", tc.table, tc.value, err, o, tc.err)
		}
	}
}

// YAML is the same document as JSON: the same keys, in the same order,
// and the same values.
func TestYAMLIsTheSameDocumentAsJSON(t *testing.T) {
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := []client.Check{{Name: "db", Level: health.Ready, Kind: "postgres", Status: health.Warn, Since: since, Runs: 3,
		SuccessThreshold: 1, FailureThreshold: 3, Period: client.Duration(10 * time.Second),
		Last: &client.Result{Time: since, Output: "a: b # c", ObservedValue: 1.5, ObservedUnit: "ms"}}}
	var j, y bytes.Buffer
	(&outputFlag{value: formatJSON}).write(&j, v)
	(&outputFlag{value: formatYAML}).write(&y, v)
	sameDocument(t, j.Bytes(), y.Bytes())
	if !strings.HasPrefix(y.String(), "- name: db\n  level: ready\n  kind: postgres\n") {
		t.Errorf("YAML not in the JSON's order:\n%s", y.String())
	}
}

// A stream's items are JSON lines, or YAML documents each after ---.
func TestAStreamIsJSONLinesOrYAMLDocuments(t *testing.T) {
	items := []map[string]any{{"id": 1, "type": "check-failed"}, {"id": 2, "type": "check-passed"}}
	var j, y bytes.Buffer
	for _, it := range items {
		(&outputFlag{value: formatJSON}).writeItem(&j, it)
		(&outputFlag{value: formatYAML}).writeItem(&y, it)
	}
	if want := "{\"id\":1,\"type\":\"check-failed\"}\n{\"id\":2,\"type\":\"check-passed\"}\n"; j.String() != want {
		t.Errorf("JSON lines %q, want %q", j.String(), want)
	}
	if want := "---\nid: 1\ntype: check-failed\n---\nid: 2\ntype: check-passed\n"; y.String() != want {
		t.Errorf("YAML documents %q, want %q", y.String(), want)
	}
}

// A file that a command makes is printed as it is for text and yaml,
// comments and all, and as the same document in JSON.
func TestAFileIsPrintedAsItIsOrAsJSON(t *testing.T) {
	file := []byte("# made by vitals import\nlisten: \":8558\"\nchecks:\n  web:\n    http: {url: \"http://localhost:8080/\"} # the kubelet's\n    period: 10s\n    failure-threshold: 3\n")
	for _, f := range []format{formatText, formatYAML} {
		var b bytes.Buffer
		(&outputFlag{value: f}).writeFile(&b, file)
		if b.String() != string(file) {
			t.Errorf("-o %s: %q, want the file as it is", f, b.String())
		}
	}
	var j bytes.Buffer
	if err := (&outputFlag{value: formatJSON}).writeFile(&j, file); err != nil {
		t.Fatal(err)
	}
	want := `{
  "listen": ":8558",
  "checks": {
    "web": {
      "http": {
        "url": "http://localhost:8080/"
      },
      "period": "10s",
      "failure-threshold": 3
    }
  }
}
`
	if j.String() != want {
		t.Errorf("-o json:\n%s\nwant:\n%s", j.String(), want)
	}
}

// The wide table adds the passes and failures in a row against their
// thresholds, the period, the timeout, when the last run began and how long
// it took, and does not cut the last result.
func TestTheWideTableHasMoreColumns(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	long := strings.Repeat("x", 100)
	checks := []client.Check{
		{Name: "db", Level: health.Ready, Kind: "postgres", Status: health.Warn, Since: now.Add(-time.Minute), Runs: 6,
			Successes: 0, Failures: 2, SuccessThreshold: 1, FailureThreshold: 3,
			Period: client.Duration(10 * time.Second), Timeout: client.Duration(time.Second),
			Last: &client.Result{Time: now.Add(-3 * time.Second), Duration: client.Duration(12 * time.Millisecond), Output: long}},
		{Name: "loop", Level: health.Live, Kind: "heartbeat", Status: health.Pending, SuccessThreshold: 1, FailureThreshold: 1,
			Period: client.Duration(10 * time.Second)},
	}
	var narrow, wide bytes.Buffer
	writeChecksTable(&narrow, checks, now, false)
	writeChecksTable(&wide, checks, now, true)
	wantNarrow := "NAME  LEVEL  KIND       STATUS   FOR   RUNS  LAST\n" +
		"db    ready  postgres   warn     1m0s  6     failed: " + long[:lastWidth-len("failed: ")-1] + "…\n" +
		"loop  live   heartbeat  pending  -     0     -\n"
	wantWide := "NAME  LEVEL  KIND       STATUS   FOR   RUNS  PASSED  FAILED  PERIOD  TIMEOUT  LAST RUN  TOOK  LAST\n" +
		"db    ready  postgres   warn     1m0s  6     0/1     2/3     10s     1s       3s        12ms  failed: " + long + "\n" +
		"loop  live   heartbeat  pending  -     0     0/1     0/1     10s     -        -         -     -\n"
	if narrow.String() != wantNarrow {
		t.Errorf("table:\n%s\nwant:\n%s", narrow.String(), wantNarrow)
	}
	if wide.String() != wantWide {
		t.Errorf("wide:\n%s\nwant:\n%s", wide.String(), wantWide)
	}
}

// The hooks' table says how each hook's deliveries go; wide adds the last
// event delivered and when the last error came, and does not cut the error.
func TestTheHooksTableSaysHowDeliveriesGo(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	long := "POST https://hooks.example.com/…: 503 Service Unavailable: " + strings.Repeat("x", 60)
	hooks := []client.Hook{
		{Name: "charm", Kind: "exec", Target: "notify-charm", On: []health.EventType{health.EventCheckFailed, health.EventNotice},
			Delivered: 7, LastDeliveredID: 41},
		{Name: "chat", Kind: "webhook", Target: "https://hooks.example.com/services/…", On: []health.EventType{health.EventNotice},
			Delivered: 2, Failed: 1, Missed: 3, LastDeliveredID: 12, LastError: long, LastErrorTime: now.Add(-5 * time.Second), Failing: true},
	}
	var narrow, wide, none bytes.Buffer
	writeHooksTable(&narrow, hooks, now, false)
	writeHooksTable(&wide, hooks, now, true)
	writeHooksTable(&none, nil, now, false)
	wantNarrow := "NAME   KIND     TARGET                                ON                   DELIVERED  FAILED  MISSED  STATE    LAST ERROR\n" +
		"charm  exec     notify-charm                          check-failed,notice  7          0       0       ok       -\n" +
		"chat   webhook  https://hooks.example.com/services/…  notice               2          1       3       failing  " + cut(long, lastWidth) + "\n"
	wantWide := "NAME   KIND     TARGET                                ON                   DELIVERED  FAILED  MISSED  STATE    LAST ID  ERROR AGE  LAST ERROR\n" +
		"charm  exec     notify-charm                          check-failed,notice  7          0       0       ok       41       -          -\n" +
		"chat   webhook  https://hooks.example.com/services/…  notice               2          1       3       failing  12       5s         " + long + "\n"
	if narrow.String() != wantNarrow {
		t.Errorf("table:\n%s\nwant:\n%s", narrow.String(), wantNarrow)
	}
	if wide.String() != wantWide {
		t.Errorf("wide:\n%s\nwant:\n%s", wide.String(), wantWide)
	}
	if none.String() != "no hooks: the agent's file has none\n" {
		t.Errorf("no hooks: %q", none.String())
	}
}

// A check whose runs pass, waiting to be stable, says how long it has
// left, as /readyz?verbose does: in the table, in vitals check NAME and in
// why it does not pass.
func TestACheckWaitingToBeStableSaysWhen(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	mq := client.Check{Name: "mq", Level: health.Ready, Kind: "amqp", Status: health.Pending, Runs: 2, Successes: 2,
		SuccessThreshold: 1, FailureThreshold: 3, StableFor: client.Duration(30 * time.Second), StableAt: now.Add(12 * time.Second),
		Period: client.Duration(10 * time.Second), Timeout: client.Duration(time.Second),
		Last: &client.Result{Time: now.Add(-8 * time.Second), Duration: client.Duration(time.Millisecond), OK: true}}
	var table, one bytes.Buffer
	writeChecksTable(&table, []client.Check{mq}, now, false)
	if want := "NAME  LEVEL  KIND  STATUS                   FOR  RUNS  LAST\n" +
		"mq    ready  amqp  pending (stable in 12s)  -    2     ok\n"; table.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", table.String(), want)
	}
	writeCheck(&one, mq, nil, now)
	if want := "stable for:    30s (its runs pass: stable in 12s, at 2026-01-01T00:01:12Z)\n"; !strings.Contains(one.String(), want) {
		t.Errorf("vitals check:\n%s\nwant a line\n%s", one.String(), want)
	}
	if got, want := whyNotPassing(mq, now), "pending: pass, stable in 12s"; got != want {
		t.Errorf("why not passing: %q, want %q", got, want)
	}
	mq.StableAt = time.Time{}
	mq.Status = health.Pass
	one.Reset()
	writeCheck(&one, mq, nil, now)
	if want := "stable for:    30s\n"; !strings.Contains(one.String(), want) {
		t.Errorf("vitals check of a stable check:\n%s\nwant a line\n%s", one.String(), want)
	}
}

// sameDocument fails unless j (JSON) and y (YAML) hold the same document.
func sameDocument(t *testing.T, j, y []byte) {
	t.Helper()
	if !reflect.DeepEqual(vitalstest.Document(t, j, false), vitalstest.Document(t, y, true)) {
		t.Errorf("JSON and YAML differ:\n%s\n%s", j, y)
	}
}
