//go:build !unix

package probe

import "runtime"

// Exec builds an exec probe; it needs process groups and signals, which this
// system does not have.
func Exec(s ExecSpec) (*Prober, error) {
	return nil, Invalid("exec", "exec probes need a Unix system (process groups and signals), not %s", runtime.GOOS)
}
