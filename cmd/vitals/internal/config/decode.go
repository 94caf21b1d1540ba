package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/yamlnode"
)

// A Decoder walks a parsed file and collects every error it finds, each with
// its position and path, instead of stopping at the first. A kind reads its
// block through one (see Kind): with Fields and the Values below, its errors
// read as every other part of the file's.
type Decoder struct {
	// layers are the files, as parsed: their names for errors, their
	// contents for positions inside a value. One but for a configuration
	// read in layers.
	layers []source
	// of says which layer each token is of, with more than one (where).
	of      map[*token.Token]int
	env     func(string) (string, bool)
	offline bool
	errors  Errors
	secrets []string // values to redact (package redact finds them): of secret-named variables, in URLs, in headers
}

// Offline reports whether the file is checked for another machine than
// this one (Options.Offline): what a value names on the machine that runs
// it, a command in $PATH or a working directory, is not looked for here.
func (d *Decoder) Offline() bool { return d.offline }

// Errorf records an error at node n for the value at path.
func (d *Decoder) Errorf(n ast.Node, path, format string, args ...any) {
	p := d.position(n)
	d.errors = append(d.errors, Error{File: p.File, Line: p.Line, Column: p.Column, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// ErrorfAt records an error at the byte at offset of text, the value of
// n (a scalar) as read, for the value at path: the column of what is wrong
// inside a value that has a syntax of its own (a metric check's
// condition). Where the file writes the value so that the byte cannot be
// pointed at (a folded block, a value whose ${VAR} was expanded), the error
// is where the value starts, and its message says the column in the value.
func (d *Decoder) ErrorfAt(n ast.Node, text string, offset int, path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	layer := d.where(n)
	line, col, exact := yamlnode.PositionAt(layer.src, n, offset)
	var written string // the value as the file writes it, ${VAR}s unexpanded
	switch v := yamlnode.Unwrap(n).(type) {
	case *ast.StringNode:
		written = v.Value
	case *ast.LiteralNode:
		written = v.Value.Value
	}
	if written != text {
		exact = false // expanded: the value's bytes are not the file's
		line, col = yamlnode.Position(n)
	}
	if !exact && offset >= 0 && offset <= len(text) {
		msg = fmt.Sprintf("column %d of the value: %s", utf8.RuneCountInString(text[:offset])+1, msg)
	}
	d.errors = append(d.errors, Error{File: layer.file, Line: line, Column: col, Path: path, Msg: msg})
}

// Failures is how many errors d has recorded: a reader compares it before
// and after a value to know whether the value was good.
func (d *Decoder) Failures() int { return len(d.errors) }

// secret records values that Config.Redact hides wherever they show, such
// as what redact.Env finds in a variable of the file's.
func (d *Decoder) secret(values ...string) { d.secrets = append(d.secrets, values...) }

// A Value reads one field's value into its destination, and says what it is
// for the reference (docs/reference/config.md) and the schema
// (docs/reference/vitals.schema.json).
type Value struct {
	// Type is what the value is, as the reference writes it: string,
	// duration, bool, list of strings, ...
	Type string
	// Read decodes n, found at path, into the destination, recording what
	// is wrong with d.
	Read func(d *Decoder, n ast.Node, path string)
	// Schema is what the value may be, in JSON Schema's words: everything
	// that Read accepts, and perhaps more, which Read refuses.
	Schema Schema
}

// A Field is one key of a mapping: how its value is read, and what the
// reference says of it.
type Field struct {
	Key string
	Value
	// Default is the value an absent field takes, as the reference writes
	// it; "" when absence means none (or the field is required).
	Default string
	// Described says that Default describes the value an absent field
	// takes rather than being one, as it depends on where vitals runs, on
	// the field's place or on the kind (api's, a hook's name, a check's
	// component-type): the schema has no default for the field, which an
	// editor would write in, and Doc says it.
	Described bool
	// Required says that the mapping must have the field, as Doc says: the
	// loader refuses one without it.
	Required bool
	// Doc says what the field is for, in a sentence or two.
	Doc string
	// Fields are the fields of a value that is a mapping of its own known
	// keys (amqp's ping), which Read reads: the reference lists them as
	// KEY.FIELD after the field, and the schema says the mapping from them,
	// in place of Schema. nil for any other value.
	Fields []Field
}

// Given holds the nodes of the fields a mapping gave, by key, for errors
// about them found after the mapping is read.
type Given map[string]ast.Node

// Fields decodes a mapping whose keys are known in advance: every key must
// be one of fields, at most once. It returns the nodes of the keys given,
// and whether n was a mapping.
func (d *Decoder) Fields(n ast.Node, path string, fields []Field) (Given, bool) {
	m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
	if !ok {
		d.Errorf(n, path, "want a mapping of %s, got %s", keyList(fields), yamlnode.Describe(n))
		return nil, false
	}
	given := Given{}
	for _, kv := range m.Values {
		key := yamlnode.KeyName(kv.Key)
		at := join(path, key)
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Key == key })
		_, seen := given[key]
		switch {
		case i < 0:
			d.Errorf(kv.Key, at, "unknown field %q (want %s)", key, keyList(fields))
		case seen:
			d.Errorf(kv.Key, at, "%q is given twice", key)
		default:
			given[key] = kv.Value
			fields[i].Read(d, kv.Value, at)
		}
	}
	return given, true
}

func keyList(fields []Field) string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.Key
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
func (d *Decoder) scalar(n ast.Node, path string) (string, bool) {
	switch v := yamlnode.Unwrap(n).(type) {
	case *ast.LiteralNode:
		return d.expand(v, path, v.Value.Value)
	case *ast.StringNode:
		return d.expand(v, path, v.Value)
	case *ast.NullNode, nil:
		d.Errorf(n, path, "no value: give one, or leave the field out")
		return "", false
	case *ast.AliasNode:
		d.Errorf(n, path, "YAML aliases are not supported here: write the value out")
		return "", false
	case ast.ScalarNode:
		return fmt.Sprint(v.GetValue()), true
	}
	d.Errorf(n, path, "want a single value, got %s", yamlnode.Describe(n))
	return "", false
}

// expand replaces ${VAR} with the variable's value; $$ is a literal $. An
// unset variable is an error: a check that silently probes "" is worse than
// none.
func (d *Decoder) expand(n ast.Node, path, s string) (string, bool) {
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
				d.Errorf(n, path, "%q: ${ without a closing }", s)
				return "", false
			}
			name := s[i+2 : i+end]
			if !validVar(name) {
				d.Errorf(n, path, "%q: ${%s} is not a variable name", s, name)
				ok = false
			} else if v, set := d.env(name); !set {
				d.Errorf(n, path, "environment variable %s is not set", name)
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

// String reads a string, with ${VAR} expanded; a password written in it as
// a URL's is a secret.
func String(dst *string) Value {
	return Value{"string", func(d *Decoder, n ast.Node, path string) {
		if s, ok := d.scalar(n, path); ok {
			*dst = s
			d.secret(redact.URL(s)...)
		}
	}, scalar}
}

// written is String for a value that is text even when YAML reads it as a
// number, such as a version: a number keeps its digits as the file writes
// them (1.10 is "1.10", not 1.1).
func written(dst *string) Value {
	return Value{"string", func(d *Decoder, n ast.Node, path string) {
		switch v := yamlnode.Unwrap(n).(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			*dst = v.GetToken().Value
			return
		}
		String(dst).Read(d, n, path)
	}, scalar}
}

// CString is String for a value the system takes as a C string, a path or a
// word of a command, in which a NUL byte would end it early or fail every
// run.
func CString(dst *string) Value {
	return Value{"string", func(d *Decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		switch {
		case !ok:
		case strings.IndexByte(s, 0) >= 0:
			d.Errorf(n, path, "has a NUL byte, which no path or command can hold")
		default:
			*dst = s
			d.secret(redact.URL(s)...)
		}
	}, scalar}
}

// Bool reads true or false.
func Bool(dst *bool) Value {
	return Value{"bool", func(d *Decoder, n ast.Node, path string) {
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
			d.Errorf(n, path, "want true or false, got %q", s)
		}
	}, boolSchema}
}

// Duration reads a Go duration ("10s", "500ms", "1m30s"), never negative.
func Duration(dst *time.Duration) Value {
	return Value{"duration", func(d *Decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		if !ok {
			return
		}
		v, err := time.ParseDuration(s)
		switch {
		case err != nil && isNumber(s):
			d.Errorf(n, path, "%q has no unit: write %ss (or ms, m, h)", s, s)
		case err != nil:
			d.Errorf(n, path, "%q is not a duration such as 10s, 500ms or 1m30s", s)
		case v < 0:
			d.Errorf(n, path, "%v is negative", v)
		default:
			*dst = v
		}
	}, durationSchema}
}

// positive is Duration for a value that must be more than 0; what names it
// in the error ("a timeout").
func positive(dst *time.Duration, what string) Value {
	return Value{"duration", func(d *Decoder, n ast.Node, path string) {
		mark := d.Failures()
		Duration(dst).Read(d, n, path)
		if d.Failures() == mark && *dst == 0 {
			d.Errorf(n, path, "0s: give %s of more than 0", what)
		}
	}, durationSchema}
}

func isNumber(s string) bool {
	_, err := fmt.Sscanf(s, "%g", new(float64))
	return err == nil && strings.Trim(s, "0123456789.") == ""
}

// count reads a whole number of at least 1.
func count(dst *int) Value { return Whole(dst, 1, math.MaxInt32) }

// Whole reads a whole number from least to most, written as a number or
// quoted ("3", as Helm's quote writes it).
func Whole(dst *int, least, most int) Value {
	return Value{"integer", func(d *Decoder, n ast.Node, path string) {
		s, ok := d.scalar(n, path)
		if !ok {
			return
		}
		var v int64
		if _, err := fmt.Sscanf(s, "%d", &v); err != nil || fmt.Sprint(v) != s {
			d.Errorf(n, path, "want a whole number, got %q", s)
			return
		}
		if v < int64(least) {
			d.Errorf(n, path, "%d is not at least %d", v, least)
			return
		}
		if v > int64(most) {
			d.Errorf(n, path, "%d is too large: at most %d", v, most)
			return
		}
		*dst = int(v)
	}, wholeNumber(least, most)}
}

// Count reads a whole number of at least 1, for a field of a kind.
func Count(dst *int) Value { return count(dst) }

// Strings reads a list of strings; a single string is a list of one.
func Strings(dst *[]string) Value {
	return Value{"list of strings", list(dst, func(d *Decoder, n ast.Node, path string) (string, bool) { return d.scalar(n, path) }), stringsSchema}
}

// cStrings is Strings for words of a command: each a CString.
func cStrings(dst *[]string) Value {
	return Value{"list of strings", list(dst, func(d *Decoder, n ast.Node, path string) (string, bool) {
		mark := d.Failures()
		var s string
		CString(&s).Read(d, n, path)
		return s, d.Failures() == mark
	}), stringsSchema}
}

// list reads a list of strings, each with item; a single string is a list
// of one.
func list(dst *[]string, item func(d *Decoder, n ast.Node, path string) (string, bool)) func(d *Decoder, n ast.Node, path string) {
	return func(d *Decoder, n ast.Node, path string) {
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

// oneOf reads a string that must be one of words, which the error lists in
// their order.
func oneOf(dst *string, words ...string) Value {
	return Value{"string", func(d *Decoder, n ast.Node, path string) {
		v, ok := d.scalar(n, path)
		switch {
		case !ok:
		case slices.Contains(words, v):
			*dst = v
		default:
			last := len(words) - 1
			d.Errorf(n, path, "want %s or %s, got %q", strings.Join(words[:last], ", "), words[last], v)
		}
	}, enum(words...)}
}

// Argv reads a command as a list of words: there is no shell to split one.
func Argv(dst *[]string) Value {
	return Value{"list of strings", func(d *Decoder, n ast.Node, path string) {
		if _, ok := yamlnode.Unwrap(n).(*ast.SequenceNode); !ok {
			s, ok := d.scalar(n, path)
			if ok {
				d.Errorf(n, path, "want a list of words, such as [%s], not %q: no shell splits it (for a shell, [sh, -c, \"…\"])",
					strings.Join(strings.Fields(s), ", "), s)
			}
			return
		}
		cStrings(dst).Read(d, n, path)
	}, argvSchema}
}

// stringMap reads a mapping of names to strings, each value a string or a
// list of them (a header given twice).
func stringMap(dst *map[string][]string) func(d *Decoder, n ast.Node, path string) {
	return func(d *Decoder, n ast.Node, path string) {
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			d.Errorf(n, path, "want a mapping of names to values, got %s", yamlnode.Describe(n))
			return
		}
		out := map[string][]string{}
		for _, kv := range m.Values {
			key := yamlnode.KeyName(kv.Key)
			var vs []string
			Strings(&vs).Read(d, kv.Value, join(path, key))
			out[key] = append(out[key], vs...)
		}
		*dst = out
	}
}

// Headers reads HTTP headers: a mapping of header names to a value or a
// list of them. Each name is a token, no value has a line break or a NUL,
// and the credentials they carry are secrets (see redact.Header), whole and
// their last word (the token after "Bearer "), so that Redact hides them
// wherever they show. Values are never quoted in errors.
func Headers(dst *map[string][]string) Value {
	return Value{"mapping of names to strings", func(d *Decoder, n ast.Node, path string) {
		stringMap(dst)(d, n, path)
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			return // stringMap said so
		}
		for _, kv := range m.Values {
			name := yamlnode.KeyName(kv.Key)
			if !headerName(name) {
				d.Errorf(kv.Key, join(path, name), "%q is not a header name", name)
				continue
			}
			for _, v := range (*dst)[name] {
				if strings.ContainsAny(v, "\r\n\x00") {
					d.Errorf(kv.Value, join(path, name), "the value has a line break or a NUL, which a header cannot carry")
				}
				d.secret(redact.Header(name, v)...)
			}
		}
	}, Schema{"type": "object", "propertyNames": headerNameSchema, "additionalProperties": stringsSchema}}
}

// headerName reports whether s is an HTTP header name: a token.
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// Environment reads the variables of a command's environment as
// NAME=VALUE, sorted by name: a mapping of variable names to a value or a
// list of them. Each name is a variable's name (no = in it), no value has a
// NUL byte, which no environment can hold, and the values of secret-named
// variables are secrets (redact.Env). What is wrong is left out.
func Environment(dst *[]string) Value {
	return Value{"mapping of names to strings", func(d *Decoder, n ast.Node, path string) {
		var env map[string][]string
		stringMap(&env)(d, n, path)
		m, ok := yamlnode.Unwrap(n).(*ast.MappingNode)
		if !ok {
			return // stringMap said so
		}
		for _, kv := range m.Values {
			key := yamlnode.KeyName(kv.Key)
			switch {
			case !validVar(key):
				d.Errorf(kv.Key, join(path, key), "%q is not a variable name", key)
				delete(env, key)
			case slices.ContainsFunc(env[key], func(v string) bool { return strings.IndexByte(v, 0) >= 0 }):
				d.Errorf(kv.Value, join(path, key), "has a NUL byte, which no environment can hold")
				delete(env, key)
			}
		}
		*dst = nil
		for _, k := range slices.Sorted(maps.Keys(env)) {
			for _, v := range env[k] {
				d.secret(redact.Env(k, v)...)
				*dst = append(*dst, k+"="+v)
			}
		}
	}, Schema{"type": "object", "propertyNames": variableSchema, "additionalProperties": stringsSchema}}
}
