package logwatch

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// text is a run of lines read from a stream, as the checks see it: complete
// lines each ending in "\n", of which the last may lack it at the end of the
// stream, or one piece of a line longer than MaxLine.
type text struct {
	b []byte
	// lower is b with its ASCII letters in lower case, made once per run
	// when a pattern that ignores case first needs it, in scratch.
	lower, scratch []byte
}

func (t *text) set(b []byte) { t.b, t.lower = b, nil }

func (t *text) folded() []byte {
	if t.lower == nil {
		if cap(t.scratch) < len(t.b) {
			t.scratch = make([]byte, MaxLine)
		}
		t.lower = t.scratch[:len(t.b)]
		lowerASCII(t.lower, t.b)
	}
	return t.lower
}

// lowerASCII writes src to dst with its ASCII letters in lower case, eight
// bytes at a time: several times faster than one at a time.
func lowerASCII(dst, src []byte) {
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		low := x & (0x7f * ones)                         // each byte without its top bit, so that no sum carries into the next
		atLeastA := low + (0x80-'A')*ones                // top bit set where the byte is 'A' or above
		aboveZ := low + (0x80-'Z'-1)*ones                // top bit set where it is above 'Z'
		upper := atLeastA &^ aboveZ &^ x & (0x80 * ones) // 'A' to 'Z', and ASCII
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for ; i < len(src); i++ {
		c := src[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}

// matcher finds the lines that match a pattern.
type matcher struct {
	re *regexp.Regexp
	// needle is text that every match holds, so that a line without it
	// cannot match: bytes.Index finds the lines that hold it at memory
	// speed, and the regular expression runs on those alone. Empty when the
	// pattern has none, such as an alternation or a class: then it runs on
	// every line.
	needle []byte
	// fold: the needle is in lower case, and lines hold it in any case, as
	// (?i) says.
	fold bool
	// literal: the pattern is needle and nothing more, so a line matches
	// when it holds it.
	literal bool
}

func newMatcher(re *regexp.Regexp) *matcher {
	m := &matcher{re: re}
	if syn, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		m.needle, m.fold = needle(syn.Simplify())
		m.literal = syn.Op == syntax.OpLiteral && !m.fold && len(m.needle) > 0
	}
	return m
}

// find returns the first line of t that matches (with last, the last one),
// without its line ending.
func (m *matcher) find(t *text, last bool) (found []byte, ok bool) {
	b, hay := t.b, t.b
	if m.fold {
		hay = t.folded()
	}
	for at := 0; at < len(b); {
		if len(m.needle) > 0 {
			i := bytes.Index(hay[at:], m.needle)
			if i < 0 {
				break
			}
			at += bytes.LastIndexByte(b[at:at+i], '\n') + 1 // the start of the line that holds it
		}
		line, next := b[at:], len(b)
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line, next = bytes.TrimSuffix(line[:j], []byte("\r")), at+j+1
		}
		if m.match(line) {
			if !last {
				return line, true
			}
			found, ok = line, true
		}
		at = next
	}
	return found, ok
}

func (m *matcher) match(line []byte) bool {
	if m.literal {
		return bytes.Contains(line, m.needle)
	}
	return m.re.Match(line)
}

// needle returns text that every match of re holds, with fold when it may
// be in any case (then in lower case), or nothing. Of a concatenation it
// takes the longest, a case-sensitive one counting double: bytes.Index finds
// it without lowering the lines' case first.
func needle(re *syntax.Regexp) (text []byte, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return []byte(string(re.Rune)), false
		}
		text = foldNeedle(re.Rune)
		return text, len(text) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return needle(re.Sub[0])
	case syntax.OpConcat:
		score := func(text []byte, fold bool) int {
			if fold {
				return len(text)
			}
			return 2 * len(text)
		}
		for _, sub := range re.Sub {
			if t, f := needle(sub); score(t, f) > score(text, fold) {
				text, fold = t, f
			}
		}
		return text, fold
	}
	return nil, false
}

// foldNeedle returns the longest run of runes, in lower case, whose every
// case is ASCII: a line lowered byte by byte holds it wherever the pattern
// matches. The k and s of (?i)ks match the Kelvin sign and the long s too,
// which lowering ASCII letters does not find, so they end a run.
func foldNeedle(runes []rune) []byte {
	var best []byte
	start := 0
	for i := 0; i <= len(runes); i++ {
		if i < len(runes) && asciiFold(runes[i]) {
			continue
		}
		if i-start > len(best) {
			best = best[:0]
			for _, r := range runes[start:i] {
				best = append(best, byte(unicode.ToLower(r)))
			}
		}
		start = i + 1
	}
	return best
}

// asciiFold reports whether r and every rune that matches it ignoring case
// are ASCII.
func asciiFold(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
