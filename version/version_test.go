package version

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestTheVersionIsDevOrAModuleVersion(t *testing.T) {
	// A build from a work tree says dev; a stamped one says v….
	if Version != "dev" && !strings.HasPrefix(Version, "v") || Version != fromBuildInfo() {
		t.Fatalf("Version %q (from build info %q), want dev or v…", Version, fromBuildInfo())
	}
	if b := Info(); b.Version != Version || !strings.HasPrefix(b.GoVersion, "go") {
		t.Errorf("Info() = %+v, want Version %q and a Go version", b, Version)
	}
}

// The version is the command's when go install built it at a version, the
// library's when vitals is a dependency of another program, and dev from a
// work tree or a replaced module, whose version says nothing.
func TestTheVersionIsTheOneTheBuildInformationRecords(t *testing.T) {
	dep := func(path, version string, replaced bool) *debug.Module {
		m := &debug.Module{Path: path, Version: version}
		if replaced {
			m.Replace = &debug.Module{Path: "../..", Version: devel}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"go install …/cmd/vitals@v1.2.3",
			debug.BuildInfo{Main: debug.Module{Path: module + "/cmd/vitals", Version: "v1.2.3"}, Deps: []*debug.Module{dep(module, "v1.2.3", false)}}, "v1.2.3"},
		{"a work tree of cmd/vitals",
			debug.BuildInfo{Main: debug.Module{Path: module + "/cmd/vitals", Version: devel}}, "dev"},
		{"a program that requires the library",
			debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: devel}, Deps: []*debug.Module{dep(module, "v0.4.0", false)}}, "v0.4.0"},
		{"a program that replaces the library with a directory",
			debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: devel}, Deps: []*debug.Module{dep(module, "v0.4.0", true)}}, "dev"},
		{"a module whose path only begins like vitals's",
			debug.BuildInfo{Main: debug.Module{Path: module + "x", Version: "v9.0.0"}}, "dev"},
	} {
		if got := versionIn(&tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A release is stamped with the linker's -X (hack/release.sh), which sets a
// variable only if nothing overwrites it when the program starts.
func TestTheLinkerStampsTheVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "printversion")
	build := exec.Command("go", "build", "-ldflags", "-X github.com/vitals-dev/vitals/version.Version=v1.2.3", "-o", bin, "./testdata/printversion")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != "v1.2.3" {
		t.Fatalf("a build stamped v1.2.3 says %q (%v)", got, err)
	}
}
