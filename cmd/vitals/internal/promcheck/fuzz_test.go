package promcheck

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Whatever a file or a command line gives as a condition, Parse answers
// with an expression that reads back as written, or a *SyntaxError whose
// column is within it (at most one past its end) — it never panics. What
// parses is judged against an exposition without panicking either.
//
//	go test -fuzz FuzzParse -fuzztime 10m ./cmd/vitals/internal/promcheck/
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`max(workqueue_longest_running_processor_seconds{controller="kafkacluster"}) < 5m`,
		"increase(controller_runtime_reconcile_total[2m]) > 0 or sum(workqueue_depth) == 0",
		`rate(x{a=~"b|c",d!~'e'}[1h30m]) >= 1e-3 and (age(y) < 14d or absent(z))`,
		`{"utf8.name", "label.x"="v"} != NaN`, "count(x) == 0", "x > -Inf", "x > 0x1f", "",
		"x{", `x{a="`, "x[", "max(", "((x > 1)", "x > 1 and", "x >= 5m30", `x{a=~"("} > 1`, "\x00", "\xff > 1",
	} {
		f.Add(seed)
	}
	x, err := newParser().parse([]byte(controllerManager), false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		e, err := Parse(text)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %v, not a *SyntaxError", text, err)
			}
			if se.Offset < 0 || se.Offset > len(text) || se.Msg == "" {
				t.Fatalf("Parse(%q): %v, at an offset outside it or saying nothing", text, err)
			}
			return
		}
		if e.String() != text {
			t.Fatalf("Parse(%q).String() = %q", text, e.String())
		}
		st := newState([]*Expr{e})
		now := time.Unix(1_700_000_000, 0)
		for i := range 2 {
			now = now.Add(time.Duration(i) * time.Second)
			if err := st.observe(x, now); err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			v := (&eval{x: x, now: now, st: st}).node(e.root)
			if v.text == "" || !utf8.ValidString(v.text) && utf8.ValidString(text) {
				t.Fatalf("%q: the verdict says %q", text, v.text)
			}
		}
	})
}

// Whatever a metrics endpoint answers — a page, a huge label, a body of
// nothing but samples, OpenMetrics or not — parsing it returns families or
// an error that says what is wrong, and never panics; an answer past
// MaxSamples is refused before the text parser makes a value of any.
//
//	go test -fuzz FuzzExposition -fuzztime 10m ./cmd/vitals/internal/promcheck/
func FuzzExposition(f *testing.F) {
	for _, seed := range []string{
		controllerManager, openMetrics, "", "\n", "# EOF\n", "x 1\n", "x{a=\"b\"} 1 1700000000000\n",
		"x{a=\"" + strings.Repeat("v", 1<<12) + "\"} 1\n", "# TYPE x histogram\nx_bucket{le=\"1\"} 1\nx_count 1\n",
		"# TYPE x summary\nx{quantile=\"0.5\"} 1\n", "{\"a.b\"} 1\n", "x{a=\"b\",a=\"c\"} 1\n", "x NaN\nx +Inf\n",
		"x 1 # {t=\"1\"} 2 3\n# EOF\n", "x{a=\"\\\"}\"} 1 # {} 1\n# EOF\n", "<html>\n", "\xff\xfe\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	e, err := Parse(`count({__name__=~".+"}) >= 0 and absent(nope) and sum(increase({__name__=~"x.*"}[1m])) >= 0`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, om bool) {
		p := newParser()
		x, err := p.parse(body, om)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("an empty error for %q", body)
			}
			return
		}
		st := newState([]*Expr{e})
		now := time.Unix(1_700_000_000, 0)
		if err := st.observe(x, now); err != nil {
			return // too many series for a window: said
		}
		if v := (&eval{x: x, now: now, st: st}).node(e.root); v.text == "" {
			t.Fatalf("no verdict for %q", body)
		}
	})
}
