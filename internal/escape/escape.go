// Package escape writes text that comes from outside vitals — a command's
// output, a server's error, a key of a file — so that it cannot act on
// whoever reads it: no escape sequence reaches a terminal (an OSC that sets
// its title, a cursor move that forges earlier lines), no NUL cuts a C
// string, no bidi override (U+202E) makes a line read backwards. Every such
// character is written as Go writes it in a string literal (\x1b, \a,
// \u202e), which stays readable and shows what was there.
//
// It is the one escaper of the project: the health Monitor keeps results'
// outputs through Text, the agent's configuration errors and the CLI's lines
// go through Line, and a notice's data is written on one line with Pairs. It lives under the root module's internal/ so that both
// the root module and cmd/vitals can use it.
package escape

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with every character that is not shown as itself escaped,
// except line breaks and tabs, which a multi-line output keeps: \n, and \r\n
// as \n. A lone \r (which returns the cursor to overwrite a line) is
// escaped. Text of its own answer is that answer.
func Text(s string) string {
	return escape(s, func(r rune) bool { return r == '\n' || r == '\t' })
}

// Line is Text with line breaks and tabs escaped too: for what must stay one
// line, such as one error of a configuration file.
func Line(s string) string {
	return escape(s, func(rune) bool { return false })
}

func escape(s string, keep func(rune) bool) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return hidden(r) && !keep(r) }) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1: // a byte that is no UTF-8
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == '\r' && keep('\n') && strings.HasPrefix(s[i+1:], "\n"):
			// CRLF is a line break, written as one.
		case hidden(r) && !keep(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hex = "0123456789abcdef"

// hidden reports whether r is not shown as itself: a control character, a
// format character (bidi overrides, zero-width ones), a line or paragraph
// separator, anything unassigned or private. Spaces are shown.
func hidden(r rune) bool { return !unicode.IsGraphic(r) && r != ' ' }

// Cut returns where to cut s, an answer of Text or Line, to keep at most n
// bytes: the largest index no greater than n that splits neither a rune nor
// an escape that Text wrote, so that a capped output never ends in half an
// escape (\u20 of \u202e).
func Cut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	// An escape is at most 10 bytes (\U0010ffff), and starts with \.
	from := max(0, n-(maxEscape-1))
	if i := strings.LastIndexByte(s[from:n], '\\'); i >= 0 {
		if i += from; i+escapeLen(s[i:]) > n {
			n = i
		}
	}
	return n
}

// maxEscape is the longest escape Text writes: \U0010ffff.
const maxEscape = 10

// escapeLen is the length of the escape that begins s, which begins with \:
// \xHH, \uHHHH, \UHHHHHHHH, or a letter (\a, \r). Cut passes at least two
// bytes.
func escapeLen(s string) int {
	switch s[1] {
	case 'x':
		return 4
	case 'u':
		return 6
	case 'U':
		return maxEscape
	}
	return 2
}

// Pairs writes name=value pairs on one line, sorted by name and separated by
// spaces, as logfmt does: a value that is empty, or holds a space, a quote,
// an = or anything Line would escape, is written quoted as Go quotes it
// (strconv.Quote), so that the line reads back one pair per value. The
// names are written with Line.
func Pairs(pairs map[string]string) string {
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(pairs)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := pairs[name]
		if v == "" || strings.ContainsAny(v, " \"=") || Line(v) != v {
			v = strconv.Quote(v)
		}
		b.WriteString(Line(name) + "=" + v)
	}
	return b.String()
}
