package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// workspaceModule is one module that go.work uses.
type workspaceModule struct {
	Dir  string // its directory, slash-separated, relative to the repository root: "." or "cmd/vitals"
	Path string // its module path
	Mod  []byte // its go.mod as it is
	File *modfile.File
}

// repositoryRoot is the nearest directory at or above dir that holds go.work.
func repositoryRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work at or above %s: run it in the repository", dir)
		}
	}
}

// readWorkspace reads root's go.work and the go.mod of every module it uses.
func readWorkspace(root string) (*modfile.WorkFile, []workspaceModule, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	work, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, nil, err
	}
	var mods []workspaceModule
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.Path))
		name := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, nil, fmt.Errorf("go.work uses %s: %w", u.Path, err)
		}
		f, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, nil, err
		}
		if f.Module == nil {
			return nil, nil, fmt.Errorf("%s: no module line", name)
		}
		mods = append(mods, workspaceModule{Dir: dir, Path: f.Module.Mod.Path, Mod: data, File: f})
	}
	return work, mods, nil
}

// releaseVersion is the version at which the modules of the workspace require
// each other: the release they make together. It is an error, naming the file
// and the line, when a go.mod replaces a module (go install …@VERSION refuses
// such a module, and go.work serves development), when two requirements
// disagree, when the version is no release version (v0.0.0 or a
// pseudo-version says nothing), or when go.work does not replace exactly
// those requirements by the modules' directories, so that a workspace build
// looks for none of them on the network.
func releaseVersion(work *modfile.WorkFile, mods []workspaceModule) (string, error) {
	dirOf := map[string]string{}
	for _, m := range mods {
		dirOf[m.Path] = m.Dir
	}
	var errs []error
	required := map[string]bool{} // "path version" of each sibling requirement
	var versions []string         // the versions required, in the order met
	where := map[string]string{}  // the first requirement of each
	for _, m := range mods {
		gomod := path.Join(m.Dir, "go.mod")
		for _, r := range m.File.Replace {
			errs = append(errs, fmt.Errorf("%s:%d: replace %s => %s: require the module at its release version instead; go.work serves development",
				gomod, r.Syntax.Start.Line, r.Old.Path, r.New.Path))
		}
		for _, r := range m.File.Require {
			if _, ok := dirOf[r.Mod.Path]; !ok {
				continue
			}
			required[r.Mod.Path+" "+r.Mod.Version] = true
			if _, ok := where[r.Mod.Version]; !ok {
				versions = append(versions, r.Mod.Version)
				where[r.Mod.Version] = fmt.Sprintf("%s:%d: require %s %s", gomod, r.Syntax.Start.Line, r.Mod.Path, r.Mod.Version)
			}
		}
	}
	if len(versions) == 0 {
		errs = append(errs, errors.New("no module of go.work requires another: nothing says the release's version"))
		return "", errors.Join(errs...)
	}
	version := versions[0]
	if len(versions) > 1 {
		var at []string
		for _, v := range versions {
			at = append(at, where[v])
		}
		errs = append(errs, fmt.Errorf("the modules require each other at %d versions (%s): they are released together, at one version",
			len(versions), strings.Join(at, "; ")))
		return "", errors.Join(errs...)
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version || module.IsPseudoVersion(version) || version == "v0.0.0" {
		errs = append(errs, fmt.Errorf("%s: %q is not a release version (vMAJOR.MINOR.PATCH)", where[version], version))
	}
	replaced := map[string]bool{}
	for _, r := range work.Replace {
		key := r.Old.Path + " " + r.Old.Version
		want, ours := dirOf[r.Old.Path]
		got := path.Clean(filepath.ToSlash(r.New.Path))
		switch {
		case !required[key]:
			errs = append(errs, fmt.Errorf("go.work:%d: replace %s %s: no module requires it (the modules require each other at %s)",
				r.Syntax.Start.Line, r.Old.Path, r.Old.Version, version))
		case !ours || r.New.Version != "" || got != want:
			errs = append(errs, fmt.Errorf("go.work:%d: replace %s %s => %s: want => %s, the module's directory",
				r.Syntax.Start.Line, r.Old.Path, r.Old.Version, r.New.Path, workPath(want)))
		}
		replaced[key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(required)) {
		if !replaced[key] {
			p, v, _ := strings.Cut(key, " ")
			errs = append(errs, fmt.Errorf("go.work: no replace %s %s => %s: a workspace build would look for that unpublished version on the network",
				p, v, workPath(dirOf[p])))
		}
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return version, nil
}

// workPath is how go.work names the directory dir: ./ or ./cmd/vitals.
func workPath(dir string) string {
	if dir == "." {
		return "./"
	}
	return "./" + dir
}

// writeProxy writes to out a module proxy of every module of root's go.work,
// from the work tree, at their release version, and returns that version and
// the modules' paths.
func writeProxy(root, out string) (version string, paths []string, err error) {
	work, mods, err := readWorkspace(root)
	if err != nil {
		return "", nil, err
	}
	version, err = releaseVersion(work, mods)
	if err != nil {
		return "", nil, err
	}
	files, err := gitFiles(root)
	if err != nil {
		return "", nil, err
	}
	when, err := git(root, "log", "-1", "--format=%cI")
	if err != nil {
		return "", nil, err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return "", nil, fmt.Errorf("the time of HEAD %q: %w", when, err)
	}
	for _, m := range mods {
		if err := writeModule(root, out, m, version, t.UTC(), filesIn(m.Dir, files)); err != nil {
			return "", nil, fmt.Errorf("%s@%s: %w", m.Path, version, err)
		}
		paths = append(paths, m.Path)
	}
	return version, paths, nil
}

// filesIn is the files under dir ("." for all), relative to it.
func filesIn(dir string, files []string) []string {
	if dir == "." {
		return files
	}
	var in []string
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, dir+"/"); ok {
			in = append(in, rel)
		}
	}
	return in
}

// gitFiles is every file of root's work tree that git knows, tracked or
// untracked and not ignored, that is there: what a commit of the work tree
// would hold. Built binaries, dist/ and the like are ignored, as a tag leaves
// them out.
func gitFiles(root string) ([]string, error) {
	out, err := git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var files []string
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			files = append(files, f) // not a tracked file deleted in the work tree
		}
	}
	return files, nil
}

func git(root string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s (the module zips are made of the files git knows): %w: %s",
			strings.Join(args, " "), root, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// writeModule writes m's list, .info, .mod and .zip at version under out, in
// the layout of GOPROXY=file://out.
func writeModule(root, out string, m workspaceModule, version string, t time.Time, files []string) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t})
	if err != nil {
		return err
	}
	var zipFiles []zip.File
	for _, f := range files {
		zipFiles = append(zipFiles, workTreeFile{rel: f, abs: filepath.Join(root, filepath.FromSlash(m.Dir), filepath.FromSlash(f))})
	}
	var z bytes.Buffer
	if err := zip.Create(&z, module.Version{Path: m.Path, Version: version}, zipFiles); err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  m.Mod,
		version + ".zip":  z.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// workTreeFile is a file of the work tree as golang.org/x/mod/zip reads one.
type workTreeFile struct{ rel, abs string }

func (f workTreeFile) Path() string                 { return f.rel }
func (f workTreeFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f workTreeFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
