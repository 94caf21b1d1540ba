// Package release tests what a release ships: the binaries hack/release.sh
// makes (this package's test), and go install of the tagged modules, tried
// from a module proxy of the work tree (the modproxy command and its test).
package release
