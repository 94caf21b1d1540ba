package yamlnode

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// nodes lists a tree's nodes in order, each with its kind, position and text.
func nodes(f *ast.File) []string {
	var out []string
	for _, d := range f.Docs {
		ast.Walk(visitor(func(n ast.Node) {
			line, col := Position(n)
			tk := ""
			if t := n.GetToken(); t != nil {
				tk = t.Value
			}
			out = append(out, fmt.Sprintf("%T %d:%d %q", n, line, col, tk))
		}), d.Body)
	}
	return out
}

type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor { v(n); return v }

// A file read piece by piece is the tree the parser builds of it whole.
func FuzzPiecesAreTheWhole(f *testing.F) {
	for _, seed := range []string{
		"checks:\n  a:\n    tcp: {address: \"x:1\"}\n    period: 10s\n  b:\n    period:\n    x: 1\n",
		"a:\n  b:\n    c:\n  d: 1\ne:\n",
		"a: 1 # c\n# x\nb: 2\n",
		"a:\n- x\n- y\nb: |\n  text\n  c: 1\nd: 'x\n  y'\n",
		"a:\n  b: 1\n   c: 2\n",
		"a: 1\na: 2\n",
		"a:\n  x: 1\nb:\n  x: 2\n",
		"\"q\": 1\n'r':\n  s: [1, {t: 2}]\n",
		"a: !!str 1\nb: &x {c: 1}\nd: *x\n",
		"a:\n- x: 1\n  y: 2\n- z: 3\nb: 1\n",
		"- a: 1\n  b: !!str 2\n- &x c\n- *x\n",
		"a:\n  - 1\n  - [2, 3]\n  -\n  - b:\n      c: 1\n",
		"a: !!str x\nb: &y 1\nc: *y\nd:\n  ? e\n  : f\n",
		"a:\n- - x\n  - y\n- z\n# c\n",
		"a: &d {x: 1}\nb:\n  <<: *d\n  y: 2\n",
		"---\n- a: 1\n  b: 2\n",
		"a: !!map\n  b: 1\nc: &x\n- d\ne: &y !!map\n  f: 1\n",
		"--- # c\na: 1\n...\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pieces := parseFast(lexer.Tokenize(string(data)))
		if pieces == nil {
			return
		}
		whole, err := parser.ParseBytes(data, 0)
		if err != nil {
			t.Fatalf("read in pieces, but the parser says: %v", err)
		}
		if got, want := strings.Join(nodes(pieces), "\n"), strings.Join(nodes(whole), "\n"); got != want {
			t.Fatalf("pieces:\n%s\nwhole:\n%s", got, want)
		}
	})
}

// A file of brackets is said too deep from its start, without the lexer's
// tokens of all of it; brackets in comments, quotes and balanced pairs are
// not a run.
func TestABracketRunIsFoundAtItsStart(t *testing.T) {
	bomb := []byte("checks: " + strings.Repeat("[", 4<<20))
	if end := bracketRun(bomb); end != len("checks: ")+4*MaxDepth+1 {
		t.Errorf("bracketRun of a bomb: %d", end)
	}
	_, err := Parse(bomb)
	if de, ok := err.(*DepthError); !ok || de.Line != 1 || de.Column != len("checks: ")+MaxDepth {
		t.Errorf("Parse of a bomb: %#v", err)
	}
	for _, s := range []string{
		"# " + strings.Repeat("[", 1000) + "\na: 1\n",
		"a: \"" + strings.Repeat("[", 1000) + "\"\n",
		"a: '" + strings.Repeat("{", 1000) + "'\n",
		"a: " + strings.Repeat("[]", 1000) + "\n",
	} {
		if end := bracketRun([]byte(s)); end != 0 {
			t.Errorf("bracketRun(%.20q): %d, want 0", s, end)
		}
	}
}

func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		yaml         string
		line, column int // 0: not too deep
	}{
		{strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), 0, 0},
		{strings.Repeat("[", MaxDepth+1), 1, MaxDepth + 1},
		{strings.Repeat("[", 100000), 1, MaxDepth + 1},
		{strings.Repeat("{a: ", 100000), 1, 4*MaxDepth + 1},
		{strings.Repeat("- ", 100000), 1, 2*MaxDepth + 1},
		{"a:\n" + strings.Repeat("- ", MaxDepth), 2, 2*MaxDepth - 1},
		{"a:\n" + strings.Repeat("- ", MaxDepth-1) + "x", 0, 0},
		{blockNest(MaxDepth), 0, 0},
		{blockNest(MaxDepth + 1), MaxDepth + 1, 2*MaxDepth + 1},
		{strings.Repeat("a: 1\n", 1000), 0, 0},
		{"a: \"" + strings.Repeat("[", 1000) + "\"\n", 0, 0},
		{"a: |\n  " + strings.Repeat("[", 1000) + "\n", 0, 0},
		{"# " + strings.Repeat("[", 1000) + "\n", 0, 0},
	} {
		err := depth(lexer.Tokenize(tc.yaml))
		name := tc.yaml[:min(len(tc.yaml), 20)]
		if tc.line == 0 {
			if err != nil {
				t.Errorf("%q: %v, want no error", name, err)
			}
			continue
		}
		de, ok := err.(*DepthError)
		if !ok || de.Line != tc.line || de.Column != tc.column {
			t.Errorf("%q: %#v, want a DepthError at %d:%d", name, err, tc.line, tc.column)
		}
	}
}

// blockNest is a block mapping n levels deep.
func blockNest(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%sa:\n", strings.Repeat("  ", i))
	}
	return b.String()
}

// The large shapes a file takes are read in pieces: a long mapping, a long
// list, either in the other, with tags, anchors, aliases and ? keys here and
// there.
func TestLargeShapesAreReadInPieces(t *testing.T) {
	for _, tc := range []struct {
		yaml   string
		pieces bool
	}{
		{"listen: !!str ':8558'\nchecks:\n  a: {tcp: {address: \"x:1\"}}\n  b:\n    period: !!str 10s\n", true},
		{"checks:\n  a: {x: &p 1, y: *p}\n  b: &q\n    c: 1\n  d:\n    ? e\n    : f\n  g: *q\n", true},
		{"a:\n  !!map\n  b: 1\nc:\n  text\n", true},
		{"hooks:\n- on: [x]\n  exec: [y]\n- on: !!seq [z]\n", true},
		{"hooks:\n  - a: 1\n    b:\n      - c\n      - d: !!int 2\n  - e\n", true},
		{"- a\n- b: 1\n  c: 2\n- [x]\n- - y\n  - z\n", true},
		{"a: &p 1\nb: *p\n", true},
		{"a: &d {x: 1}\nb:\n  <<: *d\n  y: 2\n", true},
		{"# c\n---\na: 1\nb:\n  c: 2\n", true},
		{"checks: !!map\n  a: 1\n  b: 2\nhooks: &h\n- x\nc: *h\n", true},
		{"a: !!str &p 1\nb: {c}\n", false},
		{"a: &p !!seq\n- 1\n", false},
		{"--- !!map\na: 1\n", false},
		{"---\na: 1\n---\nb: 2\n", false},
		{"a: 1\n? b\n: 2\n", false},
	} {
		pieces := parseFast(lexer.Tokenize(tc.yaml))
		if (pieces != nil) != tc.pieces {
			t.Errorf("%q: read in pieces: %v, want %v", tc.yaml, pieces != nil, tc.pieces)
		}
		whole, err := parser.ParseBytes([]byte(tc.yaml), 0)
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		f, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.yaml, err)
		}
		if got, want := strings.Join(nodes(f), "\n"), strings.Join(nodes(whole), "\n"); got != want {
			t.Errorf("%q:\nParse:\n%s\nthe parser:\n%s", tc.yaml, got, want)
		}
	}
}

// A file of more than MaxTokens tokens is an error at the first token past
// the bound, said from its bytes: a comment is no token, a quoted scalar
// one, whatever they hold.
func TestTokensAreCountedFromTheBytes(t *testing.T) {
	row := strings.Repeat("[],", (MaxTokens-2)/3) // after "a:\n", 999,998 tokens in all
	for _, tc := range []struct {
		yaml         string
		line, column int // 0: not too many
	}{
		{strings.Repeat("a ", MaxTokens), 0, 0},
		{strings.Repeat("a ", MaxTokens+1), 1, 2*MaxTokens + 1},
		{"# " + strings.Repeat("[ ", MaxTokens) + "\na: 1\n", 0, 0},
		{"a: '" + strings.Repeat("[ ", MaxTokens) + "'\n", 0, 0},
		{"a: \"" + strings.Repeat(`\" `, MaxTokens) + "\"\n", 0, 0},
		{"a:\n" + row + "é:", 0, 0},
		{"a:\n" + row + "é: [x]", 2, len(row) + 4},
	} {
		end, line, col := countTokens([]byte(tc.yaml))
		name := tc.yaml[:min(len(tc.yaml), 20)]
		if end > 0 != (tc.line > 0) || line != tc.line || col != tc.column {
			t.Errorf("%q: the bound passed at %d:%d, want %d:%d", name, line, col, tc.line, tc.column)
		}
	}
}

// 4 MiB of brackets, of a list's commas or of dashes is rejected in bounded
// memory: what the lexer's tokens of MaxTokens take, not the 2 GB the lexer
// and the parser took of all of it.
func TestLargeFilesAreRejectedInBoundedMemory(t *testing.T) {
	const size = 4 << 20
	for _, tc := range []struct {
		yaml string
		want error
	}{
		{"checks: " + strings.Repeat("[]", size/2), &SizeError{Line: 1, Column: len("checks: ") + MaxTokens - 1}},
		{"checks: [" + strings.Repeat("1,", size/2), &SizeError{Line: 1, Column: len("checks: ") + MaxTokens - 1}},
		{strings.Repeat("- ", size/2), &DepthError{Line: 1, Column: 2*MaxDepth + 1}},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse([]byte(tc.yaml))
		runtime.ReadMemStats(&after)
		if fmt.Sprintf("%#v", err) != fmt.Sprintf("%#v", tc.want) {
			t.Errorf("%.20q: %#v, want %#v", tc.yaml, err, tc.want)
		}
		if took := after.TotalAlloc - before.TotalAlloc; took > 400<<20 {
			t.Errorf("%.20q: %d MiB allocated, want at most 400", tc.yaml, took>>20)
		}
	}
}
