package importer

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

// The output side: a vitals.yaml written line by line, so that the file
// keeps the order of the source, says in comments what it could not carry
// over, and quotes only what needs quoting.

// plainChars is what a scalar may hold and still be written without quotes:
// no space, no flow indicator (, [ ] { }), no # and no quote, so that it
// reads the same in a block and in a flow list; the first character is not
// an indicator that would start something else (@ % ` ! & * | > ? : ' ").
// It and notString are compiled at their first use, by vitals import, not at
// the start of every vitals command.
var plainChars = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_./+=~^$-][A-Za-z0-9_./+=~^$:@%?&-]*$`)
})

// notString is what YAML 1.1 or 1.2 may read as something else than a
// string: a boolean, a null, a number in any base, 1:20 in base 60. The
// loader would read most of these as strings, but a reader of the file, or
// another tool, may not.
var notString = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?i:y|n|yes|no|on|off|true|false|null|~)$|` +
		`^[-+]?(\.[0-9]|[0-9])|^0[xob]|^[-+]?\.(?i:inf|nan)$`)
})

// scalar writes s so that YAML reads back exactly s, as a string: plain when
// that is unambiguous, double-quoted otherwise. A word that YAML would read
// as something else (true, no, null, 8080, 1e3, 0x1f, .inf) is quoted.
func scalar(s string) string {
	if plainChars().MatchString(s) && !notString().MatchString(s) && !strings.HasSuffix(s, ":") && readsAsString(s) {
		return s
	}
	return quote(s)
}

// value writes s as a value of a vitals.yaml, where ${VAR} is expanded from
// the environment and $$ is a literal $: every $ is doubled, so that what the
// source says is what vitals runs.
func value(s string) string { return scalar(strings.ReplaceAll(s, "$", "$$")) }

// readsAsString parses "k: s" as the loader would and reports whether the
// value is the string s.
func readsAsString(s string) bool {
	f, err := parser.ParseBytes([]byte("k: "+s+"\n"), 0)
	if err != nil || len(f.Docs) != 1 {
		return false
	}
	m, ok := f.Docs[0].Body.(*ast.MappingNode)
	if !ok || len(m.Values) != 1 {
		return false
	}
	str, ok := m.Values[0].Value.(*ast.StringNode)
	return ok && str.Value == s
}

// quote writes s double-quoted, escaping what YAML escapes there: the quote,
// the backslash, control characters and YAML's own line breaks. A byte that
// is not UTF-8 is written as U+FFFD, since YAML text is Unicode.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// flowList writes words as a YAML flow list, each word a value.
func flowList(words []string) string {
	vs := make([]string, len(words))
	for i, w := range words {
		vs[i] = value(w)
	}
	return "[" + strings.Join(vs, ", ") + "]"
}

// writer builds the file, two spaces to a level of indentation.
type writer struct{ b strings.Builder }

func (w *writer) line(indent int, s string) {
	w.b.WriteString(strings.Repeat("  ", indent))
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// comment writes text as comment lines; a line of text never ends the
// comment early, since each line of it gets its own #.
func (w *writer) comment(indent int, text string) {
	for l := range strings.SplitSeq(text, "\n") {
		if l == "" {
			w.line(indent, "#")
		} else {
			w.line(indent, "# "+l)
		}
	}
}

// field is one key of a check's kind block or timing: a scalar, a flow list,
// a mapping of names to values or a block list, with an optional comment
// after it.
type field struct {
	key   string
	value string        // a scalar, unless list, pairs or items is set
	raw   bool          // value is written as it is: a number, a boolean
	list  []string      // a command's words
	pairs []kinds.Named // headers or environment variables
	items []field       // a block list, of each item's value as it is and its note: restart rules
	note  string        // a comment on the same line
}

func (w *writer) field(indent int, f field) {
	note := ""
	if f.note != "" {
		note = "  # " + f.note
	}
	switch {
	case f.items != nil:
		w.line(indent, f.key+":"+note)
		for _, it := range f.items {
			line := "- " + it.value
			if it.note != "" {
				line += "  # " + it.note
			}
			w.line(indent+1, line)
		}
	case f.pairs != nil:
		w.line(indent, f.key+":"+note)
		for _, p := range f.pairs {
			v := ""
			if len(p.Values) == 1 {
				v = value(p.Values[0])
			} else {
				v = flowList(p.Values)
			}
			w.line(indent+1, scalar(p.Name)+": "+v)
		}
	case f.list != nil:
		w.line(indent, f.key+": "+flowList(f.list)+note)
	case f.raw:
		w.line(indent, f.key+": "+f.value+note)
	default:
		w.line(indent, f.key+": "+value(f.value)+note)
	}
}
