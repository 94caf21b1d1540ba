package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"
)

// format is how a command prints its result: the one set that -o takes on
// every command that prints one.
type format string

const (
	formatText format = "text" // for people: a line, a few, or a table
	formatWide format = "wide" // the table with more columns, where a command prints a table
	formatJSON format = "json" // the result as JSON, as the management API writes it
	formatYAML format = "yaml" // the same document as JSON, in YAML
)

// outputFlag is -o, --output: text (the default), json or yaml, and wide
// for a command that prints a table. A value outside the set is refused as
// the flags are read, before the command does anything: exit 2, naming the
// flag and the set, as every bad flag is.
type outputFlag struct {
	value format
	table bool // the command prints a table, so it takes wide
}

// addOutput gives cmd its -o; table says whether the command prints a
// table, and so takes wide.
func addOutput(cmd *cobra.Command, table bool) *outputFlag {
	o := &outputFlag{value: formatText, table: table}
	usage := "how to print the result: text, json or yaml"
	if table {
		usage = "how to print the result: text (a table), wide (more columns), json or yaml"
	}
	cmd.Flags().VarP(o, "output", "o", usage)
	complete(cmd, "output", o.allowed()...)
	return o
}

// allowed is the set the flag takes, in the order its help gives it.
func (o *outputFlag) allowed() []string {
	if o.table {
		return []string{string(formatText), string(formatWide), string(formatJSON), string(formatYAML)}
	}
	return []string{string(formatText), string(formatJSON), string(formatYAML)}
}

func (o *outputFlag) String() string { return string(o.value) }

// Type is what the help shows as the flag's value.
func (o *outputFlag) Type() string { return "format" }

// Set takes a value of the set.
func (o *outputFlag) Set(s string) error {
	allowed := o.allowed()
	for _, a := range allowed {
		if s == a {
			o.value = format(s)
			return nil
		}
	}
	return fmt.Errorf("use %s or %s", strings.Join(allowed[:len(allowed)-1], ", "), allowed[len(allowed)-1])
}

// document reports whether the result is printed as a document, JSON or
// YAML, rather than as text.
func (o *outputFlag) document() bool { return o.value == formatJSON || o.value == formatYAML }

// wide reports whether the table has its extra columns.
func (o *outputFlag) wide() bool { return o.value == formatWide }

// write prints v as a document: indented JSON, or the same document in
// YAML.
func (o *outputFlag) write(w io.Writer, v any) error {
	if o.value == formatYAML {
		return writeYAML(w, v)
	}
	return writeJSON(w, v)
}

// writeItem prints one item of a stream (an event, as events --follow
// prints them as they come): a JSON object on one line, or a YAML document
// of its own, after ---.
func (o *outputFlag) writeItem(w io.Writer, v any) error {
	if o.value != formatYAML {
		enc := json.NewEncoder(w) // one line, and a line break
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", y)
	return err
}

// writeFile prints a file of YAML that a command made (vitals import,
// validate --print): as it is for text and yaml, comments and all, or as
// the same document in JSON.
func (o *outputFlag) writeFile(w io.Writer, file []byte) error {
	if o.value != formatJSON {
		_, err := w.Write(file)
		return err
	}
	j, err := yaml.YAMLToJSON(file)
	if err != nil {
		return fmt.Errorf("the file as JSON: %w", err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, bytes.TrimSpace(j), "", "  "); err != nil {
		return fmt.Errorf("the file as JSON: %w", err)
	}
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}

// writeJSON writes v as indented JSON, with <, > and & as they are: a
// terminal or a script reads it, not a page (a condition's output says
// "(want < 5m)", not "(want \u003c 5m)").
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeYAML writes v as the same document as writeJSON: its JSON,
// turned into YAML, so that the keys and values are the same.
func writeYAML(w io.Writer, v any) error {
	j, err := json.Marshal(v) // its escapes are read back: the YAML has < as it is
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
