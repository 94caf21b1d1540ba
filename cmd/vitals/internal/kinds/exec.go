package kinds

import (
	"github.com/goccy/go-yaml/ast"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/redact"
	"github.com/vitals-dev/vitals/health"
	"github.com/vitals-dev/vitals/probe"
)

// Exec is a command that must exit 0.
var Exec = define(Kind{
	Name:          "exec",
	Summary:       "A command, run with no shell, that exits 0 within the timeout.",
	Example:       "{command: [true]}",
	ComponentType: health.ComponentTypeComponent, // a command run beside the workload, on its files and ports
	CLI:           execCLI,
	Import:        &Import{Kubelet: "exec", Pebble: "exec", Block: execFromPeer},
}, block[probe.ExecSpec]{
	fields: func(s *probe.ExecSpec) []config.Field {
		return []config.Field{
			{Key: "command", Value: config.Argv(&s.Command), Required: true,
				Doc: "Required: the program and its arguments as a list, with no shell (for one, [sh, -c, \"…\"]); a name without a slash is found in $PATH when the file loads."},
			{Key: "dir", Value: config.CString(&s.Dir), Doc: "The working directory, which must exist; by default vitals's."},
			{Key: "env", Value: config.Environment(&s.Env),
				Doc: "Variables added to vitals's environment for the command."},
			{Key: "output", Value: comparison(&s.Output),
				Doc: "A comparison, such as \"< 80\", that what the command prints must meet once it exits 0: a number on its last line (a % after it or not, as df prints one after its heading; stdout and stderr together), for a script that prints a value (a disk's use, a replica's lag). The number is the check's observed value. By default the exit status alone decides."},
		}
	},
	build: func(_ string, s probe.ExecSpec, _ Env) (health.Checker, error) { return probe.Exec(s) },
	// The command and the directory are looked for where the check runs.
	offline: probe.ExecSpec.Validate,
})

// execFromPeer is the block of a peer's command: its words, its variables
// and its working directory. It is not built here: the command is looked up
// in $PATH, and the directory found, on the machine vitals runs on, which
// need not be this one.
func execFromPeer(p Peer) ([]Pair, error) {
	block := []Pair{{Key: "command", Value: p.Command}}
	if len(p.Env) > 0 {
		block = append(block, Pair{Key: "env", Value: p.Env})
	}
	if p.Dir != "" {
		block = append(block, Pair{Key: "dir", Value: p.Dir})
	}
	return block, nil
}

var execCLI = takes(CLI{
	Target: "-- COMMAND [ARGS...]", Help: "a command that exits 0 (no shell)", Example: "-- true",
}, targets[probe.ExecSpec]{
	flags: func(s *probe.ExecSpec) []Flag {
		return []Flag{
			{Name: "env", Value: stringsFlag(&s.Env), Usage: "KEY=VALUE for the command's environment (repeatable)",
				Secrets: func(v string) []string { return redact.Environ([]string{v}) }},
			{Name: "dir", Value: stringFlag(&s.Dir), File: true, Usage: "working directory of the command"},
			{Name: "compare", Value: stringFlag(&s.Output), Usage: "a comparison the number on the last line the command prints must meet, such as '< 80'"},
		}
	},
	command: func(argv []string, s probe.ExecSpec) (*probe.Prober, error) {
		s.Command = argv
		return probe.Exec(s)
	},
})

// comparison reads a comparison of a number, such as "< 80", said wrong at
// the field.
func comparison(dst *string) config.Value {
	v := config.String(dst)
	read := v.Read
	v.Type = "comparison"
	v.Read = func(d *config.Decoder, n ast.Node, path string) {
		mark := d.Failures()
		read(d, n, path)
		if d.Failures() != mark {
			return
		}
		if _, err := probe.ParseComparison(*dst); err != nil {
			d.Errorf(n, path, "%v", err)
		}
	}
	return v
}
