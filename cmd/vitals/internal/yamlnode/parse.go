package yamlnode

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

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

// MaxTokens is how many tokens a file may have: each scalar (each word of
// a plain one, a quoted one whole), each indicator (- ? : [ ] { } ,),
// anchor, alias and tag. It bounds the parser's memory: a file of MaxTokens
// tokens takes vitals 400 to 700 MB in all, where 4 MiB of brackets, or of
// [1,1,1...], took 2 GB. A check of six fields is 25 to 30 tokens, so that
// a vitals.yaml as large as the configuration loader reads (4 MiB: 27,000
// such checks in block style, 32,000 in flow style) still loads.
const MaxTokens = 1_000_000

// SizeError is a file of more than MaxTokens tokens, at the first token
// past the bound.
type SizeError struct {
	Line, Column int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("more than %d tokens", MaxTokens)
}

// Parse parses one YAML file as goccy/go-yaml's parser does (its errors are
// the parser's, a *SizeError or a *DepthError), with three differences: the
// size is bounded (MaxTokens), counted on the bytes before the lexer reads
// them; the nesting is bounded (MaxDepth), checked on the lexer's tokens
// before any tree is built; and a long block mapping or list costs time in
// proportion to its length, nested in one another, tagged or not. (The
// parser reads each key of a block mapping one call deeper than the last,
// copying the keys after it at every level: 40,000 checks took seconds, and
// a stack as deep as the mapping is long.)
func Parse(data []byte) (*ast.File, error) {
	if end, line, col := countTokens(data); end > 0 {
		// The tokens up to the bound are lexed, no more, to say whether
		// the file nests too deeply first, as a file of dashes does.
		if err := depth(lexer.Tokenize(string(data[:end]))); err != nil {
			return nil, err
		}
		return nil, &SizeError{Line: line, Column: col}
	}
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

// countTokens counts the tokens of data from its bytes, as the lexer would
// make them (or a few more: it reads bytes, not YAML), and returns where
// the first one past MaxTokens starts (its offset, line and column, from
// 1), or 0, 0, 0.
func countTokens(data []byte) (end, line, col int) {
	n := 0
	start := true // at the start of a token
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			start = true
			continue
		case c == '#' && start:
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
			continue
		case strings.IndexByte("[]{},", c) >= 0:
			start = true
		case (c == '-' || c == '?' || c == ':') &&
			(i+1 == len(data) || strings.IndexByte(" \t\r\n", data[i+1]) >= 0):
			start = true
		case !start:
			continue // the rest of a word
		case c == '"' || c == '\'':
			for i++; i < len(data) && data[i] != c; i++ {
				if c == '"' && data[i] == '\\' {
					i++
				}
			}
			start = false
		default:
			start = false
		}
		if n++; n > MaxTokens {
			before := data[:i]
			nl := bytes.LastIndexByte(before, '\n')
			return i, bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[nl+1:]) + 1
		}
	}
	return 0, 0, 0
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

// parseFast reads a file that is one block mapping or one block sequence
// (after a --- or not) as the parser would, entry by entry, and the value of
// an entry that is itself a block mapping or sequence the same way, so that
// no call of the parser sees a long collection. Tags, anchors and ? keys
// stay in the piece that has them (a ? key at a collection's column takes
// the whole file); an alias is its anchor's name only, to the parser,
// wherever the anchor is. It returns nil when the file is anything else, or
// when the parser finds an error in a piece: the caller then parses the
// file whole.
func parseFast(tokens token.Tokens) *ast.File {
	var header *token.Token // the --- that may start the file's one document
	first := nextToken(tokens, 0)
	if first >= 0 && tokens[first].Type == token.DocumentHeaderType {
		header, first = tokens[first], nextToken(tokens, first+1)
	}
	if first < 0 {
		return nil
	}
	for i, tk := range tokens[first:] {
		switch tk.Type {
		case token.DocumentHeaderType, token.DocumentEndType, token.DirectiveType:
			return nil // documents, and their own rules, are the parser's
		case token.TagType:
			if j := first + i + 1; j < len(tokens) && tokens[j].Type == token.AnchorType ||
				first+i > 1 && tokens[first+i-2].Type == token.AnchorType { // & and its name
				// A tag beside an anchor: the parser loses what follows
				// (0: !!str &a {b}, then 1: is no key of its), or errs
				// on what follows it, in whichever piece that is.
				return nil
			}
		}
	}
	var body ast.Node
	switch col := tokens[first].Position.Column; {
	case header != nil && tokens[first].Position.Line == header.Position.Line:
		// --- a: 1, or a tag or an anchor of the document: the parser's.
	case isKey(tokens, first):
		if m := fastMap(tokens[first:], col, true); m != nil {
			body = m
		}
	case tokens[first].Type == token.SequenceEntryType:
		if s := fastSeq(tokens[first:], col, true); s != nil {
			body = s
		}
	}
	if body == nil {
		return nil
	}
	return &ast.File{Docs: []*ast.DocumentNode{ast.Document(header, body)}}
}

// split returns where each piece of tokens starts: tokens[0], and each
// token at column col that begins its line outside any flow collection and
// that is a key (or, for a sequence, a dash). A sequence under a key may
// have its dashes at the key's column: those are no piece's start. It
// returns nil when a line is at a column less than col, or is at col and is
// not what starts a piece, or may be the value of what comes before it.
func split(tokens token.Tokens, col int, seq bool) []int {
	starts := []int{0}
	flow := 0
	dashes := false // the piece is a key whose value is a sequence at col
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
			return nil // it belongs to no entry of this collection
		case tk.Position.Column > col:
		case !seq && tk.Type == token.SequenceEntryType:
			// The first dash of the sequence that is the value of the
			// piece's key, or a later one.
			last := starts[len(starts)-1]
			first := !dashes && tokens[last+1].Type == token.MappingValueType &&
				nextToken(tokens, afterProps(tokens, last)) == i
			if !first && (!dashes || awaitsValue(tokens, i)) {
				return nil
			}
			dashes = true
		case awaitsValue(tokens, i):
			// A key or a dash the parser may give to what comes
			// before: whose the entries are, the parser says.
			return nil
		case seq && tk.Type == token.SequenceEntryType:
			starts = append(starts, i)
		case seq:
			return nil
		case isKey(tokens, i):
			starts, dashes = append(starts, i), false
		default:
			return nil
		}
	}
	return append(starts, len(tokens))
}

// fastMap reads tokens, a block mapping whose keys are at column col, or
// returns nil; atEnd says whether the file ends with them.
func fastMap(tokens token.Tokens, col int, atEnd bool) *ast.MappingNode {
	starts := split(tokens, col, false)
	if starts == nil {
		return nil
	}
	var values []*ast.MappingValueNode
	keys := make(map[string]bool, len(starts))
	for k := 0; k+1 < len(starts); k++ {
		v := fastEntry(tokens[starts[k]:starts[k+1]], atEnd && k+2 == len(starts))
		if v == nil {
			return nil
		}
		name := KeyName(v.Key)
		if keys[name] {
			return nil // the parser says where the first one is
		}
		keys[name] = true
		values = append(values, v)
	}
	return ast.Mapping(values[0].GetToken(), false, values...)
}

// fastEntry reads one entry of a block mapping: a key alone on its line
// with a block mapping or sequence under it is read by fastMap or fastSeq,
// any other through the parser.
func fastEntry(entry token.Tokens, atEnd bool) *ast.MappingValueNode {
	if under := nextToken(entry, afterProps(entry, 0)); entry[1].Type == token.MappingValueType && under > 0 && beginsLine(entry, under) {
		var value ast.Node
		head := under + 1 // the key, its tags and anchors, and the value's first dash
		switch col := entry[under].Position.Column; {
		case col > entry[0].Position.Column && isKey(entry, under):
			if m := fastMap(entry[under:], col, atEnd); m != nil {
				value, head = m, under+2 // and its first key and colon
			}
		case col >= entry[0].Position.Column && entry[under].Type == token.SequenceEntryType:
			if s := fastSeq(entry[under:], col, atEnd); s != nil {
				value = s
			}
		}
		if value != nil {
			m, ok := parsePiece(entry[:head], false).(*ast.MappingNode)
			if !ok || len(m.Values) != 1 || !setValue(m.Values[0], value) {
				return nil
			}
			return m.Values[0]
		}
	}
	if m, ok := parsePiece(entry, atEnd).(*ast.MappingNode); ok && len(m.Values) == 1 {
		return m.Values[0]
	}
	return nil
}

// afterProps returns where the value of the key at tokens[i] starts: after
// its colon, and the tags and anchors (& and a name) on the key's line.
func afterProps(tokens token.Tokens, i int) int {
	j := i + 2
	for j < len(tokens) && tokens[j].Position.Line == tokens[i].Position.Line {
		switch tokens[j].Type {
		case token.TagType:
			j++
		case token.AnchorType:
			j += 2
		default:
			return j
		}
	}
	return min(j, len(tokens))
}

// setValue puts value, a block collection, in place of the one the parser
// made of its start alone, under a key's tags and anchors; or reports that
// there is no such collection.
func setValue(kv *ast.MappingValueNode, value ast.Node) bool {
	slot := &kv.Value
	for {
		switch v := (*slot).(type) {
		case *ast.TagNode:
			slot = &v.Value
		case *ast.AnchorNode:
			slot = &v.Value
		case *ast.SequenceNode, *ast.MappingNode:
			if v.Type() != value.Type() {
				return false
			}
			*slot = value
			return true
		default:
			return false
		}
	}
}

// fastSeq reads tokens, a block sequence whose dashes are at column col,
// or returns nil; atEnd says whether the file ends with them.
func fastSeq(tokens token.Tokens, col int, atEnd bool) *ast.SequenceNode {
	starts := split(tokens, col, true)
	if starts == nil {
		return nil
	}
	seq := ast.Sequence(tokens[0], false)
	for k := 0; k+1 < len(starts); k++ {
		item, last := tokens[starts[k]:starts[k+1]], atEnd && k+2 == len(starts)
		if len(item) > 1 && isKey(item, 1) && item[1].Position.Line == item[0].Position.Line {
			// - key: value, and the keys under it: a mapping read by fastMap.
			m := fastMap(item[1:], item[1].Position.Column, last)
			if m == nil {
				return nil
			}
			seq.Values = append(seq.Values, m)
			seq.Entries = append(seq.Entries, ast.SequenceEntry(item[0], m, nil))
			seq.ValueHeadComments = append(seq.ValueHeadComments, nil)
			continue
		}
		s, ok := parsePiece(item, last).(*ast.SequenceNode)
		if !ok || len(s.Values) != 1 {
			return nil
		}
		seq.Values = append(seq.Values, s.Values...)
		seq.Entries = append(seq.Entries, s.Entries...)
		seq.ValueHeadComments = append(seq.ValueHeadComments, s.ValueHeadComments...)
	}
	return seq
}

// parsePiece parses tokens that are one block collection, or returns nil;
// atEnd says whether the file ends with them.
func parsePiece(tokens token.Tokens, atEnd bool) ast.Node {
	// Capped, so that nothing the parser appends lands on the next piece.
	f, err := parser.Parse(tokens[:len(tokens):len(tokens)], 0)
	if err != nil || len(f.Docs) != 1 {
		return nil
	}
	switch b := f.Docs[0].Body.(type) {
	case *ast.MappingNode:
		if b.IsFlowStyle || len(b.Values) == 0 {
			return nil
		}
	case *ast.SequenceNode:
		if b.IsFlowStyle || len(b.Values) == 0 {
			return nil
		}
	default:
		return nil
	}
	body := f.Docs[0].Body
	if !atEnd {
		last := len(tokens) - 1
		for last > 0 && tokens[last].Type == token.CommentType {
			last--
		}
		placeNull(body, tokens[last])
	}
	return body
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
// token's Origin may begin and end with the blanks and line breaks
// around it.)
func multiline(tk *token.Token) bool {
	return strings.ContainsAny(strings.Trim(tk.Origin, " \t\r\n"), "\r\n")
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
