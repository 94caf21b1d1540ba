// Package jsonbody judges the JSON body of an HTTP answer by JSONPath
// queries (RFC 9535): the http kind's json: assertions in vitals.yaml and
// --json on the command line. Its check reaches the http probe through
// probe.HTTPSpec.CheckBody, so that the root module, which has no
// third-party dependency, has no JSON query language of its own. It is a
// leaf: it imports nothing of vitals.
//
// An assertion is a query and a pattern. Every value the query selects must
// match the pattern whole, as text; a query that selects nothing fails.
//
//	$.status: UP                           Spring Boot's /actuator/health
//	$.components.*.status: UP              every component's status
//	$.checks[?@.name=='db'].status: pass   one entry of a list
//	$.status: UP|OUT_OF_SERVICE            either word
//
// A value's text is a string's characters (without quotes), a number as the
// body writes it (1.50 stays 1.50), true, false or null, and an object's or
// an array's compact JSON. The pattern is RE2, matched against the whole
// text (as if between ^ and $), so that UP is UP and not BACKUP; .* is any
// value, .+ any but an empty string.
//
// A want that is a comparison, an operator and a number or a duration
// (probe.Comparison, the syntax of every comparison of vitals), compares
// instead: every value selected must be a number (or a string that is
// one) that meets it.
//
//	$.queue.depth: "< 100"
//	$.replication.lag_seconds: "<= 30s"
//
// A want is read as a comparison when it is one, whole: an operator and a
// number or a duration. Anything else is a pattern, as it was before
// comparisons came (<html>, <.*>, <-1|0); one that must match "< 100" as
// text is written [<] 100.
//
// It imports probe, for the comparisons, and nothing else of vitals.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/theory/jsonpath"

	"github.com/vitals-dev/vitals/probe"
)

// Expect is one assertion on a JSON body: every value Query selects must
// match Want whole, as text, or meet it, a comparison.
type Expect struct {
	// Query is a JSONPath query (RFC 9535), such as $.status.
	Query string
	// Want is a regular expression (RE2) each selected value's text must
	// match whole, such as UP, or a comparison each must meet, such as
	// "< 100".
	Want string
}

// ParseQuery parses a JSONPath query, with an error that says what is
// wrong with it.
func ParseQuery(q string) (*jsonpath.Path, error) {
	p, err := jsonpath.Parse(q)
	switch {
	case err == nil:
		return p, nil
	case !strings.HasPrefix(q, "$"):
		return nil, fmt.Errorf("%q is not a JSONPath query: one starts with $, the whole body, as in $.status", q)
	}
	return nil, fmt.Errorf("%q is not a JSONPath query (RFC 9535): %w", q, err)
}

// Want is what a value must be: a pattern it matches whole, or a
// comparison it meets.
type Want struct {
	whole *regexp.Regexp    // nil for a comparison
	cmp   *probe.Comparison // nil for a pattern
}

// ParseWant reads what a value must be: a comparison, when want is one
// whole, else a pattern that it must match whole.
func ParseWant(want string) (Want, error) {
	if c, err := probe.ParseComparison(want); err == nil {
		return Want{cmp: &c}, nil
	}
	if _, err := regexp.Compile(want); err != nil { // its error says the pattern as written
		return Want{}, fmt.Errorf("pattern %q: %w", want, err)
	}
	re, err := regexp.Compile(`^(?:` + want + `)$`)
	return Want{whole: re}, err
}

// wrong says why v, a value selected, is not what w wants, and "" when it
// is.
func (w Want) wrong(v any) string {
	if w.whole != nil {
		if w.whole.MatchString(text(v)) {
			return ""
		}
		return "no match" // judge says it, with the pattern as written
	}
	var n float64
	var err error
	switch v := v.(type) {
	case json.Number:
		n, err = probe.ParseNumber(v.String())
	case string:
		n, err = probe.ParseNumber(strings.TrimSpace(v))
	default:
		err = errors.New("not a number")
	}
	if err != nil {
		return shown(v) + ": want a number " + w.cmp.String()
	}
	if w.cmp.Holds(n) {
		return ""
	}
	return shown(v) + ": want " + w.cmp.String()
}

// Cut reads "QUERY=WANT", as --json writes an assertion: the query is the
// text before the first = that ends a whole query, so that a filter's ==
// stays in it ($.checks[?@.name=='db'].status=pass) and WANT may hold
// more of them. ok is false when no = ends a query.
func Cut(s string) (e Expect, ok bool) {
	for i := range len(s) {
		if s[i] == '=' {
			if _, err := jsonpath.Parse(s[:i]); err == nil {
				return Expect{Query: s[:i], Want: s[i+1:]}, true
			}
		}
	}
	return Expect{}, false
}

// assertion is an Expect compiled.
type assertion struct {
	query string
	path  *jsonpath.Path
	want  string
	is    Want
}

// New makes the check of a body by the expects, for
// probe.HTTPSpec.CheckBody: nil when every one holds, else an error that
// names each that does not. It is safe for concurrent use.
func New(expects []Expect) (func(body []byte) error, error) {
	as := make([]assertion, 0, len(expects))
	for _, e := range expects {
		p, err := ParseQuery(e.Query)
		if err != nil {
			return nil, err
		}
		w, err := ParseWant(e.Want)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Query, err)
		}
		as = append(as, assertion{query: e.Query, path: p, want: e.Want, is: w})
	}
	return func(body []byte) error {
		doc, err := decode(body)
		if err != nil {
			return err
		}
		if wrong := judge(doc, as); len(wrong) > 0 {
			return errors.New(strings.Join(wrong, "; "))
		}
		return nil
	}, nil
}

// decode reads a body that is one JSON value, its numbers kept as written.
func decode(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("the body is empty, not JSON")
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("the body is not JSON: %w", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("the body is not JSON: more follows its first value")
	}
	return doc, nil
}

// maxWrong is how many of a query's values that do not match are named:
// the rest are counted, so that $..status over a large answer says enough
// and stays short.
const maxWrong = 3

// judge says what is wrong with doc by each assertion, in their order:
// nothing when all hold. A query that selects one value is named as
// written; the values of one that selects several by their normalized
// paths ($['components']['db']['status']), in their order.
func judge(doc any, as []assertion) []string {
	var wrong []string
	for _, a := range as {
		nodes := a.path.SelectLocated(doc)
		nodes.Sort() // an object's members come in no order
		if len(nodes) == 0 {
			wrong = append(wrong, fmt.Sprintf("%s selects no value", a.query))
			continue
		}
		var bad []string
		for _, n := range nodes {
			why := a.is.wrong(n.Node)
			if why == "" {
				continue
			}
			name := a.query
			if len(nodes) > 1 {
				name = n.Path.String()
			}
			if a.is.whole != nil {
				why = fmt.Sprintf("%s: want %q", shown(n.Node), a.want)
			}
			bad = append(bad, name+" is "+why)
		}
		if len(bad) > maxWrong {
			bad = append(bad[:maxWrong], fmt.Sprintf("and %d more of %s", len(bad)-maxWrong, a.query))
		}
		wrong = append(wrong, bad...)
	}
	return wrong
}

// text is the text of a value that a pattern matches.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v) // an object or an array, of what decode made
	return string(b)
}

// maxShown caps a string shown in an output: enough to tell DOWN from
// OUT_OF_SERVICE or a version, and no page of text.
const maxShown = 64

// shown is how a failure shows a value: a string quoted and cut at
// maxShown bytes, a number, true, false or null as it is; an object or an
// array is named, not shown, as it may hold much more than the query asked.
func shown(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > maxShown {
			cut := maxShown
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			return strconv.Quote(v[:cut]) + "…"
		}
		return strconv.Quote(v)
	case map[string]any:
		return "an object"
	case []any:
		return fmt.Sprintf("an array of %d", len(v))
	}
	return text(v)
}
