package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
)

// decoder walks a parsed file and collects every error it finds, each with
// its position and path, instead of stopping at the first.
type decoder struct {
	file    string
	env     func(string) (string, bool)
	errors  Errors
	secrets []string // values to redact (package redact finds them): of secret-named variables, in URLs, in headers
}

// errorf records an error at node n for the value at path.
func (d *decoder) errorf(n ast.Node, path, format string, args ...any) {
	line, col := yamlnode.Position(n)
	d.errors = append(d.errors, Error{File: d.file, Line: line, Column: col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// field decodes one value found at path into its destination.
type field func(d *decoder, n ast.Node, path string)

// fields decodes a mapping whose keys are known in advance: every key must be
// one of fields, at most once. It reports whether n was a mapping.
func (d *decoder) fields(n ast.Node, path string, fields map[string]field) bool {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		d.errorf(n, path, "want a mapping of %s, got %s", keyList(fields), yamlnode.Describe(n))
		return false
	}
	seen := map[string]bool{}
	for _, kv := range m.Values {
		key := yamlnode.KeyName(kv.Key)
		at := join(path, key)
		f, known := fields[key]
		switch {
		case !known:
			d.errorf(kv.Key, at, "unknown field %q (want %s)", key, keyList(fields))
		case seen[key]:
			d.errorf(kv.Key, at, "%q is given twice", key)
		default:
			seen[key] = true
			f(d, kv.Value, at)
		}
	}
	return true
}

func keyList[V any](fields map[string]V) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// scalar returns a scalar's text with ${VAR} expanded, or records an error.
func (d *decoder) scalar(n ast.Node, path string) (string, bool) {
	switch v := yamlnode.Unwrap(n).(type) {
	case *ast.LiteralNode:
		return d.expand(v, path, v.Value.Value)
	case *ast.StringNode:
		return d.expand(v, path, v.Value)
	case *ast.NullNode, nil:
		d.errorf(n, path, "no value: give one, or leave the field out")
		return "", false
	case *ast.AliasNode:
		d.errorf(n, path, "YAML aliases are not supported here: write the value out")
		return "", false
	case ast.ScalarNode:
		return fmt.Sprint(v.GetValue()), true
	}
	d.errorf(n, path, "want a single value, got %s", yamlnode.Describe(n))
	return "", false
}

// expand replaces ${VAR} with the variable's value; $$ is a literal $. An
// unset variable is an error: a check that silently probes "" is worse than
// none.
func (d *decoder) expand(n ast.Node, path, s string) (string, bool) {
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			b.WriteByte('$')
			i++
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				d.errorf(n, path, "%q: ${ without a closing }", s)
				return "", false
			}
			name := s[i+2 : i+end]
			if !validVar(name) {
				d.errorf(n, path, "%q: ${%s} is not a variable name", s, name)
				ok = false
			} else if v, set := d.env(name); !set {
				d.errorf(n, path, "environment variable %s is not set", name)
				ok = false
			} else {
				d.secrets = append(d.secrets, redact.Env(name, v)...)
				b.WriteString(v)
			}
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ok
}

func validVar(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func str(dst *string) field {
	return func(d *decoder, n ast.Node, path string) {
		if s, ok := d.scalar(n, path); ok {
			*dst = s
			d.secrets = append(d.secrets, redact.URL(s)...)
		}
	}
}

// cstr is str for a value the system takes as a C string, a path or a word
// of a command, in which a NUL byte would end it early or fail every run.
func cstr(dst *string) field {
	return func(d *decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		switch {
		case !ok:
		case strings.IndexByte(s, 0) >= 0:
			d.errorf(n, path, "has a NUL byte, which no path or command can hold")
		default:
			*dst = s
			d.secrets = append(d.secrets, redact.URL(s)...)
		}
	}
}

func boolean(dst *bool) field {
	return func(d *decoder, n ast.Node, path string) {
		if b, ok := yamlnode.Unwrap(n).(*ast.BoolNode); ok {
			*dst = b.Value
			return
		}
		s, ok := d.scalar(n, path)
		switch {
		case !ok:
		case s == "true":
			*dst = true
		case s == "false":
			*dst = false
		default:
			d.errorf(n, path, "want true or false, got %q", s)
		}
	}
}

// duration reads a Go duration ("10s", "500ms", "1m30s"), never negative.
func duration(dst *time.Duration) field {
	return func(d *decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		if !ok {
			return
		}
		v, err := time.ParseDuration(s)
		switch {
		case err != nil && isNumber(s):
			d.errorf(n, path, "%q has no unit: write %ss (or ms, m, h)", s, s)
		case err != nil:
			d.errorf(n, path, "%q is not a duration such as 10s, 500ms or 1m30s", s)
		case v < 0:
			d.errorf(n, path, "%v is negative", v)
		default:
			*dst = v
		}
	}
}

func isNumber(s string) bool {
	_, err := fmt.Sscanf(s, "%g", new(float64))
	return err == nil && strings.Trim(s, "0123456789.") == ""
}

// count reads a whole number of at least 1.
func count(dst *int) field {
	return func(d *decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		if !ok {
			return
		}
		var v int64
		if _, err := fmt.Sscanf(s, "%d", &v); err != nil || fmt.Sprint(v) != s {
			d.errorf(n, path, "want a whole number, got %q", s)
			return
		}
		if v < 1 {
			d.errorf(n, path, "%d is not at least 1", v)
			return
		}
		if v > math.MaxInt32 {
			d.errorf(n, path, "%d is too large: at most %d", v, math.MaxInt32)
			return
		}
		*dst = int(v)
	}
}

// strs reads a list of strings; a single string is a list of one.
func strs(dst *[]string) field {
	return list(dst, func(d *decoder, n ast.Node, path string) (string, bool) { return d.scalar(n, path) })
}

// cstrs is strs for words of a command: each a cstr.
func cstrs(dst *[]string) field {
	return list(dst, func(d *decoder, n ast.Node, path string) (string, bool) {
		mark := len(d.errors)
		var s string
		cstr(&s)(d, n, path)
		return s, len(d.errors) == mark
	})
}

// list reads a list of strings, each with item; a single string is a list
// of one.
func list(dst *[]string, item func(d *decoder, n ast.Node, path string) (string, bool)) field {
	return func(d *decoder, n ast.Node, path string) {
		seq, ok := yamlnode.Unwrap(n).(*ast.SequenceNode)
		if !ok {
			if s, ok := item(d, n, path); ok {
				*dst = []string{s}
			}
			return
		}
		out := make([]string, 0, len(seq.Values))
		for i, v := range seq.Values {
			if s, ok := item(d, v, fmt.Sprintf("%s[%d]", path, i)); ok {
				out = append(out, s)
			}
		}
		*dst = out
	}
}

// stringMap reads a mapping of names to strings, each value a string or a
// list of them (a header given twice).
func stringMap(dst *map[string][]string) field {
	return func(d *decoder, n ast.Node, path string) {
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			d.errorf(n, path, "want a mapping of names to values, got %s", yamlnode.Describe(n))
			return
		}
		out := map[string][]string{}
		for _, kv := range m.Values {
			key := yamlnode.KeyName(kv.Key)
			var vs []string
			strs(&vs)(d, kv.Value, join(path, key))
			out[key] = append(out[key], vs...)
		}
		*dst = out
	}
}
