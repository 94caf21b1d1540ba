package probe

import "strings"

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
	return nil
}
