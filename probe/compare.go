package probe

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Comparison is a condition on a number: an operator and a bound, written
// "< 100", ">= 0.5", "!= 0", or with a duration for the bound, "< 5m",
// compared in seconds. vitals compares numbers in this one syntax wherever
// it does: a metric check's conditions, an http check's JSON values, an
// exec command's output.
//
// The operators are <, <=, >, >=, == and !=. A bound is a number (42, -1.5,
// 1e3, 0x1f, NaN, Inf, +Inf, -Inf) or a duration as PromQL writes one (see
// ParseDuration). A NaN compares as IEEE 754 (and PromQL) says: no
// condition holds of it but !=.
type Comparison struct {
	// Op is the operator: <, <=, >, >=, == or !=.
	Op string
	// Bound is the number compared with, in seconds for a duration.
	Bound float64
	// Duration says that the bound was written as a duration.
	Duration bool

	bound string // as written, for String
}

// operators are the comparison operators, longest first, so that a scan
// for one finds <= before <.
var operators = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseComparison reads a whole comparison: an operator, then a bound, with
// or without spaces between them ("<100", "< 100", "  >= 5m ").
func ParseComparison(s string) (Comparison, error) {
	t := strings.TrimSpace(s)
	op := ComparisonOp(t)
	if op == "" {
		return Comparison{}, fmt.Errorf("comparison %q: want an operator (<, <=, >, >=, == or !=) and a number or a duration, such as < 100 or <= 5m", s)
	}
	c, err := NewComparison(op, strings.TrimSpace(t[len(op):]))
	if err != nil {
		return Comparison{}, fmt.Errorf("comparison %q: %w", s, err)
	}
	return c, nil
}

// ComparisonOp is the comparison operator s starts with, "" when it starts
// with none: whoever reads a value that may be a comparison or something
// else (a json: pattern) tells them apart with it.
func ComparisonOp(s string) string {
	for _, op := range operators {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

// NewComparison makes the comparison of an operator and a bound as written:
// a number, or a duration.
func NewComparison(op, bound string) (Comparison, error) {
	if !isOperator(op) {
		return Comparison{}, fmt.Errorf("%q is not a comparison operator (want <, <=, >, >=, == or !=)", op)
	}
	if bound == "" {
		return Comparison{}, fmt.Errorf("%s with nothing to compare with: want a number or a duration, such as %s 100 or %s 5m", op, op, op)
	}
	if strings.ContainsAny(bound, " \t") {
		return Comparison{}, fmt.Errorf("%q: a number or a duration has no space in it", bound)
	}
	if v, err := ParseNumber(bound); err == nil {
		return Comparison{Op: op, Bound: v, bound: bound}, nil
	}
	if d, err := ParseDuration(bound); err == nil {
		return Comparison{Op: op, Bound: d.Seconds(), Duration: true, bound: bound}, nil
	} else if durationLike(bound) {
		return Comparison{}, err
	}
	return Comparison{}, fmt.Errorf("%q is neither a number nor a duration (such as 100, 0.5, 1e3 or 5m)", bound)
}

func isOperator(op string) bool {
	for _, o := range operators {
		if op == o {
			return true
		}
	}
	return false
}

// Holds reports whether v meets the comparison.
func (c Comparison) Holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Bound
	case "<=":
		return v <= c.Bound
	case ">":
		return v > c.Bound
	case ">=":
		return v >= c.Bound
	case "==":
		return v == c.Bound
	case "!=":
		return v != c.Bound
	}
	return false
}

// String is the comparison as written, "< 5m", with one space after the
// operator.
func (c Comparison) String() string {
	bound := c.bound
	if bound == "" {
		bound = FormatNumber(c.Bound)
	}
	return c.Op + " " + bound
}

// ParseNumber reads a number as PromQL writes one: a decimal (42, -1.5,
// .5, 1e3), a hexadecimal integer (0x1f), NaN or Inf with an optional
// sign, in any case (nan, +inf). Go's own forms that PromQL lacks (1_000,
// hexadecimal floats) are refused.
func ParseNumber(s string) (float64, error) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	neg := strings.HasPrefix(s, "-")
	switch strings.ToLower(body) {
	case "nan":
		return math.NaN(), nil
	case "inf":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		n, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		v := float64(n)
		if neg {
			v = -v
		}
		return v, nil
	}
	if !decimal(body) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range is ±Inf or 0, as PromQL has it
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// decimal reports whether s is digits with at most one point, and an
// optional exponent: 42, 4.2, .42, 42., 4.2e-1.
func decimal(s string) bool {
	mantissa, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	digits := 0
	point := false
	for _, c := range mantissa {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point:
			point = true
		default:
			return false
		}
	}
	if digits == 0 {
		return false
	}
	if !hasExp {
		return true
	}
	exp = strings.TrimPrefix(strings.TrimPrefix(exp, "+"), "-")
	return exp != "" && strings.Trim(exp, "0123456789") == ""
}

// durationUnits are the units of a duration as PromQL writes one, largest
// first, the order in which a duration must give them.
var durationUnits = []struct {
	name string
	d    time.Duration
}{
	{"y", 365 * 24 * time.Hour}, {"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour},
	{"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond},
}

// ParseDuration reads a duration as PromQL (and Prometheus's
// configuration) writes one: whole numbers, each with a unit, largest unit
// first, each at most once: 5m, 1h30m, 14d, 300ms, 1w2d. The units are ms,
// s, m, h, d (24h), w (7d) and y (365d). Go's fractions (1.5s) and smaller
// units (µs) are refused, as PromQL refuses them: write 1500ms. 0s is a
// duration; a negative one is not.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("an empty duration")
	}
	var total time.Duration
	rest := s
	last := -1 // the index in durationUnits of the last unit read
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%q is not a duration such as 5m, 1h30m or 300ms", s)
		}
		if i < len(rest) && rest[i] == '.' {
			return 0, fmt.Errorf("%q: a duration is in whole numbers of its units: write 1500ms, not 1.5s", s)
		}
		n, err := strconv.ParseInt(rest[:i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is too long a duration", s)
		}
		rest = rest[i:]
		j := 0
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		k := -1
		for idx, u := range durationUnits {
			if u.name == unit {
				k = idx
			}
		}
		switch {
		case unit == "":
			return 0, fmt.Errorf("%q has no unit: write %ss (or ms, m, h, d, w, y)", s, s)
		case k < 0:
			return 0, fmt.Errorf("%q: %q is not a unit of a duration (want ms, s, m, h, d, w or y, as in 1h30m)", s, unit)
		case k <= last:
			return 0, fmt.Errorf("%q: the units of a duration go from the largest to the smallest, each once, as in 1h30m", s)
		}
		last = k
		if n > int64(math.MaxInt64/durationUnits[k].d) || total > math.MaxInt64-time.Duration(n)*durationUnits[k].d {
			return 0, fmt.Errorf("%q is too long a duration", s)
		}
		total += time.Duration(n) * durationUnits[k].d
	}
	return total, nil
}

// durationLike reports whether s looks like a duration rather than a
// number, so that its error is the duration's: it starts with a digit and
// has a letter that no number has.
func durationLike(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' || strings.HasPrefix(strings.ToLower(s), "0x") {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return r >= 'a' && r <= 'z' && r != 'e' && r != 'x' || r >= 'A' && r <= 'Z' && r != 'E' && r != 'X'
	}) >= 0
}

// FormatNumber writes a number as outputs say it: a whole number with no
// point (312, 1048576), any other with up to ten significant digits and no
// trailing zeros (312.4, 0.3, 1.5e-09), NaN, +Inf and -Inf as Prometheus
// writes them.
func FormatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}

// ObservedNumber is a number as a result's observed value: NaN and the
// infinities, which JSON cannot carry as numbers, as the strings that
// FormatNumber (and Prometheus) writes them with.
func ObservedNumber(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return FormatNumber(v)
	}
	return v
}
