//go:build !vitals_probe

package kinds_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kinds"
)

var update = flag.Bool("update", false, "rewrite docs/reference/config.md and vitals.schema.json from the tables")

// referencePath is the reference, from this package's directory.
var referencePath = filepath.Join("..", "..", "..", "..", "docs", "reference", "config.md")

// reference writes docs/reference/config.md: every key of the file, from
// config's sections and the table of kinds.
func reference() string {
	var b strings.Builder
	b.WriteString("# vitals.yaml reference\n\n")
	b.WriteString("<!-- Generated from the table of kinds (cmd/vitals/internal/kinds) and config's fields by\n")
	b.WriteString("     `go test ./internal/kinds -run TestTheReferenceIsTheTables -update` in cmd/vitals: do not edit. -->\n\n")
	b.WriteString("Every key that `vitals run` and `vitals validate` read, with its type and its default (— for\n")
	b.WriteString("none). Durations are Go's (`500ms`, `10s`, `1m30s`); `${VAR}` expands from the environment in\n")
	b.WriteString("any value. `vitals validate --print` shows a file with every default filled in.\n\n")
	b.WriteString("Editors check a file as it is typed against [vitals.schema.json](vitals.schema.json), the JSON Schema\n")
	b.WriteString("generated from the same tables: see [Editing vitals.yaml](../editor.md).\n\n")
	for _, s := range config.Sections() {
		title := "`" + s.Path + "`"
		if s.Path == "" {
			title = "The top level"
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", title, s.Doc)
		fields(&b, s.Fields)
		if s.Path == "checks.NAME" {
			fmt.Fprintf(&b, "| `KIND` | mapping | — | Exactly one of %s (below). |\n", kindLinks())
		}
		b.WriteString("\n")
	}
	b.WriteString("## Kinds\n\n")
	b.WriteString("A check has exactly one. The CLI column is the target that `vitals probe` and `vitals wait` take\n")
	b.WriteString("for the kind (— where they take none). The component type is the `componentType` of the kind's\n")
	b.WriteString("checks in the health+json answers, unless a check gives its own `component-type`: datastore for\n")
	b.WriteString("a database or a cache the workload keeps its data in, system for another system it depends on,\n")
	b.WriteString("component for a part of the workload itself (what a check of an address most often is, beside\n")
	b.WriteString("the workload: a check of an upstream service says system).\n\n")
	b.WriteString("| kind | what it checks | CLI | component type | imported from |\n|---|---|---|---|---|\n")
	for _, k := range kinds.All {
		cli, imported := "—", "—"
		if k.CLI.Target != "" {
			cli = "`" + k.CLI.Target + "`"
		}
		if i := k.Import; i != nil {
			var from []string
			if i.Kubelet != "" {
				from = append(from, "Kubernetes `"+i.Kubelet+"`")
			}
			if i.Pebble != "" {
				from = append(from, "Pebble `"+i.Pebble+"`")
			}
			imported = strings.Join(from, ", ")
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s |\n", k.Name, k.Name, cell(k.Summary), cell(cli), k.ComponentType, imported)
	}
	for _, k := range kinds.All {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n```yaml\n%s: %s\n```\n\n", k.Name, k.Summary, k.Name, k.Example)
		fields(&b, k.Fields())
		if k.Details != "" {
			fmt.Fprintf(&b, "\n%s\n", k.Details)
		}
		if k.FailureThreshold != 0 && k.Fed(nil).Feed == 0 {
			which := "Its `failure-threshold` is"
			if k.EventsWhen != "" {
				which = "A check " + k.EventsWhen + " has a `failure-threshold` of"
			}
			fmt.Fprintf(&b, "\n%s %d unless the check gives one: its failure is an event, and the check fails the moment it happens.\n", which, k.FailureThreshold)
		}
		commandLine(&b, k.CLI)
	}
	return b.String()
}

// fields writes a table of fields.
func fields(b *strings.Builder, fs []config.Field) {
	b.WriteString("| key | type | default | |\n|---|---|---|---|\n")
	rows(b, "", fs)
}

// rows writes a row of each field, its key after prefix, and after a
// mapping of known keys the rows of its fields, as KEY.FIELD.
func rows(b *strings.Builder, prefix string, fs []config.Field) {
	for _, f := range fs {
		def := "—"
		if f.Default != "" {
			def = "`" + f.Default + "`"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", prefix+f.Key, f.Type, def, cell(f.Doc))
		rows(b, prefix+f.Key+".", f.Fields)
	}
}

// commandLine says what vitals probe and vitals wait take of a kind: its
// target and flags, or why they take none.
func commandLine(b *strings.Builder, c *kinds.CLI) {
	if c.Why != "" {
		fmt.Fprintf(b, "\nNot a target of `vitals probe` or `vitals wait`: %s.\n", cell(c.Why))
		return
	}
	example := c.Example
	for _, f := range c.ExampleFlags {
		if strings.ContainsAny(f, " <>()|&;$*?") {
			f = "'" + f + "'"
		}
		example += " " + f
	}
	fmt.Fprintf(b, "\nOn the command line: `vitals probe %s`", example)
	var flags []string
	for _, fl := range c.Flags() {
		flags = append(flags, "`--"+fl.Name+"`")
	}
	if flags != nil {
		fmt.Fprintf(b, ", with %s", strings.Join(flags, ", "))
	}
	b.WriteString(".\n")
}

func kindLinks() string {
	links := make([]string, len(kinds.All))
	for i, k := range kinds.All {
		links[i] = fmt.Sprintf("[`%s`](#%s)", k.Name, k.Name)
	}
	return strings.Join(links, ", ")
}

// cell is s in a table's cell, where a | would end it.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// The reference is what the table says; -update rewrites it.
func TestTheReferenceIsTheTables(t *testing.T) {
	got := reference()
	if *update {
		if err := os.WriteFile(referencePath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the table: go test ./internal/kinds -run %s -update rewrites it", referencePath, t.Name())
	}
}
