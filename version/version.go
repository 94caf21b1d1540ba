// Package version says which vitals this is, for `vitals version` and the
// User-Agent of HTTP probes.
package version

import "runtime/debug"

// Version is set at build time with
//
//	-ldflags "-X github.com/vitals-dev/vitals/version.Version=v1.2.3"
//
// Without it, it is the vitals module's version from the binary's build
// information (a tagged version when vitals is a dependency), or "dev" for a
// build from a work tree.
var Version = fromBuildInfo()

const module = "github.com/vitals-dev/vitals"

func fromBuildInfo() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if info.Main.Path == module && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == module && d.Replace == nil && d.Version != "" && d.Version != "(devel)" {
			return d.Version
		}
	}
	return "dev"
}
