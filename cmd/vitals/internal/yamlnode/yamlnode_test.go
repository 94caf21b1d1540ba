package yamlnode

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
)

// PositionAt finds a byte of a scalar's value where the file writes it:
// through a quoted scalar's escapes, and line by line in a literal block,
// its column in characters.
func TestPositionAtFollowsTheValueAsWritten(t *testing.T) {
	src := "a: max(x) < 1oo\n" + // plain
		"b: \"\\t\\\"q\\\" < 1oo\"\n" + // double-quoted, with escapes
		"c: 'it''s < 1oo'\n" + // single-quoted, with a doubled quote
		"d: |\n  x < 1\n    and y < 1oo\n" + // a literal block
		"e: >\n  x\n  < 1oo\n" + // folded: where the node starts
		"f: x{a=\"é\"} < 1oo\n" + // characters, not bytes
		"g: \"\\u00e9\\x41 < 1oo\"\n" + // escapes of several characters, and of several bytes
		"h: |2\n    x\n     < 1oo\n" // an indentation indicator
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]ast.Node{}
	for _, kv := range f.Docs[0].Body.(*ast.MappingNode).Values {
		values[KeyName(kv.Key)] = kv.Value
	}
	for _, tt := range []struct {
		key       string
		line, col int
		exact     bool
	}{
		{"a", 1, 13, true},
		{"b", 2, 15, true},
		{"c", 3, 13, true},
		{"d", 6, 13, true},
		{"e", 7, 4, false}, // the block's indicator
		{"f", 10, 15, true},
		{"g", 11, 18, true},
		{"h", 14, 8, true},
	} {
		value := values[tt.key]
		var text string
		switch v := Unwrap(value).(type) {
		case *ast.StringNode:
			text = v.Value
		case *ast.LiteralNode:
			text = v.Value.Value
		}
		offset := strings.Index(text, "1oo")
		line, col, exact := PositionAt([]byte(src), value, offset)
		if line != tt.line || col != tt.col || exact != tt.exact {
			t.Errorf("%s (%q at %d): %d:%d exact %v, want %d:%d exact %v", tt.key, text, offset, line, col, exact, tt.line, tt.col, tt.exact)
		}
	}
}
