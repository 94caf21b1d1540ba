package importer

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
)

// The input side: a source file read through its syntax tree, so that an
// error names the file, line and column, and the path of the value, as
// vitals validate does.

// node is one value of the source, or the absence of one, with where it is.
type node struct {
	file string
	path string   // such as checks.web.http.url
	n    ast.Node // nil when the value is absent
	at   ast.Node // where an absent value would be: its mapping
}

// parse reads every document of a YAML file.
func parse(file string, data []byte) ([]node, error) {
	f, err := yamlnode.Parse(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))) // CRLF as LF, as vitals.yaml is read
	if err != nil {
		var de *yamlnode.DepthError
		var se *yamlnode.SizeError
		switch {
		case errors.As(err, &de):
			return nil, fmt.Errorf("%s:%d:%d: not a manifest or a layer: YAML %v", file, de.Line, de.Column, err)
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d:%d: not a manifest or a layer: YAML %v", file, se.Line, se.Column, err)
		}
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			p := ye.GetToken().Position
			return nil, fmt.Errorf("%s:%d:%d: not YAML: %s", file, p.Line, p.Column, ye.GetMessage())
		}
		return nil, fmt.Errorf("%s: not YAML: %v", file, err)
	}
	var docs []node
	for _, d := range f.Docs {
		if d.Body == nil {
			continue
		}
		if _, null := yamlnode.Unwrap(d.Body).(*ast.NullNode); null {
			continue
		}
		docs = append(docs, node{file: file, n: d.Body})
	}
	return docs, nil
}

// absent reports whether there is no value: no key, or a null.
func (v node) absent() bool {
	if v.n == nil {
		return true
	}
	_, null := yamlnode.Unwrap(v.n).(*ast.NullNode)
	return null
}

// errorf is an error at the value, with the file, line, column and path.
func (v node) errorf(format string, args ...any) error {
	where, at := v.file, cmp.Or[ast.Node](v.n, v.at)
	if m, ok := yamlnode.Unwrap(at).(*ast.MappingNode); ok && len(m.Values) > 0 {
		at = m.Values[0].Key // a mapping's own token is its first colon
	}
	if at != nil {
		if tok := at.GetToken(); tok != nil && tok.Position != nil {
			where = fmt.Sprintf("%s:%d:%d", v.file, tok.Position.Line, tok.Position.Column)
		}
	}
	if v.path == "" {
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%s: %s: %s", where, v.path, fmt.Sprintf(format, args...))
}

// child is the value under key or at index, for paths.
func (v node) child(key string, n ast.Node) node {
	path := key
	switch {
	case strings.HasPrefix(key, "["):
		path = v.path + key
	case v.path != "":
		path = v.path + "." + key
	}
	return node{file: v.file, path: path, n: n, at: v.n}
}

// entry is one key of a mapping with its value.
type entry struct {
	key string
	val node
}

// entries is a mapping's keys and values, in the file's order; a null is an
// empty mapping.
func (v node) entries() ([]entry, error) {
	if v.absent() {
		return nil, nil
	}
	m, ok := yamlnode.Unwrap(v.n).(*ast.MappingNode)
	if !ok {
		return nil, v.errorf("want a mapping, got %s", yamlnode.Describe(v.n))
	}
	out := make([]entry, 0, len(m.Values))
	for _, kv := range m.Values {
		k := yamlnode.KeyName(kv.Key)
		out = append(out, entry{k, v.child(k, kv.Value)})
	}
	return out, nil
}

// fields reads a mapping whose keys are known: the value of every known key
// (absent when the mapping does not have it), and the keys it does not know,
// in the file's order.
func (v node) fields(known ...string) (map[string]node, []string, error) {
	es, err := v.entries()
	if err != nil {
		return nil, nil, err
	}
	out := map[string]node{}
	for _, k := range known {
		out[k] = v.child(k, nil)
	}
	var unknown []string
	for _, e := range es {
		if slices.Contains(known, e.key) {
			out[e.key] = e.val
		} else {
			unknown = append(unknown, e.key)
		}
	}
	return out, unknown, nil
}

// get is the value under key, absent when v is not a mapping or has no such
// key: for finding a way through a manifest, not for reading a field.
func (v node) get(key string) node {
	if m, ok := yamlnode.Unwrap(v.n).(*ast.MappingNode); ok {
		for _, kv := range m.Values {
			if yamlnode.KeyName(kv.Key) == key {
				return v.child(key, kv.Value)
			}
		}
	}
	return v.child(key, nil)
}

// items is a list's values; a null is an empty list.
func (v node) items() ([]node, error) {
	if v.absent() {
		return nil, nil
	}
	s, ok := yamlnode.Unwrap(v.n).(*ast.SequenceNode)
	if !ok {
		return nil, v.errorf("want a list, got %s", yamlnode.Describe(v.n))
	}
	out := make([]node, len(s.Values))
	for i, n := range s.Values {
		out[i] = v.child(fmt.Sprintf("[%d]", i), n)
	}
	return out, nil
}

// str is a scalar's text: a string as it reads, any other scalar (8080,
// true) as the file writes it.
func (v node) str() (string, error) {
	switch n := yamlnode.Unwrap(v.n).(type) {
	case *ast.StringNode:
		return n.Value, nil
	case *ast.LiteralNode:
		return n.Value.Value, nil
	case *ast.AliasNode:
		return "", v.errorf("YAML aliases are not supported: write the value out")
	case *ast.NullNode, nil:
		return "", nil
	case ast.ScalarNode:
		return n.GetToken().Value, nil
	}
	return "", v.errorf("want a single value, got %s", yamlnode.Describe(v.n))
}

// integer is a whole number.
func (v node) integer() (int64, error) {
	if n, ok := yamlnode.Unwrap(v.n).(*ast.IntegerNode); ok {
		switch i := n.Value.(type) {
		case int64:
			return i, nil
		case uint64:
			if i <= math.MaxInt64 {
				return int64(i), nil
			}
		}
	}
	return 0, v.errorf("want a whole number, got %s", yamlnode.Describe(v.n))
}

// intOrName is a Kubernetes IntOrString, such as a port: 8080 or "http".
func (v node) intOrName() (int64, string, error) {
	if _, ok := yamlnode.Unwrap(v.n).(*ast.IntegerNode); ok {
		i, err := v.integer()
		return i, "", err
	}
	if _, ok := yamlnode.Unwrap(v.n).(*ast.StringNode); ok {
		s, err := v.str()
		return 0, s, err
	}
	return 0, "", v.errorf("want a number or a name, got %s", yamlnode.Describe(v.n))
}

// strings is a list of strings.
func (v node) strings() ([]string, error) {
	items, err := v.items()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, err := it.scalarStr()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// scalarStr is str that refuses a null, where a value must be given.
func (v node) scalarStr() (string, error) {
	if v.absent() {
		return "", v.errorf("no value")
	}
	return v.str()
}
