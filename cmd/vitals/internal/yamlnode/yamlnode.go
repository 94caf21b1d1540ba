// Package yamlnode has what the readers of YAML files with positions (the
// configuration loader, the importers) share about goccy/go-yaml's nodes.
package yamlnode

import (
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
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
