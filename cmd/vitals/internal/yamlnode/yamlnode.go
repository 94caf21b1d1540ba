// Package yamlnode has what the readers of YAML files with positions (the
// configuration loader, the importers) share about goccy/go-yaml's nodes.
package yamlnode

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Unwrap looks through anchors and tags to the value.
func Unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
}

// KeyName is a mapping key as written: a string's value, another scalar's
// text.
func KeyName(k ast.MapKeyNode) string {
	if s, ok := Unwrap(k).(ast.ScalarNode); ok {
		if str, ok := s.(*ast.StringNode); ok {
			return str.Value
		}
		if tok := s.GetToken(); tok != nil {
			return tok.Value
		}
	}
	return k.String()
}

// Describe names what a node is, for "want X, got Y".
func Describe(n ast.Node) string {
	switch v := Unwrap(n).(type) {
	case nil, *ast.NullNode:
		return "nothing"
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.AliasNode:
		return "an alias"
	case *ast.StringNode:
		return strconv.Quote(v.Value)
	case ast.ScalarNode:
		return strconv.Quote(v.GetToken().Value)
	}
	return strings.TrimSpace(n.String())
}

// Position is where a node starts: line and column, from 1; 0, 0 when unknown.
func Position(n ast.Node) (line, col int) {
	if n == nil {
		return 0, 0
	}
	if tok := n.GetToken(); tok != nil && tok.Position != nil {
		return tok.Position.Line, tok.Position.Column
	}
	return 0, 0
}

// PositionAt is where the byte at offset of a scalar's value is in src,
// the file n was parsed from: line and column, from 1, the column counted
// in characters, as editors count it; exact is false when it can only say
// where the node starts. It follows the value as the file writes it: a
// plain scalar on one line, a quoted one with its escapes (on one line),
// and each line of a literal block (|). For an error that points into a
// value with a syntax of its own (an expression's column).
func PositionAt(src []byte, n ast.Node, offset int) (line, col int, exact bool) {
	line, col = Position(n)
	switch v := Unwrap(n).(type) {
	case *ast.LiteralNode:
		if v.Start == nil || v.Start.Type != token.LiteralType || v.Value == nil || v.Start.Position == nil {
			return line, col, false
		}
		return literalAt(src, v.Start.Position.Line, v.Value.Value, offset)
	case *ast.StringNode:
		if v.Token == nil || v.Token.Position == nil || offset < 0 || offset > len(v.Value) {
			return line, col, false
		}
		l, c, ok := scalarAt(src, v.Token.Position.Line, v.Token.Position.Column, v.Token.Type, v.Value, offset)
		if ok {
			return l, c, true
		}
	}
	return line, col, false
}

// lineOf is the line'th line of src (from 1), without its line break, and
// whether src has it.
func lineOf(src []byte, line int) ([]byte, bool) {
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return nil, false
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return src, true
}

// scalarAt finds the byte at offset of value, a scalar of type typ
// written at line and col (in characters) of src, as the file writes it.
func scalarAt(src []byte, line, col int, typ token.Type, value string, offset int) (int, int, bool) {
	text, ok := lineOf(src, line)
	if !ok {
		return 0, 0, false
	}
	start := 0 // the byte of text where the scalar starts, col-1 characters in
	for range col - 1 {
		if start >= len(text) {
			return 0, 0, false
		}
		_, w := utf8.DecodeRune(text[start:])
		start += w
	}
	raw := text[start:]
	at := -1 // the byte of raw where the value's byte at offset is written
	switch typ {
	case token.DoubleQuoteType, token.SingleQuoteType:
		at = quotedAt(raw, offset)
	default:
		if bytes.HasPrefix(raw, []byte(value)) && !strings.ContainsAny(value, "\r\n") {
			at = offset
		}
	}
	if at < 0 {
		return 0, 0, false
	}
	return line, utf8.RuneCount(text[:start+at]) + 1, true
}

// quotedAt is where in raw, a quoted scalar as written on its line (its
// opening quote first), the byte at offset of its value is; -1 when the
// scalar ends, or its line does, before it.
func quotedAt(raw []byte, offset int) int {
	if len(raw) == 0 || raw[0] != '"' && raw[0] != '\'' {
		return -1
	}
	q := raw[0]
	value := 0 // bytes of the value written so far
	for i := 1; i < len(raw); {
		if value >= offset {
			return i
		}
		switch c := raw[i]; {
		case c == q && q == '\'' && i+1 < len(raw) && raw[i+1] == '\'':
			i += 2 // '' is '
			value++
		case c == q:
			if value == offset {
				return i
			}
			return -1
		case c == '\\' && q == '"' && i+1 < len(raw):
			n, width := escapeLen(raw[i+1:])
			i += 1 + n
			value += width
		default:
			i++
			value++
		}
	}
	return -1
}

// escapeLen is how many bytes of s, after a backslash, an escape of a
// double-quoted scalar takes, and how many bytes of the value it stands
// for.
func escapeLen(s []byte) (n, width int) {
	hex := func(digits int) (int, int) {
		if len(s) < 1+digits {
			return len(s), 1
		}
		v, err := strconv.ParseUint(string(s[1:1+digits]), 16, 32)
		if err != nil || utf8.RuneLen(rune(v)) < 0 {
			return 1, 1
		}
		return 1 + digits, utf8.RuneLen(rune(v))
	}
	switch s[0] {
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	case 'N', '_': // U+0085, U+00A0
		return 1, 2
	case 'L', 'P': // U+2028, U+2029
		return 1, 3
	}
	return 1, 1
}

// literalAt is where the byte at offset of a literal block's value is: its
// k-th line is the file's k-th after the block's indicator, on line
// indicator, indented by what that line has before the value's line.
func literalAt(src []byte, indicator int, value string, offset int) (int, int, bool) {
	if offset < 0 || offset > len(value) {
		return 0, 0, false
	}
	before := value[:offset]
	k := strings.Count(before, "\n")
	lineStart := strings.LastIndexByte(before, '\n') + 1
	valueLine, _, _ := strings.Cut(value[lineStart:], "\n")
	line := indicator + 1 + k
	text, ok := lineOf(src, line)
	if !ok || !bytes.HasSuffix(text, []byte(valueLine)) {
		return 0, 0, false
	}
	indent := len(text) - len(valueLine)
	return line, utf8.RuneCount(text[:indent+offset-lineStart]) + 1, true
}
