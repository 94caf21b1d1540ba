package release

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// .goreleaser.yaml makes what hack/release.sh makes (whose test is above):
// the same four names, static, -trimpath, the probe build by its tag, the
// same stamp, and SHA256SUMS. goreleaser itself is not built here (minutes
// and hundreds of modules for four go builds); run by hand, it gives the
// same bytes.
func TestGoreleaserMakesWhatReleaseShMakes(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Version int
		Builds  []struct {
			ID, Dir, Binary                         string
			Env, Goos, Goarch, Flags, Tags, Ldflags []string
		}
		Archives []struct {
			Formats      []string
			NameTemplate string `yaml:"name_template"`
		}
		Checksum struct {
			NameTemplate string `yaml:"name_template"`
			Algorithm    string
		}
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "release.sh"))
	if err != nil {
		t.Fatal(err)
	}
	const stamp = "-s -w -X github.com/vitals-dev/vitals/version.Version="
	if !strings.Contains(string(script), `-ldflags "`+stamp+`$version"`) {
		t.Fatalf("hack/release.sh does not stamp with %q", stamp)
	}

	if c.Version != 2 || len(c.Archives) != 1 || !slices.Equal(c.Archives[0].Formats, []string{"binary"}) {
		t.Fatalf(".goreleaser.yaml: version %d, archives %+v; want goreleaser v2's config and the binaries as they are", c.Version, c.Archives)
	}
	var names []string
	for _, b := range c.Builds {
		probe := slices.Equal(b.Tags, []string{"vitals_probe", "grpcnotrace"})
		if b.Dir != "cmd/vitals" || !slices.Equal(b.Env, []string{"CGO_ENABLED=0"}) || !slices.Equal(b.Flags, []string{"-trimpath"}) ||
			(!probe && !slices.Equal(b.Tags, []string{"grpcnotrace"})) || len(b.Ldflags) != 1 || b.Ldflags[0] != stamp+"v{{ .Version }}" {
			t.Errorf("build %s: %+v; want cmd/vitals, CGO_ENABLED=0, -trimpath, tags grpcnotrace or vitals_probe and grpcnotrace, and ldflags %q", b.ID, b, stamp+"v{{ .Version }}")
		}
		for _, goos := range b.Goos {
			for _, goarch := range b.Goarch {
				r := strings.NewReplacer("{{ .Binary }}", b.Binary, "{{ .Os }}", goos, "{{ .Arch }}", goarch)
				names = append(names, r.Replace(c.Archives[0].NameTemplate))
			}
		}
	}
	slices.Sort(names)
	if want := []string{"vitals-linux-amd64", "vitals-linux-arm64", "vitals-probe-linux-amd64", "vitals-probe-linux-arm64"}; !slices.Equal(names, want) {
		t.Errorf(".goreleaser.yaml names %v, hack/release.sh %v", names, want)
	}
	if c.Checksum.NameTemplate != "SHA256SUMS" || c.Checksum.Algorithm != "sha256" {
		t.Errorf(".goreleaser.yaml's checksums: %+v, want SHA256SUMS of sha256", c.Checksum)
	}
}
