package main

import (
	"bufio"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's go install line works once the modules are tagged: from a
// proxy of the work tree at the release version, outside any workspace, as
// a user runs it, the installed binary says that version and the Go it was
// built with, and is built as the release is (hack/release.sh's tags,
// -trimpath, -s -w, static). It fails when a go.mod replaces a module (go
// install refuses one, and so does the proxy), when a sibling is required
// at another version, or when the command does not build alone.
func TestGoInstallAtTheReleaseVersion(t *testing.T) {
	root, err := repositoryRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	proxy := t.TempDir()
	version, _, err := writeProxy(root, proxy)
	if err != nil {
		t.Fatal(err)
	}

	line := readmeInstallLine(t, filepath.Join(root, "README.md"))
	line = strings.Replace(line, "cmd/vitals@v0.1.0", "cmd/vitals@"+version, 1)
	gobin, work := t.TempDir(), t.TempDir()
	modcache := realGoEnv(t, "GOMODCACHE")
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = work // no go.mod, no go.work around it
	cmd.Env = append(os.Environ(),
		"GOWORK=off",
		"GOBIN="+gobin,
		"CGO_ENABLED=1", // the README's line says 0, and only it may
		"GOTOOLCHAIN=local",
		// A module cache of its own: the one in use may hold another build
		// of the unpublished version, and a module cache never changes.
		"GOMODCACHE="+t.TempDir(),
		"GOFLAGS=-modcacherw", // so that the test can remove it
		// The unpublished modules from the work tree; the others from the
		// module cache, offline, or else from the proxy in use.
		"GOPROXY=file://"+proxy+",file://"+filepath.Join(modcache, "cache", "download")+","+realGoEnv(t, "GOPROXY"),
		// go install …@VERSION checks every module against the checksum
		// database, not against cmd/vitals/go.sum, and the database knows no
		// unpublished version. The modules used are checked below against
		// cmd/vitals/go.sum instead, whose lines came from the database.
		"GOSUMDB=off",
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	bin := filepath.Join(gobin, "vitals")
	built, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range built.Settings {
		settings[s.Key] = s.Value
	}
	for key, want := range map[string]string{"-tags": "grpcnotrace", "-trimpath": "true", "CGO_ENABLED": "0"} {
		if settings[key] != want {
			t.Errorf("the README's %s builds with %s %q, the release with %q", line, key, settings[key], want)
		}
	}
	// -ldflags is not in the build info of a -trimpath build: -s -w show
	// as what they leave out, the symbol table.
	if f, err := elf.Open(bin); err != nil {
		t.Error(err)
	} else {
		if f.Section(".symtab") != nil || f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil {
			t.Errorf("the README's %s builds a binary with a symbol table or DWARF; the release's has neither (-ldflags='-s -w')", line)
		}
		f.Close()
	}

	goVersion := realGoEnv(t, "GOVERSION")
	out, err := exec.Command(bin, "version").Output()
	if want := "vitals " + version + " (" + goVersion + ", "; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("vitals version: %q (%v), want it to begin %q", out, err, want)
	}
	out, err = exec.Command(bin, "version", "-o", "json").Output()
	var b struct{ Version, GoVersion, Build string }
	if err != nil || json.Unmarshal(out, &b) != nil || b.Version != version || b.GoVersion != goVersion || b.Build != "full" {
		t.Errorf("vitals version -o json: %s (%v), want version %s, goVersion %s and build full", out, err, version, goVersion)
	}

	// Every module the build used is one cmd/vitals/go.sum names, with the
	// same hash: the checksum database's word, offline. And it is the
	// version the workspace builds and tests cmd/vitals with: another
	// module of go.work that requires a newer one would test what no user
	// gets.
	sums := goSum(t, filepath.Join(root, "cmd", "vitals", "go.sum"))
	list := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./cmd/vitals")
	list.Dir = root
	out, err = list.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/vitals in the workspace: %v", err)
	}
	tested := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if path, version, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			tested[path] = version
		}
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range info.Deps {
		if strings.HasPrefix(d.Path, "github.com/vitals-dev/vitals") {
			continue
		}
		if want := sums[d.Path+" "+d.Version]; d.Sum != want {
			t.Errorf("go install used %s %s %s; cmd/vitals/go.sum says %q: tidy it with hack/tidy.sh cmd/vitals", d.Path, d.Version, d.Sum, want)
		}
		if tested[d.Path] != d.Version {
			t.Errorf("go install builds %s %s, the workspace %s: require that version in cmd/vitals/go.mod (go work sync), or keep the other modules' requirements at or below it",
				d.Path, d.Version, tested[d.Path])
		}
	}
}

// readmeInstallLine is the README's go install line of the full build.
func readmeInstallLine(t *testing.T, readme string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); strings.Contains(line, "go install ") && strings.HasSuffix(line, "cmd/vitals@v0.1.0") {
			return line
		}
	}
	t.Fatalf("%s: no go install line of cmd/vitals@v0.1.0", readme)
	return ""
}

// realGoEnv is go env name as the developer or CI has it.
func realGoEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// goSum is the h1: hash of each module's zip in a go.sum, by "path version".
func goSum(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) == 3 && !strings.HasSuffix(f[1], "/go.mod") {
			sums[f[0]+" "+f[1]] = f[2]
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}
