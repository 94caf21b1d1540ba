package probe

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
