package probe_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vitals-dev/vitals/probe"
)

// A comparison is an operator and a number or a duration; it holds as the
// operator says, a NaN meeting != only.
func TestComparisons(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tt := range []struct {
		text    string
		written string // String's
		holds   []float64
		fails   []float64
	}{
		{"< 100", "< 100", []float64{99.9, -inf}, []float64{100, 101, inf, nan}},
		{"<=100", "<= 100", []float64{100}, []float64{100.01, nan}},
		{" > 0.5 ", "> 0.5", []float64{0.51, inf}, []float64{0.5, nan}},
		{">= -1", ">= -1", []float64{-1, 0}, []float64{-1.5, nan}},
		{"== 0", "== 0", []float64{0, math.Copysign(0, -1)}, []float64{1e-300, nan}},
		{"!= 0", "!= 0", []float64{1, nan}, []float64{0}},
		{"== NaN", "== NaN", nil, []float64{nan, 0}},
		{"!= NaN", "!= NaN", []float64{nan, 0}, nil},
		{"< +Inf", "< +Inf", []float64{1e308}, []float64{inf, nan}},
		{"> -inf", "> -inf", []float64{-1e308}, []float64{math.Inf(-1)}},
		{"< 5m", "< 5m", []float64{299.9}, []float64{300}},
		{"<= 1h30m", "<= 1h30m", []float64{5400}, []float64{5400.1}},
		{"> 300ms", "> 300ms", []float64{0.31}, []float64{0.3}},
		{">= 14d", ">= 14d", []float64{14 * 86400}, []float64{14*86400 - 1}},
		{"< 1e3", "< 1e3", []float64{999}, []float64{1000}},
		{"< 0x10", "< 0x10", []float64{15}, []float64{16}},
		{"< .5", "< .5", []float64{0.4}, []float64{0.5}},
	} {
		c, err := probe.ParseComparison(tt.text)
		if err != nil {
			t.Errorf("ParseComparison(%q): %v", tt.text, err)
			continue
		}
		if c.String() != tt.written {
			t.Errorf("ParseComparison(%q).String() = %q, want %q", tt.text, c.String(), tt.written)
		}
		for _, v := range tt.holds {
			if !c.Holds(v) {
				t.Errorf("%s does not hold of %v", tt.text, v)
			}
		}
		for _, v := range tt.fails {
			if c.Holds(v) {
				t.Errorf("%s holds of %v", tt.text, v)
			}
		}
	}
}

// What is no comparison says what is wrong with it.
func TestBadComparisons(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"", "want an operator"},
		{"100", "want an operator"},
		{"=< 100", "want an operator"},
		{"<", "< with nothing to compare with"},
		{"< abc", `"abc" is neither a number nor a duration`},
		{"< 1oo", `"oo" is not a unit of a duration`},
		{"< 5", ""},
		{"< 5 m", `"5 m": a number or a duration has no space in it`},
		{"< 1.5s", "write 1500ms, not 1.5s"},
		{"< 30s5m", "from the largest to the smallest"},
		{"< 5m5m", "from the largest to the smallest"},
		{"< 1_000", "neither a number nor a duration"},
		{"< 0x1p-2", "neither a number nor a duration"},
		{"< --1", "neither a number nor a duration"},
		{"< 99999999999999999999y", "too long a duration"},
		{"< 300000000h", "too long a duration"},
	} {
		_, err := probe.ParseComparison(tt.text)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ParseComparison(%q): %v", tt.text, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ParseComparison(%q): %v, want …%s…", tt.text, err, tt.want)
		}
	}
}

// Durations as PromQL writes them.
func TestParseDuration(t *testing.T) {
	for text, want := range map[string]time.Duration{
		"0s": 0, "300ms": 300 * time.Millisecond, "5m": 5 * time.Minute, "1h30m": 90 * time.Minute,
		"1d": 24 * time.Hour, "1w2d": 9 * 24 * time.Hour, "1y": 365 * 24 * time.Hour, "1m30s500ms": 90500 * time.Millisecond,
	} {
		if got, err := probe.ParseDuration(text); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "5", "m", "-5m", "5 m", "1.5s", "5us", "5mm", "1s1m"} {
		if d, err := probe.ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", bad, d)
		}
	}
}

// Numbers as outputs write them.
func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{
		312: "312", 312.4: "312.4", 0.1 + 0.2: "0.3", 1 << 20: "1048576", 5e-05: "5e-05",
		1e14: "100000000000000", 1e20: "1e+20", -2.5: "-2.5", math.Inf(1): "+Inf", math.Inf(-1): "-Inf",
	} {
		if got := probe.FormatNumber(v); got != want {
			t.Errorf("FormatNumber(%v) = %q, want %q", v, got, want)
		}
	}
	if got := probe.FormatNumber(math.NaN()); got != "NaN" {
		t.Errorf("FormatNumber(NaN) = %q", got)
	}
}
