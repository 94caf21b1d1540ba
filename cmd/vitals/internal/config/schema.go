package config

import (
	"strings"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/signals"
	"github.com/vitals-dev/vitals/health"
)

// SchemaURL is where vitals.yaml's JSON Schema is published: the file
// docs/reference/vitals.schema.json of the repository's main branch, which
// a test keeps in step with the fields below and the table of kinds. The
// schema only says what is in the file; it is not versioned with releases,
// as main's accepts every key a release reads until one is removed.
const SchemaURL = "https://raw.githubusercontent.com/vitals-dev/vitals/main/docs/reference/vitals.schema.json"

// SchemaComment is the first line of the files vitals writes (vitals import,
// vitals validate --print) and of the examples: it tells an editor that
// runs yaml-language-server (VS Code's YAML extension, Neovim, Helix, ...)
// which schema to check the file with, so that it completes keys and marks
// what is wrong as it is typed.
const SchemaComment = "# yaml-language-server: $schema=" + SchemaURL

// Schema says what a value may be, in the keywords of JSON Schema (draft
// 2020-12): type, pattern, enum, items and the like. The schema of
// vitals.yaml (docs/reference/vitals.schema.json) is written from the
// Schemas of the Values of every section's fields and every kind's, with
// each field's Doc and Default. A mapping of known keys refers to its
// section (Ref). The schema says less than the loader, never more: where it
// cannot say a rule, the loader still decides. Schemas are shared: never
// change one in place.
type Schema map[string]any

// Ref is the schema of a mapping whose fields are those of the section at
// path: a reference to the section's definition, which Def names.
func Ref(path string) Schema { return Schema{"$ref": "#/$defs/" + Def(path)} }

// Def is the name of the definition of the section at path in the schema:
// the path, with a list's items ([]) written .N, as a reference's fragment
// may not hold brackets.
func Def(path string) string { return strings.ReplaceAll(path, "[]", ".N") }

// The schemas of the Values of decode.go.
var (
	// scalar is a single value: the loader reads a number or a boolean
	// where it wants text as the text it is written as (status: 200).
	scalar = Schema{"type": []string{"string", "number", "boolean"}}
	// expansion is a value with a ${VAR} in it, which the loader expands
	// before it reads it as its field wants: the schema leaves it to the
	// loader.
	expansion = Schema{"type": "string", "pattern": `\$\{`}
	// durationSchema is a Go duration (time.ParseDuration), never negative,
	// or 0, which YAML reads as a number.
	durationSchema = expandable(Schema{"type": "string",
		"pattern":             `^\+?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`,
		"patternErrorMessage": "a duration such as 10s, 500ms or 1m30s"}, Schema{"const": 0})
	// boolSchema is true or false, or either quoted, which the loader reads
	// alike (Helm's quote writes "true").
	boolSchema    = expandable(Schema{"type": "boolean"}, Schema{"enum": []string{"true", "false"}})
	stringsSchema = Schema{"anyOf": []Schema{scalar, {"type": "array", "items": scalar}}}
	// argvSchema is a command as a list of words; a string is refused, as
	// no shell splits it.
	argvSchema = Schema{"type": "array", "items": scalar, "minItems": 1}
	// nameSchema is a name of a check or a hook: health.ValidName, whose
	// bound is 63 characters, a DNS label's.
	nameSchema = Schema{"type": "string", "pattern": `^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$`, "maxLength": 63,
		"patternErrorMessage": "lower case letters, digits and - _ . inside, at most 63 characters"}
	// variableSchema is a variable's name, as validVar has it.
	variableSchema = Schema{"type": "string", "pattern": `^[A-Za-z_][A-Za-z0-9_]*$`}
	// headerNameSchema is a header's name, a token (headerName).
	headerNameSchema = Schema{"type": "string", "pattern": "^[-!#$%&'*+.^_`|~0-9A-Za-z]+$"}
)

// expandable is a value of one of schemas, or with a ${VAR} in it.
func expandable(schemas ...Schema) Schema {
	return Schema{"anyOf": append(schemas, expansion)}
}

// enum is a string among words, or with a ${VAR} in it.
func enum(words ...string) Schema { return expandable(Schema{"enum": words}) }

// levelSchema is a check's level, as health.ParseLevel reads it: alive is
// Pebble's name of live.
var levelSchema = enum(health.Startup.String(), health.Live.String(), health.Ready.String(), "alive")

// componentTypeSchema is a check's component type, as
// health.Check.Validate takes it: one of the IETF draft's, or an absolute
// URI (a scheme, then more, no space).
var componentTypeSchema = expandable(
	Schema{"enum": []string{health.ComponentTypeComponent, health.ComponentTypeDatastore, health.ComponentTypeSystem}},
	Schema{"type": "string", "pattern": `^[A-Za-z][-A-Za-z0-9+.]*:\S+$`})

// signalSchema is a signal's name, as signals.ParseSignal reads it: SIGTERM,
// or TERM.
func signalSchema() Schema {
	var names []string
	for _, name := range signals.Names() {
		names = append(names, name, strings.TrimPrefix(name, "SIG"))
	}
	return enum(names...)
}

// wholeNumber is an integer from least to most, or one quoted ("3", as
// Helm's quote writes it), which the loader reads alike; a quoted one's
// bounds are the loader's to say.
func wholeNumber(least, most int) Schema {
	return expandable(Schema{"type": "integer", "minimum": least, "maximum": most},
		Schema{"type": "string", "pattern": `^-?[0-9]+$`})
}
