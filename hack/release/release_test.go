package release

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The version hack/release.sh stamps: the tag at HEAD, or a snapshot of the
// commit (v0.1.1-snapshot-abc1234[-dirty] after v0.1.0).
var releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-snapshot-([0-9a-f]+)(-dirty)?)?$`)

// bash hack/release.sh makes four static binaries, the full and the probe
// build for linux/amd64 and linux/arm64, stamped with the version, and their
// checksums, which sha256sum verifies.
func TestReleaseMakesStaticStampedBinariesAndTheirChecksums(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v (the release's version comes from git)", err)
	}
	dist := t.TempDir()
	if out, err := exec.Command("bash", filepath.Join(root, "hack", "release.sh"), dist).CombinedOutput(); err != nil {
		t.Fatalf("bash hack/release.sh: %v\n%s", err, out)
	}

	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"SHA256SUMS", "vitals-linux-amd64", "vitals-linux-arm64", "vitals-probe-linux-amd64", "vitals-probe-linux-arm64"}
	if !slices.Equal(names, want) {
		t.Fatalf("dist holds %v, want %v", names, want)
	}
	check := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
	check.Dir = dist
	if out, err := check.CombinedOutput(); err != nil || strings.Count(string(out), ": OK\n") != 4 {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}

	// The version the binaries say: the amd64 full build runs here.
	full := filepath.Join(dist, "vitals-linux-"+runtime.GOARCH)
	out, err := exec.Command(full, "version", "-o", "json").Output()
	var stamped struct{ Version, Revision, Time string }
	if err != nil || json.Unmarshal(out, &stamped) != nil {
		t.Fatalf("%s version -o json: %s (%v)", full, out, err)
	}
	// The commit and its time, whatever GOFLAGS says (-buildvcs=false here).
	if stamped.Revision != strings.TrimSpace(string(head)) || stamped.Time == "" {
		t.Errorf("%s version -o json: %s; want revision %s and its time", full, out, head)
	}
	version := stamped.Version
	m := releaseVersion.FindStringSubmatch(version)
	if m == nil {
		t.Fatalf("the release says %q, want a tag or a snapshot of the commit", version)
	}
	if m[2] != "" && !strings.HasPrefix(string(head), m[2]) {
		t.Errorf("the snapshot %s names another commit than HEAD %s", version, head)
	}

	for _, name := range want[1:] {
		bin := filepath.Join(dist, name)
		arch := name[strings.LastIndex(name, "-")+1:]
		probe := strings.HasPrefix(name, "vitals-probe-")

		f, err := elf.Open(bin)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
		if f.Machine != machine {
			t.Errorf("%s is for %v, want %v", name, f.Machine, machine)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s is dynamically linked (%v): a release binary is static", name, p.Type)
			}
		}
		f.Close()

		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if settings["CGO_ENABLED"] != "0" || settings["GOOS"] != "linux" || settings["GOARCH"] != arch || settings["-trimpath"] != "true" {
			t.Errorf("%s was built with %v; want CGO_ENABLED=0, linux/%s, -trimpath", name, settings, arch)
		}
		if want := map[bool]string{false: "grpcnotrace", true: "vitals_probe,grpcnotrace"}[probe]; settings["-tags"] != want {
			t.Errorf("%s was built with -tags %q; want %q", name, settings["-tags"], want)
		}
		// -trimpath leaves -ldflags out of the build information: the
		// stamped version is in the binary's data.
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(version)) {
			t.Errorf("%s is not stamped with %s", name, version)
		}

		if arch != runtime.GOARCH {
			continue
		}
		out, err := exec.Command(bin, "version", "-o", "json").Output()
		var b struct{ Version, Build string }
		flavour := map[bool]string{false: "full", true: "probe"}[probe]
		if err != nil || json.Unmarshal(out, &b) != nil || b.Version != version || b.Build != flavour {
			t.Errorf("%s version -o json: %s (%v), want version %s and build %s", name, out, err, version, flavour)
		}
		// The probe build is the one-shot CLI only: it has no agent.
		out, _ = exec.Command(bin, "run", "--help").CombinedOutput()
		if says := strings.Contains(string(out), "this is the probe build of vitals"); says != probe {
			t.Errorf("%s run --help: %s; the full build runs the agent, the probe build says where it is", name, out)
		}
	}
}
