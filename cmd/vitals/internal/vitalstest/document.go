package vitalstest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/goccy/go-yaml"
)

// Document is the one document in text, JSON, or YAML when isYAML, as
// encoding/json decodes it: maps, lists and scalars that a test compares
// with reflect.DeepEqual, such as a command's -o json and -o yaml answers.
// Text that is not one document fails the test.
func Document(t testing.TB, text []byte, isYAML bool) any {
	t.Helper()
	b := text
	if isYAML {
		var err error
		if b, err = yaml.YAMLToJSON(text); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, text)
		}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("not one JSON document (%v):\n%s", err, text)
	}
	return v
}
