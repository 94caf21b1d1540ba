// Package schematest checks YAML documents against vitals.yaml's JSON
// Schema, docs/reference/vitals.schema.json, with a validator that vitals
// itself does not use (santhosh-tekuri/jsonschema, which holds the draft
// 2020-12 metaschema and checks the schema against it): for the tests of the
// schema, of the files vitals writes, and of the examples in the repository
// and in its docs. The schema is written from the tables by the test of
// package kinds (TestTheSchemaIsTheTables).
package schematest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
)

// Path is the schema's file: docs/reference/vitals.schema.json, found from
// this package's source, whatever directory a test runs in.
var Path = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "docs", "reference", "vitals.schema.json")
}()

// Compile compiles a schema, checking it against the metaschema of the
// draft its $schema names, as config.SchemaURL.
func Compile(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("read the schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(config.SchemaURL, doc); err != nil {
		return nil, fmt.Errorf("add the schema: %w", err)
	}
	return c.Compile(config.SchemaURL)
}

// published is the schema at Path, compiled once.
var published = sync.OnceValues(func() (*jsonschema.Schema, error) {
	data, err := os.ReadFile(Path)
	if err != nil {
		return nil, err
	}
	s, err := Compile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Path, err)
	}
	return s, nil
})

// Validate checks a vitals.yaml as written, its ${VAR} unexpanded, against
// the schema at Path, as an editor would; name is what an error calls the
// document. The error says every place the schema refuses.
func Validate(name string, document []byte) error {
	s, err := published()
	if err != nil {
		return err
	}
	return ValidateWith(s, name, document)
}

// ValidateWith is Validate against schema s.
func ValidateWith(s *jsonschema.Schema, name string, document []byte) error {
	data, err := yaml.YAMLToJSON(document)
	if err != nil {
		return fmt.Errorf("%s: not YAML: %w", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
