//go:build !vitals_probe

package kinds_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/schematest"
)

// schema writes docs/reference/vitals.schema.json: every key of the file,
// from config's sections and the table of kinds, as the reference has them,
// in JSON Schema (draft 2020-12).
func schema() ([]byte, error) {
	sections := config.Sections()
	defs := config.Schema{}
	var root config.Schema
	for _, s := range sections {
		o, err := object(s.Path, s.Fields, s.Rules)
		if err != nil {
			return nil, err
		}
		if s.Path == "checks.NAME" {
			if err := addKinds(o); err != nil {
				return nil, err
			}
		}
		if s.Path == "" {
			root = o
			continue
		}
		o["title"], o["description"] = s.Path, description(s.Doc)
		defs[config.Def(s.Path)] = o
	}
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = config.SchemaURL
	root["title"] = "vitals.yaml"
	root["description"] = "The configuration of vitals run and vitals validate. Generated from the table of kinds and config's fields, " +
		"as docs/reference/config.md is; ${VAR} expands from the environment in any value, which the schema leaves to vitals validate."
	root["$defs"] = defs
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// object is the schema of a mapping of fields and no other key, with rules
// added: each field's Schema with its Doc and its Default.
func object(path string, fields []config.Field, rules config.Schema) (config.Schema, error) {
	props := config.Schema{}
	var required []string
	for _, f := range fields {
		var p config.Schema
		switch {
		case f.Fields != nil:
			o, err := object(path+"."+f.Key, f.Fields, nil)
			if err != nil {
				return nil, err
			}
			p = o
		case f.Schema == nil:
			return nil, fmt.Errorf("%s.%s: its value has no schema", path, f.Key)
		default:
			p = maps.Clone(f.Schema)
		}
		p["description"] = description(f.Doc)
		if f.Default != "" && !f.Described {
			def, err := defaultValue(f)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", path, f.Key, err)
			}
			p["default"] = def
		}
		props[f.Key] = p
		if f.Required {
			required = append(required, f.Key)
		}
	}
	o := config.Schema{"type": "object", "properties": props, "additionalProperties": false}
	if required != nil {
		o["required"] = required
	}
	for k, v := range rules {
		if _, taken := o[k]; taken {
			return nil, fmt.Errorf("%s: its rules say %s, which its fields say", path, k)
		}
		o[k] = v
	}
	return o, nil
}

// addKinds adds every kind's block to a check's schema, and that a check
// has exactly one.
func addKinds(check config.Schema) error {
	props := check["properties"].(config.Schema)
	var oneKind []config.Schema
	for _, k := range kinds.All {
		o, err := object("checks.NAME."+k.Name, k.Fields(), k.Rules)
		if err != nil {
			return err
		}
		example, err := fromYAML(k.Example)
		if err != nil {
			return fmt.Errorf("%s's example: %w", k.Name, err)
		}
		o["title"], o["description"], o["examples"] = k.Name, k.Summary, []any{example}
		props[k.Name] = o
		oneKind = append(oneKind, config.Schema{"required": []string{k.Name}})
	}
	// A check has one kind; but for an entry of a layer that says
	// override: merge (its kind is the earlier layer's), or override:
	// replace alone (it removes the earlier one).
	check["if"] = config.Schema{"required": []string{"override"}}
	check["then"] = config.Schema{"anyOf": []config.Schema{{"oneOf": oneKind},
		{"properties": config.Schema{"override": config.Schema{"const": config.OverrideMerge}}},
		{"properties": config.Schema{"override": config.Schema{"const": config.OverrideReplace}}, "maxProperties": 1}}}
	check["else"] = config.Schema{"oneOf": oneKind}
	return nil
}

// defaultValue is a field's Default as the value the file would give: a
// bool or an integer as such, anything else as the text the reference
// shows.
func defaultValue(f config.Field) (any, error) {
	switch f.Type {
	case "bool":
		return strconv.ParseBool(f.Default)
	case "integer":
		return strconv.Atoi(f.Default)
	}
	return f.Default, nil
}

// description is a Doc in an editor, where there is no table below.
func description(doc string) string { return strings.ReplaceAll(doc, " (below)", "") }

// fromYAML is a YAML value as JSON decodes it.
func fromYAML(s string) (any, error) {
	data, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(data, &v)
}

// The schema is what the tables say; -update rewrites it.
func TestTheSchemaIsTheTables(t *testing.T) {
	got, err := schema()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schematest.Compile(got); err != nil {
		t.Fatalf("the schema written from the tables is not one: %v", err)
	}
	if *update {
		if err := os.WriteFile(schematest.Path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schematest.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the tables: go test ./internal/kinds -run %s -update rewrites it", schematest.Path, t.Name())
	}
}

// A field is Required exactly when its Doc says so, and the loader refuses
// a kind's block without one: the schema's required keys are the loader's.
func TestRequiredFieldsAreTheLoaders(t *testing.T) {
	fields := map[string][]config.Field{}
	for _, s := range config.Sections() {
		fields[s.Path] = s.Fields
	}
	for _, k := range kinds.All {
		fields["checks.NAME."+k.Name] = k.Fields()
		for _, f := range k.Fields() {
			if f.Fields != nil {
				fields["checks.NAME."+k.Name+"."+f.Key] = f.Fields
			}
		}
		example, err := fromYAML(k.Example)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range k.Fields() {
			if !f.Required {
				continue
			}
			block := maps.Clone(example.(map[string]any))
			delete(block, f.Key)
			flow, err := json.Marshal(block)
			if err != nil {
				t.Fatal(err)
			}
			file := "service: {command: [sleep, \"1\"]}\nchecks:\n  a:\n    " + k.Name + ": " + string(flow) + "\n"
			if _, err := config.Parse("vitals.yaml", []byte(file), noEnv, kinds.All); err == nil {
				t.Errorf("%s.%s is required, and the loader accepts a block without it: %s", k.Name, f.Key, flow)
			}
		}
	}
	for path, fs := range fields {
		for _, f := range fs {
			if says := strings.HasPrefix(f.Doc, "Required"); says != f.Required {
				t.Errorf("%s.%s: Required is %v, and its Doc says %q", path, f.Key, f.Required, f.Doc)
			}
		}
	}
}
