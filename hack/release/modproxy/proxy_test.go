package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The repository's own modules: no go.mod replaces anything, the modules
// require each other at one release version, and go.work replaces exactly
// those requirements by the modules' directories.
func TestTheModulesRequireEachOtherAtTheReleaseVersion(t *testing.T) {
	root, err := repositoryRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	work, mods, err := readWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := releaseVersion(work, mods); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, m := range mods {
		paths = append(paths, m.Path)
	}
	for _, want := range []string{"github.com/vitals-dev/vitals", "github.com/vitals-dev/vitals/grpchealth", "github.com/vitals-dev/vitals/cmd/vitals"} {
		if !slices.Contains(paths, want) {
			t.Errorf("go.work uses %v, not %s", paths, want)
		}
	}
}

func TestReleaseVersionSaysWhatIsWrongAndWhere(t *testing.T) {
	const work = "go 1.26.5\nuse (\n\t.\n\t./cmd/x\n\t./lib\n)\nreplace (\n\tex.com/r v0.2.0 => ./\n\tex.com/r/lib v0.2.0 => ./lib\n)\n"
	const root = "module ex.com/r\n\ngo 1.26\n"
	const lib = "module ex.com/r/lib\n\ngo 1.26.0\n\nrequire ex.com/r v0.2.0\n"
	const cmd = "module ex.com/r/cmd/x\n\ngo 1.26.0\n\nrequire (\n\tex.com/r v0.2.0\n\tex.com/r/lib v0.2.0\n\tgolang.org/x/sys v0.50.0\n)\n"
	for _, tc := range []struct {
		name           string
		work, cmd, lib string
		want           string // the version, or a part of the error
	}{
		{"siblings at one version, replaced in go.work", work, cmd, lib, "v0.2.0"},
		{"a go.mod that replaces a sibling", work, cmd + "\nreplace ex.com/r => ../..\n", lib,
			"cmd/x/go.mod:11: replace ex.com/r => ../..: require the module at its release version instead"},
		{"a go.mod that replaces anything", work, cmd + "\nreplace golang.org/x/sys => golang.org/x/sys v0.49.0\n", lib,
			"cmd/x/go.mod:11: replace golang.org/x/sys => golang.org/x/sys"},
		{"two versions", work, strings.Replace(cmd, "ex.com/r v0.2.0", "ex.com/r v0.3.0", 1), lib,
			"the modules require each other at 2 versions (cmd/x/go.mod:6: require ex.com/r v0.3.0; cmd/x/go.mod:7: require ex.com/r/lib v0.2.0): they are released together"},
		{"a placeholder version", strings.ReplaceAll(work, "v0.2.0", "v0.0.0"), strings.ReplaceAll(cmd, "v0.2.0", "v0.0.0"), strings.ReplaceAll(lib, "v0.2.0", "v0.0.0"),
			`"v0.0.0" is not a release version`},
		{"a pseudo-version", strings.ReplaceAll(work, "v0.2.0", "v0.0.0-20260101000000-abcdefabcdef"), strings.ReplaceAll(cmd, "v0.2.0", "v0.0.0-20260101000000-abcdefabcdef"), strings.ReplaceAll(lib, "v0.2.0", "v0.0.0-20260101000000-abcdefabcdef"),
			"is not a release version"},
		{"no sibling required", work, "module ex.com/r/cmd/x\n\ngo 1.26.0\n", "module ex.com/r/lib\n\ngo 1.26.0\n",
			"no module of go.work requires another"},
		{"go.work without the replace", strings.Replace(work, "\tex.com/r/lib v0.2.0 => ./lib\n", "", 1), cmd, lib,
			"go.work: no replace ex.com/r/lib v0.2.0 => ./lib: a workspace build would look for that unpublished version on the network"},
		{"go.work replacing the old version", strings.Replace(work, "ex.com/r/lib v0.2.0", "ex.com/r/lib v0.1.0", 1), cmd, lib,
			"go.work:9: replace ex.com/r/lib v0.1.0: no module requires it (the modules require each other at v0.2.0)"},
		{"go.work replacing by another directory", strings.Replace(work, "=> ./lib", "=> ./cmd/x", 1), cmd, lib,
			"go.work:9: replace ex.com/r/lib v0.2.0 => ./cmd/x: want => ./lib, the module's directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := modfile.ParseWork("go.work", []byte(tc.work), nil)
			if err != nil {
				t.Fatal(err)
			}
			var mods []workspaceModule
			for _, m := range []struct{ dir, text string }{{".", root}, {"cmd/x", tc.cmd}, {"lib", tc.lib}} {
				f, err := modfile.Parse(filepath.Join(m.dir, "go.mod"), []byte(m.text), nil)
				if err != nil {
					t.Fatal(err)
				}
				mods = append(mods, workspaceModule{Dir: m.dir, Path: f.Module.Mod.Path, Mod: []byte(m.text), File: f})
			}
			got, err := releaseVersion(w, mods)
			if strings.HasPrefix(tc.want, "v") && !strings.Contains(tc.want, " ") {
				if err != nil || got != tc.want {
					t.Fatalf("releaseVersion = %q, %v; want %s", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("releaseVersion = %q, %v; want an error with %q", got, err, tc.want)
			}
		})
	}
}

// A module's zip holds what a tag of the work tree would: the files git
// knows, less those of its nested modules and those git ignores (a built
// binary, dist/).
func TestTheZipHoldsTheModulesFilesAsGitKnowsThem(t *testing.T) {
	root, err := repositoryRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dist := filepath.Join(root, "dist")
	if _, err := os.Stat(dist); os.IsNotExist(err) {
		if err := os.Mkdir(dist, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(dist) })
	}
	ignored := filepath.Join(dist, "modproxy-test-ignored")
	if err := os.WriteFile(ignored, []byte("a build output"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(ignored) })

	proxy := t.TempDir()
	version, _, err := writeProxy(root, proxy)
	if err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(filepath.Join(proxy, "github.com", "vitals-dev", "vitals", "@v", version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, strings.TrimPrefix(f.Name, "github.com/vitals-dev/vitals@"+version+"/"))
	}
	for _, want := range []string{"go.mod", "LICENSE", "health/doc.go", "version/version.go"} {
		if !slices.Contains(names, want) {
			t.Errorf("the root module's zip has no %s", want)
		}
	}
	for _, name := range names {
		for _, not := range []string{"cmd/", "grpchealth/", "bench/", "hack/release/", "dist/"} {
			if strings.HasPrefix(name, not) {
				t.Errorf("the root module's zip holds %s, which is not the root module's", name)
			}
		}
	}
	mod, err := os.ReadFile(filepath.Join(proxy, "github.com", "vitals-dev", "vitals", "cmd", "vitals", "@v", version+".mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/vitals-dev/vitals/cmd/vitals\n") {
		t.Errorf("cmd/vitals's .mod: %q %v", mod, err)
	}
}
