package promcheck

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Every malformed condition is refused with the column of what is wrong in
// it, and says what.
func TestMalformedConditionsSayTheirColumn(t *testing.T) {
	for _, tt := range []struct {
		expr string
		col  int
		msg  string
	}{
		{"", 1, "no condition"},
		{"   ", 1, "no condition"},
		{"workqueue_depth", 16, "workqueue_depth alone is not a condition"},
		{"max(workqueue_depth)", 21, "want a comparison after max(workqueue_depth)"},
		{"max(workqueue_depth", 20, `want ")" to close max(`},
		{"x >", 4, "want a number or a duration after >"},
		{"x > y", 5, `"y": a comparison is with a number or a duration`},
		{"x > 1oo", 5, `"oo" is not a unit of a duration`},
		{"x > 5m30", 5, `"5m30" has no unit`},
		{"x > 30s5m", 5, "from the largest to the smallest"},
		{"x > 1.5s", 5, "write 1500ms"},
		{"x > - 1", 7, `want a number after "-"`},
		{"x => 1", 3, `"=" is not a comparison: == is`},
		{"x = 1", 3, `"=" is not a comparison: == is`},
		{"x ! 1", 3, `"!" alone`},
		{"x > 1 y", 7, `"y" after the condition`},
		{"x > 1 and", 10, "a condition is missing at the end"},
		{"and x > 1", 1, `"and" with no condition before it`},
		{"x > 1 or or y > 1", 10, `"or" with no condition before it`},
		{"(x > 1", 7, `want ")" to close the parenthesis`},
		{"x > 1)", 6, `")" after the condition`},
		{`x{a="b" > 1`, 9, "want , or } after a label matcher"},
		{`x{a="b"`, 2, "never closed"},
		{`x{a} > 1`, 4, "want =, !=, =~ or !~ after the label a"},
		{`x{a=b} > 1`, 5, `want a value in quotes after a=`},
		{`x{a="b} > 1`, 5, "no closing"},
		{`x{a=~"("} > 1`, 6, "the regular expression"},
		{`x{a="\q"} > 1`, 5, "bad escape"},
		{`x{=} > 1`, 3, "want a label's name"},
		{`{a=~".*"} > 1`, 1, "selects every series"},
		{`{} > 1`, 1, "selects every series"},
		{`x{"n"} > 1`, 3, "a second metric name"},
		{`{"n", "m"} > 1`, 7, "a second metric name"},
		{`x{__name__="y"} > 1`, 3, "a series has one name"},
		{"x[5m] > 1", 2, "a window goes in increase( ) or rate( )"},
		{"rate(x) > 1", 7, `want "[" and a window`},
		{"rate(x[5]) > 1", 8, `"5" has no unit`},
		{"rate(x[0s]) > 1", 8, "the window is 0s"},
		{"rate(x[y]) > 1", 8, "want a window after"},
		{"increase(x[5m) > 1", 14, `want "]" to close the window`},
		{"increase(x[5m]", 15, `want ")" to close increase(`},
		{"age(x[5m]) > 1", 6, "age( ) takes no window"},
		{"abs(x) > 1", 1, "abs( ) is not a function"},
		{"max(max(x)) > 1", 5, "inside an aggregation"},
		{"max by (a) (x) > 1", 5, "grouping is not done here"},
		{"sum(x without (a)) > 1", 7, "grouping is not done here"},
		{"absent(x) > 1", 11, `">" after the condition`},
		{"max(absent(x)) > 1", 5, "absent( ) is a condition of its own"},
		{"absent(x", 9, `want ")" to close absent(`},
		{"and > 1", 1, `"and" with no condition before it`},
		{"max(and) > 1", 5, `"and" is not a metric name`},
		{"x > 1 ; y > 2", 7, `';' has no place`},
		{"x > 1 é", 7, `'é' has no place`},
		{"x > 0x", 5, "neither a number nor a duration"},
		{"x > 1e", 5, "neither a number nor a duration"},
		{"x > NaNa", 5, `"NaNa": a comparison is with a number`},
		{"not x > 1", 1, "a condition is not negated"},
		{"max(rpc_latency_milliseconds) < 300ms", 33, "rpc_latency_milliseconds is in ms, and a duration compares in seconds"},
		{"increase(busy_milliseconds_total[5m]) < 1m", 41, "busy_milliseconds_total is in ms"},
		{"rate(x_total[5m]) < 1m", 21, "a rate is per second: compare it with a number"},
		{`x{a="é"} > 1oo`, 12, `"oo" is not a unit`}, // columns count characters
		{`x{a='\q'} > 1`, 5, `bad escape (\n, \t, \\, \' and \xHH are escapes)`},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := Parse(tt.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a *SyntaxError", tt.expr, err)
			}
			if se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) || err.Error() != fmt.Sprintf("column %d: %s", se.Column, se.Msg) {
				t.Errorf("Parse(%q): %v\nwant column %d: …%s…", tt.expr, err, tt.col, tt.msg)
			}
		})
	}
}

// What parses, and how it reads back: the conditions as the output writes
// them, the ranges that the check keeps windows for.
func TestConditionsThatParse(t *testing.T) {
	for _, tt := range []struct {
		expr   string
		ranges []string // the selectors of range functions, as written
	}{
		{"x < 1", nil},
		{"x<1", nil},
		{"  max( x )  <=  5m  ", nil},
		{`max(workqueue_longest_running_processor_seconds{controller="kafkacluster"}) < 5m`, nil},
		{`x{a="b", c!="d", e=~"f.*", g!~"h|i",} != 0`, nil},
		{`x{a='b'} == 1`, nil},
		{"x{a=`b\\`} == 1", nil},
		{`x{a='\"', b='it\'s', c="\"q\""} == 1`, nil},
		{`{"http.requests", code="500"} == 0`, nil},
		{`{__name__=~"workqueue_.*"} >= 0`, nil},
		{"x > -1 and y < +Inf or z != NaN", nil},
		{"x > -Inf", nil},
		{"x > 1e3 and x < 0x10 and x < .5 and x < 1.", nil},
		{"(a > 1 or b > 1) and c > 1", nil},
		{"increase(controller_runtime_reconcile_total[2m]) > 0 or sum(workqueue_depth) == 0", []string{"controller_runtime_reconcile_total"}},
		{`sum(rate(x{a="b"}[1h30m])) > 0.5`, []string{`x{a="b"}`}},
		{"count(increase(x[5m])) == 0", []string{"x"}},
		{"age(x_last_success_timestamp_seconds) < 1d", nil},
		{"absent(x)", nil},
		{"absent(x) or x > 1", nil},
		{"max > 1", nil},    // a metric named as an aggregation
		{"rate > 1", nil},   // or as a function
		{"absent > 1", nil}, // or absent
	} {
		e, err := Parse(tt.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		if e.String() != tt.expr {
			t.Errorf("Parse(%q).String() = %q", tt.expr, e.String())
		}
		var ranges []string
		for _, r := range e.ranges {
			ranges = append(ranges, r.sel.text)
		}
		if strings.Join(ranges, "|") != strings.Join(tt.ranges, "|") {
			t.Errorf("Parse(%q): ranges over %q, want %q", tt.expr, ranges, tt.ranges)
		}
	}
}

// and binds tighter than or, as in PromQL: a or b and c is a or (b and c).
func TestAndBindsTighterThanOr(t *testing.T) {
	e, err := Parse("a > 1 or b > 1 and c > 1")
	if err != nil {
		t.Fatal(err)
	}
	top, ok := e.root.(*binary)
	if !ok || top.and {
		t.Fatalf("the top is %#v, want an or", e.root)
	}
	if right, ok := top.right.(*binary); !ok || !right.and {
		t.Fatalf("the or's right is %#v, want an and", top.right)
	}
}
