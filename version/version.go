// Package version says which vitals this is, for `vitals version`, the
// vitals_build_info metric and the User-Agent of HTTP probes.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is set at build time with
//
//	-ldflags "-X github.com/vitals-dev/vitals/version.Version=v1.2.3"
//
// as a release is built (hack/release.sh). Without it, it is the vitals
// module's version from the binary's build information: the command's own
// when it was built with go install
// github.com/vitals-dev/vitals/cmd/vitals@VERSION, the library's when vitals
// is a dependency, Go's pseudo-version of the commit for a build in a git
// clone, or "dev" for a build without version control information.
//
// It has no initializer: the linker's -X sets only a variable that has none
// or a constant one, and a call here would overwrite what -X set.
var Version string

func init() {
	if Version == "" {
		Version = fromBuildInfo()
	}
}

const module = "github.com/vitals-dev/vitals"

// devel is the version Go gives a module built from its work tree.
const devel = "(devel)"

func fromBuildInfo() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionIn(info)
}

// versionIn is the version of vitals that info records: its main module's,
// when that is vitals or one of its modules (cmd/vitals), else that of the
// vitals module it depends on, else "dev".
func versionIn(info *debug.BuildInfo) string {
	ours := info.Main.Path == module || strings.HasPrefix(info.Main.Path, module+"/")
	if ours && info.Main.Version != "" && info.Main.Version != devel {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == module && d.Replace == nil && d.Version != "" && d.Version != devel {
			return d.Version
		}
	}
	return "dev"
}

// Build is what the binary says of its build: the version, the commit it was
// built from and when that commit was made (from the version control
// information Go records in a build from a work tree; empty for one without,
// such as go install of a tagged version, whose version says it all), whether
// the work tree had changes, and the Go it was built with.
type Build struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"` // RFC 3339, UTC
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
}

// Info is this binary's Build.
func Info() Build {
	b := Build{Version: Version, GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}
