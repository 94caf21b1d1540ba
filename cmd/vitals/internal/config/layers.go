package config

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
)

// A configuration may be read in layers, as Pebble reads its layers: files
// read in order, each later one merged over those before it. Each layer is
// parsed on its own; their top mappings are merged into one (merge below)
// and that one is decoded as a file is, so that what refers to what (a
// check's service, a service's after) is judged on the whole, and every
// error is said where a layer writes the value, in that layer's file.
//
// How a later layer merges over the earlier ones:
//   - checks: and services: merge entry by entry, by name. An entry whose
//     name no earlier layer gives is added; one that an earlier layer gives
//     must say override: merge (its fields merge over the earlier entry's)
//     or override: replace (it is the whole entry), as Pebble's layers do.
//     An entry of override: replace alone removes the earlier entry.
//   - service: is one entry, merged or replaced in the same way.
//   - Every other key (listen, api, tls, hooks, kubernetes, ...) is the
//     later layer's whole: its value replaces the earlier one's.
//
// Where an entry merges, mappings merge key by key, as Pebble merges a
// service's environment and an http check's headers; a list or a single
// value replaces the earlier one, but for a service's after, before and
// requires, whose names add up, as Pebble's do. A check's kind stays: a
// merge that gives another kind is an error (override: replace changes it).

// What an entry's override may say: Pebble's words.
const (
	OverrideMerge   = "merge"   // the entry's fields merge over the earlier layer's entry
	OverrideReplace = "replace" // the entry is the whole entry; alone, it removes the earlier one
)

// overrideField is the override of a check's or a service's entry, which
// only the merge of layers reads.
func overrideField(what string) Field {
	var s string
	return Field{Key: "override", Value: oneOf(&s, OverrideMerge, OverrideReplace),
		Doc: "How this " + what + " merges over the " + what + " of the same name in an earlier layer, when vitals reads several files (-c given more than once, or a directory): " +
			"merge (the fields given here merge over the earlier ones) or replace (this entry is the whole " + what + "; override: replace and nothing else removes it). " +
			"Needed only where an earlier layer gives the name; a file read alone needs none."}
}

// LayerSuffixes are the ends of the names of the files that a directory
// given as a layer holds: Pebble's layers are .yaml, and a ConfigMap's
// keys are often .yml.
var LayerSuffixes = []string{".yaml", ".yml"}

// LayerFiles are the files that paths name, in the order they are read:
// a file as it is named, and a directory's files whose names end in one of
// LayerSuffixes, in name order (as Pebble reads 001-base.yaml before
// 002-app.yaml), but those whose names start with a dot (a ConfigMap's
// ..data, an editor's swap file). A directory's directories are not read.
// A directory with no such file is an error: it would start with nothing.
func LayerFiles(paths []string) ([]string, error) {
	var files []string
	for _, path := range paths {
		if path == "-" {
			files = append(files, path)
			continue
		}
		fi, err := os.Stat(path)
		if err != nil || !fi.IsDir() {
			// A file, or what cannot be read: opening it says why.
			files = append(files, path)
			continue
		}
		entries, err := os.ReadDir(path) // sorted by name
		if err != nil {
			return nil, fmt.Errorf("read configuration: %w", err)
		}
		n := len(files)
		for _, e := range entries {
			name := e.Name()
			if !IsLayerName(name) {
				continue
			}
			file := filepath.Join(path, name)
			if fi, err := os.Stat(file); err == nil && fi.IsDir() {
				continue
			}
			files = append(files, file)
		}
		if len(files) == n {
			return nil, fmt.Errorf("read configuration: %s has no %s file to read", path, strings.Join(LayerSuffixes, " or "))
		}
	}
	if i := slices.Index(files, "-"); i >= 0 && slices.Contains(files[i+1:], "-") {
		return nil, fmt.Errorf("read configuration: - (stdin) is given twice: it can be read once")
	}
	return files, nil
}

// IsLayerName says whether a file named name (a base name) in a directory
// given as a layer is one of its layers (LayerFiles).
func IsLayerName(name string) bool {
	return !strings.HasPrefix(name, ".") && slices.ContainsFunc(LayerSuffixes, func(s string) bool { return strings.HasSuffix(name, s) })
}

// Position is where a layer gives a value: its file, line and column.
type Position struct {
	File         string
	Line, Column int
}

// String is FILE:LINE.
func (p Position) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// source is one layer as the decoder reads it.
type source struct {
	file string
	src  []byte
}

// where is the layer that n is of: its file and its contents, for the
// positions of errors. A node of no layer's (nil) is the first layer's.
func (d *Decoder) where(n ast.Node) source {
	if d.of == nil || n == nil {
		return d.layers[0]
	}
	if tok := n.GetToken(); tok != nil {
		if i, ok := d.of[tok]; ok {
			return d.layers[i]
		}
	}
	return d.layers[0]
}

// position is where n is: its layer's file, its line and column.
func (d *Decoder) position(n ast.Node) Position {
	line, col := yamlnode.Position(n)
	return Position{File: d.where(n).file, Line: line, Column: col}
}

// rank orders errors by layer, then by line and column in it.
func (d *Decoder) rank(a, b Error) int {
	layer := func(file string) int {
		return slices.IndexFunc(d.layers, func(s source) bool { return s.file == file })
	}
	return cmp.Or(cmp.Compare(layer(a.File), layer(b.File)), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
}

// tokens records which layer each node of body is of (Decoder.of).
type tokens struct {
	of    map[*token.Token]int
	layer int
}

func (t tokens) Visit(n ast.Node) ast.Visitor {
	if tok := n.GetToken(); tok != nil {
		t.of[tok] = t.layer
	}
	return t
}

// merging is the merge of the layers' top mappings into one.
type merging struct {
	d     *Decoder
	kinds Kinds
	// from is, for each pair the merge made anew, the pairs of the layers
	// that made it, in their order: where --print says its value comes from.
	from map[*ast.MappingValueNode][]*ast.MappingValueNode
}

// pairs is a mapping being merged: its pairs in order, by key.
type pairs struct {
	list  []*ast.MappingValueNode // nil where a pair was removed
	index map[string]int
}

func (p *pairs) get(key string) *ast.MappingValueNode {
	if i, ok := p.index[key]; ok {
		return p.list[i]
	}
	return nil
}

// set puts kv at key's place, or adds it last.
func (p *pairs) set(key string, kv *ast.MappingValueNode) {
	if i, ok := p.index[key]; ok && p.list[i] != nil {
		p.list[i] = kv
		return
	}
	p.index[key] = len(p.list)
	p.list = append(p.list, kv)
}

func (p *pairs) remove(key string) {
	if i, ok := p.index[key]; ok {
		p.list[i] = nil
		delete(p.index, key)
	}
}

// pairsOf reads a mapping's pairs.
func pairsOf(m *ast.MappingNode) *pairs {
	p := &pairs{index: map[string]int{}}
	if m != nil {
		for _, kv := range m.Values {
			p.set(yamlnode.KeyName(kv.Key), kv)
		}
	}
	return p
}

// mapping is p as a mapping, its position start's.
func (p *pairs) mapping(start *token.Token) *ast.MappingNode {
	m := &ast.MappingNode{BaseNode: &ast.BaseNode{}, Start: start}
	for _, kv := range p.list {
		if kv != nil {
			m.Values = append(m.Values, kv)
		}
	}
	return m
}

// merge merges the layers' bodies, in order, into one top mapping. A body
// that is not a mapping is an error, and left out; nil when none is one.
func (g *merging) merge(bodies []ast.Node) ast.Node {
	var top *pairs
	var start *token.Token
	for _, body := range bodies {
		m, ok := yamlnode.Unwrap(body).(*ast.MappingNode)
		if !ok {
			g.d.Errorf(body, "", "want a mapping of %s, got %s", keyList(topFields(&Config{}, new(ast.Node))), yamlnode.Describe(body))
			continue
		}
		if top == nil {
			top, start = pairsOf(m), m.GetToken()
			continue
		}
		for _, kv := range m.Values {
			key := yamlnode.KeyName(kv.Key)
			was := top.get(key)
			switch {
			case was == nil && (key == "checks" || key == "services"):
				top.set(key, g.noneBefore(kv, key))
			case was == nil:
				top.set(key, kv)
			case key == "checks" || key == "services":
				top.set(key, g.entries(was, kv, key))
			case key == "service":
				if e := g.entry(was, kv, key, false); e != nil {
					top.set(key, e)
				} else {
					top.remove(key)
				}
			default:
				top.set(key, kv) // the later layer's whole
			}
		}
	}
	if top == nil {
		return nil
	}
	return top.mapping(start)
}

// entries merges a later layer's checks: or services:, kv, over was, entry
// by entry.
func (g *merging) entries(was, kv *ast.MappingValueNode, section string) *ast.MappingValueNode {
	earlier, ok1 := yamlnode.Unwrap(was.Value).(*ast.MappingNode)
	later, ok2 := yamlnode.Unwrap(kv.Value).(*ast.MappingNode)
	if !ok1 || !ok2 {
		return kv // not mappings: the decoder says what is wrong with the later one
	}
	what := map[string]string{"checks": "a check", "services": "a service"}[section]
	p := pairsOf(earlier)
	for _, e := range later.Values {
		name := yamlnode.KeyName(e.Key)
		before := p.get(name)
		if before == nil {
			if removes(e.Value) {
				g.d.Errorf(e.Key, section+"."+name, "override: replace alone removes %s of an earlier layer, and none has %s", what, name)
				continue
			}
			p.set(name, e)
			continue
		}
		if merged := g.entry(before, e, section+"."+name, section == "checks"); merged != nil {
			p.set(name, merged)
		} else {
			p.remove(name)
		}
	}
	return g.pair(kv, p.mapping(earlier.GetToken()), was, kv)
}

// noneBefore is a later layer's checks: or services:, which no earlier
// layer gives: each entry is new, and one that removes is an error.
func (g *merging) noneBefore(kv *ast.MappingValueNode, section string) *ast.MappingValueNode {
	later, ok := yamlnode.Unwrap(kv.Value).(*ast.MappingNode)
	if !ok {
		return kv // not a mapping: the decoder says what is wrong with it
	}
	what := map[string]string{"checks": "a check", "services": "a service"}[section]
	kept := later.Values[:0:0]
	for _, e := range later.Values {
		name := yamlnode.KeyName(e.Key)
		if removes(e.Value) {
			g.d.Errorf(e.Key, section+"."+name, "override: replace alone removes %s of an earlier layer, and none has %s", what, name)
			continue
		}
		kept = append(kept, e)
	}
	later.Values = kept
	return kv
}

// override is what an entry's override: says: OverrideMerge,
// OverrideReplace, "" when it says none, or "?" for another word, which
// the decoder refuses.
func override(n ast.Node) string {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		return ""
	}
	for _, kv := range m.Values {
		if yamlnode.KeyName(kv.Key) == "override" {
			if s, ok := yamlnode.Unwrap(kv.Value).(*ast.StringNode); ok && (s.Value == OverrideMerge || s.Value == OverrideReplace) {
				return s.Value
			}
			return "?"
		}
	}
	return ""
}

// removes says whether an entry is override: replace alone: no entry in
// the earlier one's place.
func removes(n ast.Node) bool {
	return override(n) == OverrideReplace && len(yamlnode.Unwrap(n).(*ast.MappingNode).Values) == 1
}

// entry merges kv, a later layer's entry at path, over was, an earlier
// layer's of the same name, as its override: says; nil when it removes it.
// check says that the entry is a check's, whose kind a merge keeps.
func (g *merging) entry(was, kv *ast.MappingValueNode, path string, check bool) *ast.MappingValueNode {
	switch {
	case override(kv.Value) == "":
		g.d.Errorf(kv.Key, path, "an earlier layer gives it too (%s): say override: merge (this layer gives what changes) or override: replace (this layer gives it whole)",
			g.d.position(was.Key))
		return kv
	case removes(kv.Value):
		return nil
	case override(kv.Value) == OverrideReplace:
		return kv
	}
	// merge, or a word the decoder refuses: merged, so that the refusal is
	// not followed by errors of what the entry would lack alone.
	earlier, ok := yamlnode.Unwrap(was.Value).(*ast.MappingNode)
	if !ok {
		return kv // the earlier layer's is wrong, and said so: nothing to merge
	}
	later := yamlnode.Unwrap(kv.Value).(*ast.MappingNode)
	if check {
		g.keepKind(earlier, later, path)
	}
	return g.pair(kv, g.mappings(earlier, later, path), was, kv)
}

// keepKind drops from later, a check's entry that merges over earlier, a
// kind other than earlier's, and says so: a check has one kind.
func (g *merging) keepKind(earlier, later *ast.MappingNode, path string) {
	var kind string
	for _, kv := range earlier.Values {
		if k := yamlnode.KeyName(kv.Key); g.isKind(k) {
			kind = k
		}
	}
	if kind == "" {
		return
	}
	kept := later.Values[:0:0]
	for _, kv := range later.Values {
		if k := yamlnode.KeyName(kv.Key); g.isKind(k) && k != kind {
			g.d.Errorf(kv.Key, path+"."+k, "override: merge keeps the check's kind (%s): give override: replace for a check of another kind", kind)
			continue
		}
		kept = append(kept, kv)
	}
	later.Values = kept
}

func (g *merging) isKind(key string) bool {
	_, ok := g.kinds.Kind(key)
	return ok
}

// isServiceEntry says whether path is a service's own (service, or
// services.NAME), not a mapping within it (its env).
func isServiceEntry(path string) bool {
	name, ok := strings.CutPrefix(path, "services.")
	return path == "service" || ok && !strings.Contains(name, ".")
}

// appended are the keys of a service whose lists add up when a layer
// merges over another, as Pebble's do.
var appended = []string{"after", "before", "requires"}

// mappings merges later over earlier, key by key: two mappings merge, a
// service's ordering lists add up, and any other value of later replaces
// earlier's.
func (g *merging) mappings(earlier, later *ast.MappingNode, path string) *ast.MappingNode {
	p := pairsOf(earlier)
	for _, kv := range later.Values {
		key := yamlnode.KeyName(kv.Key)
		was := p.get(key)
		if was == nil {
			p.set(key, kv)
			continue
		}
		a, ok1 := yamlnode.Unwrap(was.Value).(*ast.MappingNode)
		b, ok2 := yamlnode.Unwrap(kv.Value).(*ast.MappingNode)
		switch {
		case ok1 && ok2:
			p.set(key, g.pair(kv, g.mappings(a, b, join(path, key)), was, kv))
		case slices.Contains(appended, key) && isServiceEntry(path):
			p.set(key, g.pair(kv, items(was.Value, kv.Value), was, kv))
		default:
			p.set(key, kv)
		}
	}
	return p.mapping(earlier.GetToken())
}

// items is a list of a's items and then b's, each a list or a single value.
func items(a, b ast.Node) ast.Node {
	s := &ast.SequenceNode{BaseNode: &ast.BaseNode{}, Start: b.GetToken()}
	for _, n := range []ast.Node{a, b} {
		if seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode); ok {
			s.Values = append(s.Values, seq.Values...)
		} else {
			s.Values = append(s.Values, n)
		}
	}
	return s
}

// pair is a pair the merge made, of kv's key and value, from the pairs of
// the layers that made it (earlier's, then later's).
func (g *merging) pair(kv *ast.MappingValueNode, value ast.Node, earlier, later *ast.MappingValueNode) *ast.MappingValueNode {
	out := &ast.MappingValueNode{BaseNode: &ast.BaseNode{}, Start: kv.Start, Key: kv.Key, Value: value}
	g.from[out] = slices.Concat(g.sources(earlier), g.sources(later))
	return out
}

// sources are the layers' pairs that made kv: kv itself, when the merge
// took it whole.
func (g *merging) sources(kv *ast.MappingValueNode) []*ast.MappingValueNode {
	if from, ok := g.from[kv]; ok {
		return from
	}
	return []*ast.MappingValueNode{kv}
}

// origins says, for each key of the merged mappings, by its path (as
// errors write it: checks.web.period), where the layers give its value:
// one place, or several for a mapping that merged.
func (g *merging) origins(top ast.Node) map[string][]Position {
	out := map[string][]Position{}
	var walk func(n ast.Node, path string)
	walk = func(n ast.Node, path string) {
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			return
		}
		for _, kv := range m.Values {
			at := join(path, yamlnode.KeyName(kv.Key))
			for _, s := range g.sources(kv) {
				out[at] = append(out[at], g.d.position(s.Key))
			}
			walk(kv.Value, at)
		}
	}
	walk(top, "")
	return out
}
