package yamlnode

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxDepth is how deeply a file's collections may nest: a vitals.yaml
// needs about eight levels (checks, a check, its kind, headers, a list of
// values), and the parser's cost grows with the square of the depth (each
// node keeps its whole path): 100,000 levels, 200 KB of brackets, took more
// than 14 GB.
const MaxDepth = 64

// DepthError is a file that nests deeper than MaxDepth, at the first
// collection that does.
type DepthError struct {
	Line, Column int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("nested deeper than %d levels", MaxDepth)
}

// Parse parses one YAML file as goccy/go-yaml's parser does (its errors are
// the parser's, or a *DepthError), with two differences: the nesting is
// bounded (MaxDepth), checked on the lexer's tokens before any tree is built;
// and a long block mapping costs time in proportion to its length. (The
// parser reads each key of a block mapping one call deeper than the last,
// copying the keys after it at every level: 40,000 checks took seconds, and
// a stack as deep as the mapping is long.)
func Parse(data []byte) (*ast.File, error) {
	if end := bracketRun(data); end > 0 {
		// Said from the start of the run alone: the lexer's tokens of a
		// whole file of brackets would take 250 bytes a byte.
		if err := depth(lexer.Tokenize(string(data[:end]))); err != nil {
			return nil, err
		}
	}
	tokens := lexer.Tokenize(string(data))
	if err := depth(tokens); err != nil {
		return nil, err
	}
	if f := parseFast(tokens); f != nil {
		return f, nil
	}
	// The file is not one plain block mapping, or it has an error: the
	// parser reads it whole, and says what is wrong as it always has.
	return parser.ParseBytes(data, 0)
}

// bracketRun returns how much of data it takes for brackets ([ and {,
// outside comments and quotes) to open four times MaxDepth deep, or 0. It
// reads bytes, not YAML: a bracket inside a plain scalar counts too, which
// is why it looks so much deeper than MaxDepth, and why depth then decides.
func bracketRun(data []byte) int {
	open := 0
	start := true // at the start of a token, where a quote opens a scalar
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == '#' && start:
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
			continue // at the line break: a token starts after it
		case (c == '"' || c == '\'') && start:
			for i++; i < len(data) && data[i] != c; i++ {
				if c == '"' && data[i] == '\\' {
					i++
				}
			}
		case c == '[' || c == '{':
			if open++; open > 4*MaxDepth {
				return i + 1
			}
		case c == ']' || c == '}':
			open = max(open-1, 0)
		}
		start = strings.IndexByte(" \t\r\n[{,:-?", c) >= 0
	}
	return 0
}

// level is one open block collection: the column of its keys or dashes.
type level struct {
	column int
	seq    bool
}

// depth returns a *DepthError at the first token that opens a collection
// past MaxDepth: a flow collection ([ or {), or a block one (a key or a
// dash at a column deeper than the open ones').
func depth(tokens token.Tokens) error {
	var block []level
	flow := 0
	var prev *token.Token // the last token that is not a comment
	for _, tk := range tokens {
		if tk.Type == token.CommentType {
			continue
		}
		opened, at := false, tk
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
			opened = true
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.DocumentHeaderType, token.DocumentEndType:
			block, flow = block[:0], 0
		case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
			if flow > 0 {
				break
			}
			col, seq := tk.Position.Column, tk.Type == token.SequenceEntryType
			if tk.Type == token.MappingValueType && prev != nil && prev.Position.Line == tk.Position.Line {
				col, at = prev.Position.Column, prev // a mapping's column is its keys'
			}
			for len(block) > 0 {
				top := block[len(block)-1]
				if top.column > col || top.column == col && top.seq && !seq {
					block = block[:len(block)-1]
					continue
				}
				break
			}
			if n := len(block); n == 0 || block[n-1].column < col || block[n-1].seq != seq {
				block = append(block, level{col, seq})
				opened = true
			}
		}
		if opened && len(block)+flow > MaxDepth {
			return &DepthError{Line: at.Position.Line, Column: at.Position.Column}
		}
		prev = tk
	}
	return nil
}

// parseFast reads a file that is one block mapping as the parser would,
// entry by entry, and the value of an entry that is itself a block mapping
// the same way, so that no call of the parser sees a long mapping. It
// returns nil when the file is anything else, or when the parser finds an
// error in a piece: the caller then parses the file whole.
func parseFast(tokens token.Tokens) *ast.File {
	for _, tk := range tokens {
		switch tk.Type {
		case token.DocumentHeaderType, token.DocumentEndType, token.DirectiveType:
			return nil // documents, and their own rules, are the parser's
		case token.TagType, token.AnchorType, token.MappingKeyType:
			return nil // what a tag, an anchor or a ? takes in is the parser's to say
		}
	}
	first := nextToken(tokens, 0)
	if first < 0 || !isKey(tokens, first) {
		return nil
	}
	m := fastMap(tokens[first:], tokens[first].Position.Column, true)
	if m == nil {
		return nil
	}
	return &ast.File{Docs: []*ast.DocumentNode{ast.Document(nil, m)}}
}

// fastMap reads tokens, a block mapping whose keys are at column col, or
// returns nil; atEnd says whether the file ends with them.
func fastMap(tokens token.Tokens, col int, atEnd bool) *ast.MappingNode {
	// Where each entry starts: a key at col that begins its line, outside
	// any flow collection.
	starts := []int{0}
	flow := 0
	for i := 1; i < len(tokens); i++ {
		tk := tokens[i]
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		}
		if flow > 0 || tk.Type == token.CommentType || !beginsLine(tokens, i) {
			continue
		}
		switch {
		case tk.Position.Column < col:
			return nil // it belongs to no entry of this mapping
		case tk.Position.Column > col:
		case !isKey(tokens, i) || awaitsValue(tokens, i):
			// A dash of a sequence under the last key, a key the parser
			// may give to what comes before: whose the entries are, the
			// parser says.
			return nil
		default:
			starts = append(starts, i)
		}
	}
	starts = append(starts, len(tokens))
	var values []*ast.MappingValueNode
	keys := make(map[string]bool, len(starts))
	for k := 0; k+1 < len(starts); k++ {
		entry := tokens[starts[k]:starts[k+1]]
		vs := fastEntry(entry, atEnd && k+2 == len(starts))
		if vs == nil {
			return nil
		}
		for _, v := range vs {
			name := KeyName(v.Key)
			if keys[name] {
				return nil // the parser says where the first one is
			}
			keys[name] = true
		}
		values = append(values, vs...)
	}
	return ast.Mapping(values[0].GetToken(), false, values...)
}

// fastEntry reads one entry of a block mapping: a key alone on its line
// with a block mapping under it is read by fastMap, any other through the
// parser.
func fastEntry(entry token.Tokens, atEnd bool) []*ast.MappingValueNode {
	under := nextToken(entry, 2)
	if entry[1].Type == token.MappingValueType && under > 0 && beginsLine(entry, under) &&
		entry[under].Position.Column > entry[0].Position.Column && isKey(entry, under) {
		head := parsePiece(entry[:2], false) // the key, with no value yet
		value := fastMap(entry[under:], entry[under].Position.Column, atEnd)
		if len(head) != 1 || value == nil {
			return nil
		}
		head[0].Value = value
		return head
	}
	return parsePiece(entry, atEnd)
}

// parsePiece parses tokens that are a block mapping, or returns nil; atEnd
// says whether the file ends with them.
func parsePiece(tokens token.Tokens, atEnd bool) []*ast.MappingValueNode {
	// Capped, so that nothing the parser appends lands on the next piece.
	f, err := parser.Parse(tokens[:len(tokens):len(tokens)], 0)
	if err != nil || len(f.Docs) != 1 {
		return nil
	}
	m, ok := f.Docs[0].Body.(*ast.MappingNode)
	if !ok || m.IsFlowStyle || len(m.Values) == 0 {
		return nil
	}
	if !atEnd {
		last := len(tokens) - 1
		for last > 0 && tokens[last].Type == token.CommentType {
			last--
		}
		placeNull(m, tokens[last])
	}
	return m.Values
}

// placeNull puts the implicit null that ends a piece (key: and nothing
// after, last its colon) where the parser puts one with more of the file
// after it: one column nearer, as it counts the space before a value only
// at the end of a file.
func placeNull(n ast.Node, last *token.Token) {
	for {
		switch v := n.(type) {
		case *ast.MappingNode:
			if len(v.Values) == 0 {
				return
			}
			n = v.Values[len(v.Values)-1].Value
		case *ast.MappingValueNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		case *ast.SequenceNode:
			if len(v.Values) == 0 {
				return
			}
			n = v.Values[len(v.Values)-1]
		case *ast.NullNode:
			tk := v.GetToken()
			if tk != nil && tk.Type == token.ImplicitNullType && tk.Position != nil &&
				tk.Position.Line == last.Position.Line && tk.Position.Column == last.Position.Column+2 {
				tk.Position.Column--
			}
			return
		default:
			return
		}
	}
}

// awaitsValue reports whether the token before tokens[i] (a comment aside)
// is a dash, a question mark, an anchor, a tag, or the | or > of a block
// scalar, which the parser may give the next line as its value.
func awaitsValue(tokens token.Tokens, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch tokens[j].Type {
		case token.CommentType:
			continue
		case token.SequenceEntryType, token.MappingKeyType, token.AnchorType, token.TagType,
			token.LiteralType, token.FoldedType:
			return true
		}
		return false
	}
	return false
}

// isKey reports whether tokens[i] is a scalar key followed by its colon, on
// one line.
func isKey(tokens token.Tokens, i int) bool {
	if i+1 >= len(tokens) {
		return false
	}
	tk, colon := tokens[i], tokens[i+1]
	if colon.Type != token.MappingValueType || colon.Position.Line != tk.Position.Line {
		return false
	}
	switch tk.Type {
	case token.StringType, token.SingleQuoteType, token.DoubleQuoteType, token.NullType,
		token.BoolType, token.IntegerType, token.BinaryIntegerType, token.OctetIntegerType,
		token.HexIntegerType, token.FloatType, token.InfinityType, token.NanType:
		return true
	}
	return false
}

// beginsLine reports whether tokens[i] is the first token of its line that
// is not a comment.
func beginsLine(tokens token.Tokens, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if tokens[j].Type == token.CommentType && tokens[j].Position.Line < tokens[i].Position.Line {
			continue
		}
		return tokens[j].Position.Line < tokens[i].Position.Line && !multiline(tokens[j])
	}
	return true
}

// multiline reports whether a token's text runs onto later lines, so that
// a token after it on a later line may still share a line with it. (A
// token's Origin ends with the blanks and line breaks after it.)
func multiline(tk *token.Token) bool {
	return strings.ContainsAny(strings.TrimRight(tk.Origin, " \t\r\n"), "\r\n")
}

// nextToken is the index of the first token at or after i that is not a
// comment; -1 if none.
func nextToken(tokens token.Tokens, i int) int {
	for ; i < len(tokens); i++ {
		if tokens[i].Type != token.CommentType {
			return i
		}
	}
	return -1
}
