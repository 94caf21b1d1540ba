package probe

import (
	"fmt"
	"strings"

	"github.com/vitals-dev/vitals/health"
)

// ExecSpec is an exec check: a command that must exit with status 0.
type ExecSpec struct {
	// Command is the program and its arguments, run directly, not through a
	// shell: for pipes or globs, give ["/bin/sh", "-c", "..."]. A name
	// without a slash is looked up in $PATH when the probe is built.
	// Required.
	Command []string
	// Env has KEY=VALUE entries added to the environment the command gets,
	// which is otherwise this process's own; an entry here wins over one of
	// the same name there. Default none.
	Env []string
	// Dir is the command's working directory. It must exist when the probe
	// is built. Default this process's working directory.
	Dir string
	// Output, when set, is a comparison (see Comparison) that the
	// command's output must meet once it has exited 0, for a command that
	// prints a value, such as a disk's use or a replica's lag: "< 80".
	// The last line of the output (stdout and stderr together, as the
	// kubelet reads them), trimmed, must be a number, with a % after it or
	// not; that number is the run's observed value (unit percent with a %,
	// else health.Dimensionless) in place of the exit status. Default none:
	// the exit status alone decides.
	Output string
}

// Validate says what is wrong with s wherever it is to run: no command, a
// command with an empty name, an env entry that is not KEY=VALUE. It looks
// for nothing on this machine; Exec also finds the command in $PATH and the
// directory, where it builds the probe.
func (s ExecSpec) Validate() error {
	switch {
	case len(s.Command) == 0:
		return Invalid("exec", "command is required")
	case s.Command[0] == "":
		return Invalid("exec", "the command's name (its first word) is empty")
	}
	for _, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return Invalid("exec", "env entry %q is not KEY=VALUE", kv)
		}
	}
	if s.Output != "" {
		if _, err := ParseComparison(s.Output); err != nil {
			return Invalid("exec", "output: %w", err)
		}
	}
	return nil
}

// outputValue judges what a command that exited 0 printed against want: the
// number on the last line it printed, trimmed, with or without a % after
// it (df prints a heading first, a script its warnings).
func outputValue(output string, want Comparison) (health.Observation, error) {
	last := output[strings.LastIndexByte(output, '\n')+1:]
	text, unit := strings.TrimSpace(last), health.Dimensionless
	if t, ok := strings.CutSuffix(text, "%"); ok {
		text, unit = strings.TrimSpace(t), "percent"
	}
	v, err := ParseNumber(text)
	if err != nil {
		shown := strings.TrimSpace(last)
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return health.Observation{}, fmt.Errorf("the output's last line %q is not a number, to compare %s", shown, want)
	}
	obs := health.Observation{Value: ObservedNumber(v), Unit: unit, Message: output}
	if !want.Holds(v) {
		return obs, fmt.Errorf("the output is %s (want %s)", FormatNumber(v), want)
	}
	return obs, nil
}
