package promcheck

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vitals-dev/vitals/probe"
)

// Expr is one condition of a metric check, parsed: comparisons of values
// read from an exposition, joined by and and or. Parse makes one; its
// grammar, in the reference's words:
//
//	condition  = term { "or" term }
//	term       = factor { "and" factor }
//	factor     = "(" condition ")" | "absent(" selector ")" | value comparison
//	value      = [ aggregation "(" ] series [ ")" ]            aggregation: max min sum avg count
//	series     = selector | "increase(" selector "[" duration "])" | "rate(" selector "[" duration "])" | "age(" selector ")"
//	selector   = name [ "{" matchers "}" ] | "{" matchers "}"  matchers: label = != =~ !~ "value", comma-separated
//	comparison = ( "<" | "<=" | ">" | ">=" | "==" | "!=" ) ( number | duration )
//
// and binds tighter than or, as in PromQL.
type Expr struct {
	text string
	root node
	// ranges are the range selectors of the expression (increase, rate), whose
	// series the check keeps the history of.
	ranges []*valueExpr
}

// String is the expression as written.
func (e *Expr) String() string { return e.text }

// Window is the shortest window of the expression's increase and rate, 0
// when it has none: such an expression decides from its second scrape
// within that window on, and not at all from one scrape.
func (e *Expr) Window() time.Duration {
	var w time.Duration
	for _, v := range e.ranges {
		if w == 0 || v.rng < w {
			w = v.rng
		}
	}
	return w
}

// ShortestWindow is the shortest window of the conditions' increase and
// rate, 0 when they have none; a condition that does not parse has none
// (Parse says what is wrong with it).
func ShortestWindow(exprs []string) time.Duration {
	var w time.Duration
	for _, text := range exprs {
		if e, err := Parse(text); err == nil {
			if ew := e.Window(); ew > 0 && (w == 0 || ew < w) {
				w = ew
			}
		}
	}
	return w
}

// node is a condition of an expression: a *binary, a *compare or an
// *absent.
type node interface{ isNode() }

// binary is a and b, or a or b.
type binary struct {
	and         bool
	left, right node
}

// group is a condition written in parentheses: kept, so that the output
// writes them where the expression did.
type group struct{ inner node }

// compare is a value and what it must meet.
type compare struct {
	value *valueExpr
	want  probe.Comparison
}

// absent holds when its selector matches no series.
type absent struct {
	sel  *selector
	text string
}

func (*binary) isNode()  {}
func (*group) isNode()   {}
func (*compare) isNode() {}
func (*absent) isNode()  {}

// valueExpr is a value of a condition: the values of the series a selector
// matches, through a function, aggregated or not.
type valueExpr struct {
	agg  string        // max, min, sum, avg, count; "" for none: every series must hold
	fn   string        // increase, rate, age; "" for the series' own values
	rng  time.Duration // increase's and rate's window
	sel  *selector
	text string // as written
	// rngText is the window as written, for the output.
	rngText string
}

// selector picks series by name and labels, as PromQL does.
type selector struct {
	name     string // "" when the matchers pick the name (__name__), or any
	matchers []matcher
	text     string // as written
}

// matcher is one label matcher: label = "value", !=, =~ or !~.
type matcher struct {
	label string
	op    string // =, !=, =~, !~
	value string
	re    *regexp.Regexp // =~ and !~: anchored, as PromQL's
}

// matches reports whether a label's value (empty for a series without the
// label) meets the matcher.
func (m matcher) matches(v string) bool {
	switch m.op {
	case "=":
		return v == m.value
	case "!=":
		return v != m.value
	case "=~":
		return m.re.MatchString(v)
	}
	return !m.re.MatchString(v)
}

// aggregations and functions are the calls a value may make.
var (
	aggregations = []string{"max", "min", "sum", "avg", "count"}
	functions    = []string{"increase", "rate", "age"}
)

// SyntaxError is what is wrong with an expression, and where.
type SyntaxError struct {
	// Offset is where in the expression, in bytes from 0: for whoever
	// places the error in a file.
	Offset int
	// Column is where in the expression, in characters from 1, as an
	// editor counts them.
	Column int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("column %d: %s", e.Column, e.Msg) }

// syntaxError is the *SyntaxError of msg at offset of text.
func syntaxError(text string, offset int, msg string) *SyntaxError {
	offset = min(max(offset, 0), len(text))
	return &SyntaxError{Offset: offset, Column: utf8.RuneCountInString(text[:offset]) + 1, Msg: msg}
}

// Parse reads a condition. Its error is a *SyntaxError, at the offset of
// what is wrong.
func Parse(text string) (*Expr, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &exprParser{text: text, toks: toks}
	if len(toks) == 1 { // EOF only
		return nil, syntaxError(text, 0, "no condition: write one, such as max(workqueue_depth) < 100")
	}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errorf(t, "%s after the condition: join conditions with and or or", t.describe())
	}
	e := &Expr{text: text, root: root}
	collectRanges(root, &e.ranges)
	return e, nil
}

func collectRanges(n node, out *[]*valueExpr) {
	switch n := n.(type) {
	case *binary:
		collectRanges(n.left, out)
		collectRanges(n.right, out)
	case *group:
		collectRanges(n.inner, out)
	case *compare:
		if n.value.rng > 0 {
			*out = append(*out, n.value)
		}
	}
}

// Token kinds.
const (
	tEOF = iota
	tIdent
	tString
	tNumber // a number or a duration, told apart where it is read
	tOp     // a comparison: < <= > >= == !=
	tMatch  // a label matcher: = != =~ !~ (!= is read as tOp and taken as either)
	tPunct  // ( ) { } [ ] , + -
)

type token struct {
	kind  int
	text  string // as written
	value string // a string's value, unquoted
	pos   int
}

func (t token) describe() string {
	if t.kind == tEOF {
		return "the end"
	}
	return strconv.Quote(t.text)
}

func (t token) is(kind int, text string) bool { return t.kind == kind && t.text == text }

// lex splits an expression into tokens.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: s[i:j], pos: i})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) {
				d := s[j]
				if d >= '0' && d <= '9' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d == '.' || d == '_' {
					j++
					continue
				}
				// An exponent's sign: 1e-3, not 1e - 3.
				if (d == '+' || d == '-') && (s[j-1] == 'e' || s[j-1] == 'E') && !strings.HasPrefix(strings.ToLower(s[i:j]), "0x") {
					j++
					continue
				}
				break
			}
			toks = append(toks, token{kind: tNumber, text: s[i:j], pos: i})
			i = j
		case c == '"' || c == '\'' || c == '`':
			j, value, err := lexString(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: s[i:j], value: value, pos: i})
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch {
			case two == "<=" || two == ">=" || two == "==" || two == "!=":
				toks = append(toks, token{kind: tOp, text: two, pos: i})
				i += 2
			case two == "=~" || two == "!~":
				toks = append(toks, token{kind: tMatch, text: two, pos: i})
				i += 2
			case c == '<' || c == '>':
				toks = append(toks, token{kind: tOp, text: string(c), pos: i})
				i++
			case c == '=':
				toks = append(toks, token{kind: tMatch, text: "=", pos: i})
				i++
			case strings.IndexByte("(){}[],+-", c) >= 0:
				toks = append(toks, token{kind: tPunct, text: string(c), pos: i})
				i++
			case c == '!':
				return nil, syntaxError(s, i, `"!" alone: write != or !~ (a condition is not negated: write the opposite comparison)`)
			default:
				r := []rune(s[i:])[0]
				return nil, syntaxError(s, i, fmt.Sprintf("%q has no place in a condition", r))
			}
		}
	}
	return append(toks, token{kind: tEOF, pos: len(s)}), nil
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
}
func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// lexString reads the string that starts at s[i]: "…" and '…' with Go's
// escapes, `…` raw, as PromQL writes them. It returns where the string ends
// and its value.
func lexString(s string, i int) (int, string, error) {
	q := s[i]
	j := i + 1
	for j < len(s) && s[j] != q {
		if s[j] == '\\' && q != '`' {
			j++
		}
		j++
	}
	if j >= len(s) {
		return 0, "", syntaxError(s, i, fmt.Sprintf("a string that starts here has no closing %c", q))
	}
	raw := s[i : j+1]
	var value string
	var err error
	switch q {
	case '`':
		value = raw[1 : len(raw)-1]
	case '"':
		value, err = strconv.Unquote(raw)
	default: // '…': Go's escapes, with \' for a quote and " as itself
		var b strings.Builder
		inner := raw[1 : len(raw)-1]
		for k := 0; k < len(inner); k++ {
			switch {
			case inner[k] == '\\' && k+1 < len(inner) && inner[k+1] == '\'':
				b.WriteByte('\'')
				k++
			case inner[k] == '\\' && k+1 < len(inner):
				b.WriteString(inner[k : k+2])
				k++
			case inner[k] == '"':
				b.WriteString(`\"`)
			default:
				b.WriteByte(inner[k])
			}
		}
		value, err = strconv.Unquote(`"` + b.String() + `"`)
	}
	if err != nil {
		return 0, "", syntaxError(s, i, fmt.Sprintf("the string %s has a bad escape (\\n, \\t, \\\\, \\%c and \\xHH are escapes)", raw, q))
	}
	return j + 1, value, nil
}

type exprParser struct {
	text string
	toks []token
	i    int
}

func (p *exprParser) peek() token { return p.toks[p.i] }
func (p *exprParser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}
func (p *exprParser) next() token { t := p.toks[p.i]; p.i = min(p.i+1, len(p.toks)-1); return t }

func (p *exprParser) errorf(t token, format string, args ...any) error {
	return syntaxError(p.text, t.pos, fmt.Sprintf(format, args...))
}

// expect reads the punctuation want, or says what came instead and why it
// was wanted.
func (p *exprParser) expect(want, why string) (token, error) {
	t := p.peek()
	if !t.is(tPunct, want) {
		return t, p.errorf(t, "want %q %s, got %s", want, why, t.describe())
	}
	return p.next(), nil
}

// keyword reports whether t is the word w, as and and or are written.
func keyword(t token, w string) bool { return t.kind == tIdent && t.text == w }

func (p *exprParser) or() (node, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for keyword(p.peek(), "or") {
		p.next()
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		left = &binary{left: left, right: right}
	}
	return left, nil
}

func (p *exprParser) and() (node, error) {
	left, err := p.factor()
	if err != nil {
		return nil, err
	}
	for keyword(p.peek(), "and") {
		p.next()
		right, err := p.factor()
		if err != nil {
			return nil, err
		}
		left = &binary{and: true, left: left, right: right}
	}
	return left, nil
}

func (p *exprParser) factor() (node, error) {
	t := p.peek()
	switch {
	case t.is(tPunct, "("):
		p.next()
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(")", "to close the parenthesis"); err != nil {
			return nil, err
		}
		return &group{inner: inner}, nil
	case keyword(t, "absent") && p.peekAt(1).is(tPunct, "("):
		p.next()
		p.next()
		sel, err := p.selector()
		if err != nil {
			return nil, err
		}
		end, err := p.expect(")", "to close absent(")
		if err != nil {
			return nil, err
		}
		return &absent{sel: sel, text: p.text[t.pos : end.pos+1]}, nil
	case t.kind == tEOF:
		return nil, p.errorf(t, "a condition is missing at the end: and and or join two")
	case keyword(t, "and") || keyword(t, "or"):
		return nil, p.errorf(t, "%q with no condition before it", t.text)
	case keyword(t, "not") && p.peekAt(1).kind != tOp && p.peekAt(1).kind != tEOF:
		return nil, p.errorf(t, "a condition is not negated: write the opposite comparison (x <= 1 for not x > 1), or absent(…) for no series")
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	if op.is(tMatch, "=") {
		return nil, p.errorf(op, `"=" is not a comparison: == is (= matches a label, in braces)`)
	}
	if op.kind != tOp {
		if v.agg == "" && v.fn == "" {
			return nil, p.errorf(op, "%s alone is not a condition: compare it (%s > 0), or say absent(%s)", v.text, v.text, v.text)
		}
		return nil, p.errorf(op, "want a comparison after %s (<, <=, >, >=, == or != and a number or a duration), got %s", v.text, op.describe())
	}
	p.next()
	bound := p.peek()
	want, err := p.bound(op)
	if err != nil {
		return nil, err
	}
	switch unit := nameUnit(v.sel.name); {
	case !want.Duration || v.agg == "count" || v.fn == "age":
	case v.fn == "rate":
		return nil, p.errorf(bound, "a rate is per second: compare it with a number, not a duration")
	case unit == "ms" || unit == "us" || unit == "ns":
		// A duration compares in seconds: 300ms would be 0.3 of them.
		return nil, p.errorf(bound, "%s is in %s, and a duration compares in seconds: compare it with a number of %s", v.sel.name, unit, unit)
	}
	return &compare{value: v, want: want}, nil
}

// bound reads what a comparison compares with: a number (with a sign, or
// NaN or Inf) or a duration.
func (p *exprParser) bound(op token) (probe.Comparison, error) {
	t := p.next()
	text, start := t.text, t.pos
	if t.is(tPunct, "-") || t.is(tPunct, "+") {
		n := p.next()
		if n.pos != t.pos+1 || n.kind != tNumber && n.kind != tIdent {
			return probe.Comparison{}, p.errorf(n, "want a number after %q, got %s", t.text, n.describe())
		}
		text, t = t.text+n.text, n
	}
	switch t.kind {
	case tNumber, tIdent:
	default:
		return probe.Comparison{}, p.errorf(t, "want a number or a duration after %s, such as %s 100 or %s 5m; got %s", op.text, op.text, op.text, t.describe())
	}
	if t.kind == tIdent && !isInfOrNaN(t.text) {
		return probe.Comparison{}, p.errorf(t, "%q: a comparison is with a number or a duration, such as %s 100 or %s 5m, not with another value", t.text, op.text, op.text)
	}
	c, err := probe.NewComparison(op.text, text)
	if err != nil {
		return probe.Comparison{}, syntaxError(p.text, start, err.Error())
	}
	return c, nil
}

func isInfOrNaN(s string) bool {
	s = strings.ToLower(s)
	return s == "inf" || s == "nan"
}

// value reads a value: a series, or an aggregation of one.
func (p *exprParser) value() (*valueExpr, error) {
	t := p.peek()
	if t.kind == tIdent && slices.Contains(aggregations, t.text) && p.peekAt(1).is(tPunct, "(") {
		p.next()
		p.next()
		v, err := p.series()
		if err != nil {
			return nil, err
		}
		end := p.peek()
		if keyword(end, "by") || keyword(end, "without") {
			return nil, p.errorf(end, "%s(… %s …): grouping is not done here; without an aggregation every series must hold on its own", t.text, end.text)
		}
		if end, err = p.expect(")", "to close "+t.text+"("); err != nil {
			return nil, err
		}
		v.agg = t.text
		v.text = p.text[t.pos : end.pos+1]
		return v, nil
	}
	if t.kind == tIdent && (slices.Contains(aggregations, t.text)) {
		if n := p.peekAt(1); keyword(n, "by") || keyword(n, "without") {
			return nil, p.errorf(n, "%s %s (…): grouping is not done here; without an aggregation every series must hold on its own", t.text, n.text)
		}
	}
	return p.series()
}

// series reads a selector, or a function of one.
func (p *exprParser) series() (*valueExpr, error) {
	t := p.peek()
	if t.kind == tIdent && p.peekAt(1).is(tPunct, "(") {
		switch {
		case t.text == "increase" || t.text == "rate":
			p.next()
			p.next()
			sel, err := p.selector()
			if err != nil {
				return nil, err
			}
			open, err := p.expect("[", "and a window after the selector, as "+t.text+"("+sel.text+"[5m])")
			if err != nil {
				return nil, err
			}
			d := p.next()
			rng, err := probe.ParseDuration(d.text)
			switch {
			case d.kind != tNumber:
				return nil, p.errorf(d, "want a window after %q, a duration such as 5m, got %s", open.text, d.describe())
			case err != nil:
				return nil, p.errorf(d, "the window: %v", err)
			case rng <= 0:
				return nil, p.errorf(d, "the window is 0s: give %s a window of more than 0, such as 5m", t.text)
			}
			if _, err := p.expect("]", "to close the window"); err != nil {
				return nil, err
			}
			end, err := p.expect(")", "to close "+t.text+"(")
			if err != nil {
				return nil, err
			}
			return &valueExpr{fn: t.text, rng: rng, rngText: d.text, sel: sel, text: p.text[t.pos : end.pos+1]}, nil
		case t.text == "age":
			p.next()
			p.next()
			sel, err := p.selector()
			if err != nil {
				return nil, err
			}
			if b := p.peek(); b.is(tPunct, "[") {
				return nil, p.errorf(b, "age( ) takes no window: it is now minus each series' value, a Unix time in seconds")
			}
			end, err := p.expect(")", "to close age(")
			if err != nil {
				return nil, err
			}
			return &valueExpr{fn: "age", sel: sel, text: p.text[t.pos : end.pos+1]}, nil
		case t.text == "absent":
			return nil, p.errorf(t, "absent( ) is a condition of its own: it holds when nothing matches, and is not compared")
		case slices.Contains(aggregations, t.text):
			return nil, p.errorf(t, "%s( ) inside an aggregation: aggregate once, over series or a function of them", t.text)
		default:
			return nil, p.errorf(t, "%s( ) is not a function of a condition: want max, min, sum, avg or count (aggregations), increase, rate or age (functions of a series), or absent", t.text)
		}
	}
	sel, err := p.selector()
	if err != nil {
		return nil, err
	}
	if b := p.peek(); b.is(tPunct, "[") {
		return nil, p.errorf(b, "a window goes in increase( ) or rate( ), as increase(%s[5m]): a series is compared by its value now", sel.text)
	}
	return &valueExpr{sel: sel, text: sel.text}, nil
}

// selector reads a PromQL selector: a name, label matchers in braces, or
// both.
func (p *exprParser) selector() (*selector, error) {
	start := p.peek()
	s := &selector{}
	t := p.peek()
	switch {
	case t.kind == tIdent && (t.text == "and" || t.text == "or"):
		return nil, p.errorf(t, "%q is not a metric name: it joins conditions (a metric named so is {__name__=%q})", t.text, t.text)
	case t.kind == tIdent:
		s.name = t.text
		p.next()
	case t.is(tPunct, "{"):
	default:
		return nil, p.errorf(t, "want a metric's name or a selector in braces, such as workqueue_depth{controller=\"app\"}, got %s", t.describe())
	}
	end := start // the selector's last token
	if p.peek().is(tPunct, "{") {
		var err error
		if end, err = p.matchers(s); err != nil {
			return nil, err
		}
	}
	s.text = p.text[start.pos : end.pos+len(end.text)]
	if s.name == "" && !slices.ContainsFunc(s.matchers, func(m matcher) bool { return !m.matches("") }) {
		return nil, p.errorf(start, "%s selects every series: give a metric's name, or a matcher that an empty value does not meet, as PromQL asks", s.text)
	}
	return s, nil
}

// matchers reads {label="value", …} into s, and returns the closing brace.
func (p *exprParser) matchers(s *selector) (token, error) {
	open := p.next()
	for {
		t := p.next()
		switch {
		case t.is(tPunct, "}"):
			return t, nil
		case t.kind == tString && (p.peek().is(tPunct, ",") || p.peek().is(tPunct, "}")):
			// A quoted name on its own: {"http.requests", code="500"}.
			if s.name != "" {
				return t, p.errorf(t, "a second metric name %s: the selector has %q", t.text, s.name)
			}
			s.name = t.value
		case t.kind == tIdent || t.kind == tString:
			label := t.text
			if t.kind == tString {
				label = t.value
			}
			op := p.next()
			if op.kind != tMatch && !op.is(tOp, "!=") {
				return t, p.errorf(op, "want =, !=, =~ or !~ after the label %s, got %s", t.text, op.describe())
			}
			v := p.next()
			if v.kind != tString {
				return t, p.errorf(v, "want a value in quotes after %s%s, as %s%s\"value\", got %s", t.text, op.text, t.text, op.text, v.describe())
			}
			m := matcher{label: label, op: op.text, value: canonical(label, v.value)}
			if op.text == "=~" || op.text == "!~" {
				re, err := regexp.Compile("^(?:" + v.value + ")$")
				if err != nil {
					if _, plain := regexp.Compile(v.value); plain != nil {
						err = plain
					}
					return t, p.errorf(v, "the regular expression %s: %v", v.text, err)
				}
				m.re = re
			}
			if label == "__name__" && op.text == "=" {
				if s.name != "" && s.name != v.value {
					return t, p.errorf(t, "__name__=%s and the name %q: a series has one name", v.text, s.name)
				}
			}
			s.matchers = append(s.matchers, m)
		case t.kind == tEOF:
			return t, p.errorf(open, "the brace that opens here is never closed")
		default:
			return t, p.errorf(t, "want a label's name in the braces, got %s", t.describe())
		}
		switch sep := p.peek(); {
		case sep.is(tPunct, ","):
			p.next()
		case sep.is(tPunct, "}"):
		case sep.kind == tEOF:
			return sep, p.errorf(open, "the brace that opens here is never closed")
		default:
			return sep, p.errorf(sep, "want , or } after a label matcher, got %s", sep.describe())
		}
	}
}
