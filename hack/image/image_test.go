package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/vitals-dev/vitals/internal/testenv"
)

// root is the repository, from this package's directory.
const root = "../.."

// epoch is the SOURCE_DATE_EPOCH the tests build with: a time no commit
// of this repository has, so that a test sees it was used.
const epoch = 1700000000

// hostPlatform is the platform of the image whose vitals this machine can
// run, or "" when the image is built for no platform of this machine's.
func hostPlatform() string {
	p := "linux/" + runtime.GOARCH
	if _, ok := platforms[p]; !ok || runtime.GOOS != "linux" {
		return ""
	}
	return p
}

// imageSh runs hack/image.sh with args and the test's SOURCE_DATE_EPOCH.
func imageSh(t *testing.T, args ...string) {
	t.Helper()
	imageShIn(t, root, args...)
}

// imageShIn runs the hack/image.sh of the repository at repo.
func imageShIn(t *testing.T, repo string, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repo, "hack", "image.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.Itoa(epoch))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/image.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var (
	sharedOnce sync.Once
	sharedDir  string
	sharedErr  string
)

// sharedArchive is hack/image.sh's archive, of both platforms, built once
// for the tests that read it.
func sharedArchive(t *testing.T) string {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vitals-image-test-")
		if err != nil {
			sharedErr = err.Error()
			return
		}
		sharedDir = dir
		cmd := exec.Command("bash", filepath.Join(root, "hack", "image.sh"), filepath.Join(dir, "vitals-image.tar"))
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.Itoa(epoch))
		if out, err := cmd.CombinedOutput(); err != nil {
			sharedErr = fmt.Sprintf("hack/image.sh: %v\n%s", err, out)
		}
	})
	if sharedErr != "" {
		t.Fatal(sharedErr)
	}
	return filepath.Join(sharedDir, "vitals-image.tar")
}

var (
	readOnce sync.Once
	read     *archive
)

// readShared is sharedArchive, read once for the tests that read it.
func readShared(t *testing.T) archive {
	t.Helper()
	path := sharedArchive(t)
	readOnce.Do(func() {
		a := readArchiveIn(t, path, filepath.Join(sharedDir, "layout"))
		read = &a
	})
	if read == nil {
		t.Fatalf("%s could not be read (see the first test that read it)", path)
	}
	return *read
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// archive is what an OCI image archive holds.
type archive struct {
	path string
	// desc is the descriptor of index.json's only entry, which names the
	// image: an image index (of one image per platform) or an image.
	desc  v1.Descriptor
	index v1.ImageIndex // what desc is, when it is an index
	// images are the images, by platform (linux/amd64), in the index's
	// order.
	images    map[string]archived
	platforms []string
}

// archived is an image read from an OCI image archive.
type archived struct {
	desc  v1.Descriptor // its descriptor: in index.json, or in the image index
	image v1.Image
	cf    *v1.ConfigFile
	files map[string]file
	data  map[string][]byte // the content of each file
}

// file is an entry of an image's file system, as its layers make it.
type file struct {
	Type     string // "dir" or "file"
	Mode     string // octal, special bits included: 1777 for /tmp
	UID, GID int
	ModTime  int64 // seconds since 1970
	Size     int64
	SHA256   string // of a file's content
}

// readArchive reads the OCI image archive at path, whose index.json names
// one image, or one image index of images.
func readArchive(t *testing.T, path string) archive {
	t.Helper()
	return readArchiveIn(t, path, t.TempDir())
}

// readArchiveIn reads the archive at path, extracted into dir, which must
// stay as long as its images are read.
func readArchiveIn(t *testing.T, path, dir string) archive {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", path, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xf %s: %v\n%s", path, err, out)
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("%s is not an OCI image layout in a tar: %v", path, err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("%s's index.json lists %d manifests, want one, which names the image", path, len(im.Manifests))
	}
	a := archive{path: path, desc: im.Manifests[0], images: map[string]archived{}}
	descs := []v1.Descriptor{a.desc}
	from := top
	if a.desc.MediaType.IsIndex() {
		if a.index, err = top.ImageIndex(a.desc.Digest); err != nil {
			t.Fatalf("%s: the image index %s: %v", path, a.desc.Digest, err)
		}
		m, err := a.index.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		descs, from = m.Manifests, a.index
	}
	for _, d := range descs {
		img := archived{desc: d}
		if img.image, err = from.Image(d.Digest); err != nil {
			t.Fatalf("%s: the image %s: %v", path, d.Digest, err)
		}
		if img.cf, err = img.image.ConfigFile(); err != nil {
			t.Fatal(err)
		}
		img.files, img.data = filesOf(t, img.image)
		p := img.cf.OS + "/" + img.cf.Architecture
		if _, twice := a.images[p]; twice {
			t.Fatalf("%s holds two images for %s", path, p)
		}
		a.images[p] = img
		a.platforms = append(a.platforms, p)
	}
	return a
}

// only is the archive's image, which must be its only one.
func (a archive) only(t *testing.T) archived {
	t.Helper()
	if a.index != nil || len(a.platforms) != 1 {
		t.Fatalf("%s holds an image index of %v, want a single image", a.path, a.platforms)
	}
	return a.images[a.platforms[0]]
}

// host is the archive's image for this machine's platform.
func (a archive) host(t *testing.T) archived {
	t.Helper()
	p := hostPlatform()
	if p == "" {
		t.Skipf("the image is built for %v, and this machine is %s/%s", slices.Sorted(maps.Keys(platforms)), runtime.GOOS, runtime.GOARCH)
	}
	img, ok := a.images[p]
	if !ok {
		t.Fatalf("%s holds no image for %s, only for %v", a.path, p, a.platforms)
	}
	return img
}

// filesOf lists the file system of img, its layers applied in order, and
// the content of each file.
func filesOf(t *testing.T, img v1.Image) (map[string]file, map[string][]byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files, data := map[string]file{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, data
		}
		if err != nil {
			t.Fatal(err)
		}
		path := "/" + strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")
		// The mode without the file type bits that some tars carry (podman's).
		f := file{Mode: strconv.FormatInt(h.Mode&0o7777, 8), UID: h.Uid, GID: h.Gid, ModTime: h.ModTime.Unix()}
		switch h.Typeflag {
		case tar.TypeDir:
			f.Type = "dir"
		case tar.TypeReg:
			content, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(content)
			f.Type, f.Size, f.SHA256 = "file", int64(len(content)), hex.EncodeToString(sum[:])
			data[path] = content
		default:
			t.Fatalf("the image holds %s, of tar type %q: only directories and files are expected", h.Name, h.Typeflag)
		}
		files[path] = f
	}
}

// git runs git in the repository and returns its output, or "" when it
// fails (no git, or no repository).
func git(args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// hack/image.sh makes an OCI image archive whose image is named
// ghcr.io/vitals-dev/vitals:VERSION, runs /vitals as the non-root user
// 65532 with the labels of the build, and holds what vitals needs and
// nothing else: its /vitals says the same version, the CA bundle is this
// machine's, and /tmp is writable by anyone. (This machine's platform's
// image; TestTheArchiveIsAMultiPlatformImage holds the other to it.)
func TestTheArchiveIsTheImage(t *testing.T) {
	all := readShared(t)
	a := all.host(t)
	cfg := a.cf.Config

	version := cfg.Labels["org.opencontainers.image.version"]
	vs, err := exec.Command("bash", filepath.Join(root, "hack", "version.sh")).Output()
	if err != nil {
		t.Fatalf("hack/version.sh: %v", err)
	}
	want := strings.TrimSpace(string(vs))
	if version != want {
		t.Errorf("the version label is %q, want %q (hack/version.sh's, as hack/release.sh stamps)", version, want)
	}
	for _, key := range []string{"org.opencontainers.image.ref.name", "io.containerd.image.name"} {
		if got := all.desc.Annotations[key]; got != "ghcr.io/vitals-dev/vitals:"+version {
			t.Errorf("the archive's annotation %s is %q, want ghcr.io/vitals-dev/vitals:%s", key, got, version)
		}
	}
	if p := a.desc.Platform; p == nil || p.OS+"/"+p.Architecture != hostPlatform() {
		t.Errorf("the image index says the image is for %v, want %s", p, hostPlatform())
	}
	if got := a.cf.OS + "/" + a.cf.Architecture; got != hostPlatform() {
		t.Errorf("the image's platform is %s, want %s", got, hostPlatform())
	}

	if cfg.User != "65532:65532" {
		t.Errorf("the image's user is %q, want 65532:65532 (non-root)", cfg.User)
	}
	if !slices.Equal(cfg.Entrypoint, []string{"/vitals"}) {
		t.Errorf("the entrypoint is %q, want [/vitals]", cfg.Entrypoint)
	}
	if !slices.Equal(cfg.Cmd, []string{"run", "-c", "/etc/vitals/vitals.yaml"}) {
		t.Errorf("the cmd is %q, want [run -c /etc/vitals/vitals.yaml]", cfg.Cmd)
	}
	created := time.Unix(epoch, 0).UTC()
	wantLabels := map[string]string{
		"org.opencontainers.image.title":         "vitals",
		"org.opencontainers.image.source":        "https://github.com/vitals-dev/vitals",
		"org.opencontainers.image.url":           "https://github.com/vitals-dev/vitals",
		"org.opencontainers.image.documentation": "https://github.com/vitals-dev/vitals/blob/main/docs/image.md",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.version":       want,
		"org.opencontainers.image.revision":      git("rev-parse", "HEAD"),
		"org.opencontainers.image.created":       created.Format(time.RFC3339),
	}
	for k, v := range wantLabels {
		if cfg.Labels[k] != v {
			t.Errorf("the label %s is %q, want %q", k, cfg.Labels[k], v)
		}
	}
	if cfg.Labels["org.opencontainers.image.description"] == "" {
		t.Error("the image has no org.opencontainers.image.description label")
	}
	if !a.cf.Created.Time.Equal(created) {
		t.Errorf("the image was created at %v, want SOURCE_DATE_EPOCH, %v", a.cf.Created.Time, created)
	}

	// What the image holds, exactly; every file is root's and dated
	// SOURCE_DATE_EPOCH.
	wantFiles := map[string]struct{ typ, mode string }{
		"/etc":                               {"dir", "755"},
		"/etc/group":                         {"file", "644"},
		"/etc/passwd":                        {"file", "644"},
		"/etc/ssl":                           {"dir", "755"},
		"/etc/ssl/certs":                     {"dir", "755"},
		"/etc/ssl/certs/ca-certificates.crt": {"file", "644"},
		"/tmp":                               {"dir", "1777"},
		"/vitals":                            {"file", "755"},
	}
	for path, f := range a.files {
		w, ok := wantFiles[path]
		switch {
		case !ok:
			t.Errorf("the image holds %s, which it should not", path)
		case f.Type != w.typ || f.Mode != w.mode:
			t.Errorf("%s is a %s of mode %s, want a %s of mode %s", path, f.Type, f.Mode, w.typ, w.mode)
		}
		if f.UID != 0 || f.GID != 0 || f.ModTime != epoch {
			t.Errorf("%s is owned by %d:%d and dated %d, want root's (0:0) and SOURCE_DATE_EPOCH (%d)", path, f.UID, f.GID, f.ModTime, epoch)
		}
	}
	for path := range wantFiles {
		if _, ok := a.files[path]; !ok {
			t.Errorf("the image has no %s", path)
		}
	}

	// The user and group have names, for ps, id and ls.
	for path, line := range map[string]string{"/etc/passwd": "nonroot:x:65532:65532:", "/etc/group": "nonroot:x:65532:"} {
		if !slices.ContainsFunc(strings.Split(string(a.data[path]), "\n"), func(l string) bool { return strings.HasPrefix(l, line) }) {
			t.Errorf("%s has no line %s…:\n%s", path, line, a.data[path])
		}
	}
	// The CA bundle is this machine's (Debian's ca-certificates), and holds certificates.
	bundle := a.data["/etc/ssl/certs/ca-certificates.crt"]
	if host, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Errorf("this machine's CA bundle: %v", err)
	} else if !bytes.Equal(bundle, host) {
		t.Errorf("the image's CA bundle (%d bytes) is not this machine's /etc/ssl/certs/ca-certificates.crt (%d bytes)", len(bundle), len(host))
	}
	if !x509.NewCertPool().AppendCertsFromPEM(bundle) {
		t.Error("the image's /etc/ssl/certs/ca-certificates.crt holds no certificate")
	}

	// Its vitals runs, and says the image's version.
	bin := filepath.Join(t.TempDir(), "vitals")
	if err := os.WriteFile(bin, a.data["/vitals"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("the image's /vitals version -o json: %v", err)
	}
	var v struct{ Version, Revision string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("the image's /vitals version -o json: %v\n%s", err, out)
	}
	// Go records the commit where .git is a directory: in a clone, not in a
	// work tree of git worktree add, whose .git is a file.
	rev := ""
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
		rev = cfg.Labels["org.opencontainers.image.revision"]
	}
	if v.Version != version || v.Revision != rev {
		t.Errorf("the image's /vitals says it is version %q of commit %q, want %q of %q", v.Version, v.Revision, version, rev)
	}
	// Statically linked: there is no libc in the image.
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if libs, _ := ef.ImportedLibraries(); len(libs) > 0 || slices.ContainsFunc(ef.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
		t.Errorf("the image's /vitals is dynamically linked (%v), and the image has no libc", libs)
	}
}

// The image's files are all that vitals run needs as the image's user, on a
// read-only root with an emptyDir at /tmp, as the deploy examples run it:
// in a chroot of the image's file system made read-only, with a tmpfs at
// /tmp, as 65532:65532, the image's entrypoint and cmd start the agent on
// /etc/vitals/vitals.yaml (a pod's ConfigMap), which makes its socket in
// /tmp/vitals-65532, where vitals checks, as the same user, finds it. (What
// a container runtime does, without its other namespaces and cgroups; the
// mount namespace and chroot need root.)
func TestTheImageRunsAsItsUserOnAReadOnlyRoot(t *testing.T) {
	testenv.NeedRoot(t, "a chroot with its own mounts")
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		testenv.Missing(t, "no mount namespace here (unshare -m: %v)", err)
	}
	a := readShared(t).host(t)
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	files := mutate.Extract(a.image)
	untar := exec.Command("tar", "-xpf", "-", "-C", rootfs)
	untar.Stdin = files
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("tar -x of the image's files: %v\n%s", err, out)
	}
	files.Close()
	port := freePort(t)
	config := fmt.Sprintf("listen: 127.0.0.1:%d\nchecks:\n  self:\n    level: ready\n    http: {url: \"http://127.0.0.1:%d/livez\"}\n    period: 1s\n", port, port)
	if err := os.MkdirAll(filepath.Join(rootfs, "etc", "vitals"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "vitals", "vitals.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// The script mounts the root read-only and a tmpfs at /tmp, starts the
	// image's command, asks vitals checks until it answers, and stops it.
	const script = `set -eu
root=$1 user=$2; shift 2
mount --bind "$root" "$root"
mount -o remount,bind,ro "$root"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
chroot --userspec="$user" "$root" "$@" 2>"$root/tmp/log" &
agent=$!
code=1
for _ in $(seq 100); do
  if chroot --userspec="$user" "$root" /vitals checks; then code=0; break; fi
  sleep 0.1
done
kill -TERM $agent 2>/dev/null || true
wait $agent || true
cat "$root/tmp/log" >&2
exit $code`
	cfg := a.cf.Config
	args := append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", rootfs, cfg.User}, cfg.Entrypoint...)
	cmd := exec.Command("unshare", append(args, cfg.Cmd...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the image's %q as %s on a read-only root: vitals checks did not answer (%v)\n%s%s", append(cfg.Entrypoint, cfg.Cmd...), cfg.User, err, stdout.Bytes(), stderr.Bytes())
	}
	if !strings.Contains(stdout.String(), "self") {
		t.Errorf("vitals checks does not list the check self:\n%s", stdout.Bytes())
	}
	if !strings.Contains(stderr.String(), "api=/tmp/vitals-65532/vitals.sock") {
		t.Errorf("vitals run did not serve its API at /tmp/vitals-65532/vitals.sock:\n%s", stderr.Bytes())
	}
	if entries, _ := os.ReadDir(filepath.Join(rootfs, "tmp")); len(entries) > 0 {
		t.Errorf("vitals wrote into the image's own /tmp, under the tmpfs: %v", entries)
	}
}

// freePort is a loopback TCP port that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// One commit, built twice, gives one archive, byte for byte: the same
// image index, of the same images.
func TestTheArchiveIsReproducible(t *testing.T) {
	first := sharedArchive(t)
	second := filepath.Join(t.TempDir(), "again.tar")
	imageSh(t, second)
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		x, y := readArchive(t, first), readArchive(t, second)
		for p, img := range x.images {
			for path, f := range img.files {
				if y.images[p].files[path] != f {
					t.Logf("%s %s: %+v, then %+v", p, path, f, y.images[p].files[path])
				}
			}
		}
		t.Errorf("two builds of one commit differ: %s (%d bytes) and %s (%d bytes)", first, len(a), second, len(b))
	}
}

// The archive is the multi-platform image a registry serves as
// ghcr.io/vitals-dev/vitals:VERSION: index.json names an OCI image index,
// which lists one image for linux/amd64 and one for linux/arm64 (v8), each
// said by its platform, as docker buildx and registries say them. The two
// are one image but for their platform and their /vitals, static, each for
// its processor.
func TestTheArchiveIsAMultiPlatformImage(t *testing.T) {
	a := readShared(t)
	if a.desc.MediaType != types.OCIImageIndex || a.index == nil {
		t.Fatalf("index.json names a %s, want an image index (%s) of both platforms' images", a.desc.MediaType, types.OCIImageIndex)
	}
	if v := a.images[a.platforms[0]].cf.Config.Labels["org.opencontainers.image.version"]; a.desc.Annotations["org.opencontainers.image.ref.name"] != "ghcr.io/vitals-dev/vitals:"+v {
		t.Errorf("index.json names the image index %q, want ghcr.io/vitals-dev/vitals:%s", a.desc.Annotations["org.opencontainers.image.ref.name"], v)
	}
	im, err := a.index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}}
	if len(im.Manifests) != len(want) {
		t.Fatalf("the image index lists %d images (%v), want %d", len(im.Manifests), a.platforms, len(want))
	}
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for i, d := range im.Manifests {
		if d.MediaType != types.OCIManifestSchema1 || d.ArtifactType != "" || d.Platform == nil || !d.Platform.Equals(want[i]) {
			t.Errorf("the image index's entry %d is a %s (artifactType %q) for %v, want an image (%s, no artifactType) for %v", i, d.MediaType, d.ArtifactType, d.Platform, types.OCIManifestSchema1, want[i])
			continue
		}
		img := a.images[want[i].OS+"/"+want[i].Architecture]
		if got := (v1.Platform{OS: img.cf.OS, Architecture: img.cf.Architecture, Variant: img.cf.Variant}); !got.Equals(want[i]) {
			t.Errorf("the image the index lists for %v says it is for %v", want[i], got)
		}
		ef, err := elf.NewFile(bytes.NewReader(img.data["/vitals"]))
		if err != nil {
			t.Errorf("the %v image's /vitals: %v", want[i], err)
			continue
		}
		if ef.Machine != machines[want[i].Architecture] {
			t.Errorf("the %v image's /vitals is for %v, want %v", want[i], ef.Machine, machines[want[i].Architecture])
		}
		if libs, _ := ef.ImportedLibraries(); len(libs) > 0 || slices.ContainsFunc(ef.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
			t.Errorf("the %v image's /vitals is dynamically linked (%v), and the image has no libc", want[i], libs)
		}
	}
	// Alike but for the platform and /vitals.
	amd, arm := a.images["linux/amd64"], a.images["linux/arm64"]
	x, y := factsOf(amd), factsOf(arm)
	x.Platform, y.Platform = "", ""
	if x.Files["/vitals"].SHA256 == y.Files["/vitals"].SHA256 {
		t.Error("both platforms' images hold the same /vitals")
	}
	delete(x.Files, "/vitals")
	delete(y.Files, "/vitals")
	if !reflect.DeepEqual(x, y) {
		xj, _ := json.MarshalIndent(x, "", "  ")
		yj, _ := json.MarshalIndent(y, "", "  ")
		t.Errorf("the linux/amd64 and linux/arm64 images differ in more than their platform and /vitals:\namd64: %s\narm64: %s", xj, yj)
	}
}

// --platform makes an archive of that platform's image alone, the very
// image (of the same digest) that the archive of both platforms lists for
// it: an arm64 image, whose /vitals is for arm64.
func TestTheArchiveOfOnePlatform(t *testing.T) {
	out := filepath.Join(t.TempDir(), "arm64.tar")
	imageSh(t, "--platform", "linux/arm64", out)
	one := readArchive(t, out)
	a := one.only(t)
	if a.cf.OS != "linux" || a.cf.Architecture != "arm64" || a.cf.Variant != "v8" {
		t.Errorf("the image is for %s/%s/%s, want linux/arm64/v8", a.cf.OS, a.cf.Architecture, a.cf.Variant)
	}
	if p := a.desc.Platform; p == nil || p.Architecture != "arm64" || p.Variant != "v8" {
		t.Errorf("the archive's platform is %v, want linux/arm64/v8", p)
	}
	ef, err := elf.NewFile(bytes.NewReader(a.data["/vitals"]))
	if err != nil {
		t.Fatalf("the image's /vitals: %v", err)
	}
	if ef.Machine != elf.EM_AARCH64 {
		t.Errorf("the image's /vitals is for %v, want %v", ef.Machine, elf.EM_AARCH64)
	}
	both := readShared(t)
	if got, want := a.desc.Digest, both.images["linux/arm64"].desc.Digest; got != want {
		t.Errorf("hack/image.sh --platform linux/arm64 makes the image %s, and the archive of both platforms lists %s for linux/arm64", got, want)
	}
	if got, want := one.desc.Annotations["org.opencontainers.image.ref.name"], both.desc.Annotations["org.opencontainers.image.ref.name"]; got != want {
		t.Errorf("the archive of one platform names its image %q, that of both %q", got, want)
	}
}

// need fails the test when the command tool is not installed (with CI set),
// or skips it, saying why it is needed.
func need(t *testing.T, tool, why string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		testenv.Missing(t, "%s is not installed, and is needed %s (apt-get install %s)", tool, why, tool)
	}
}

// podman runs podman on a store of the test's own, so that nothing of the
// machine's images is touched.
type podman struct {
	t    *testing.T
	args []string
}

func newPodman(t *testing.T) podman {
	t.Helper()
	need(t, "podman", "to build the Dockerfile and load the archive")
	// Not t.TempDir(): podman takes a runroot of at most 50 characters.
	dir, err := os.MkdirTemp("", "podman-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return podman{t, []string{"--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"}}
}

func (p podman) run(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("podman", append(slices.Clone(p.args), args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		p.t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// imageFacts is what the two builds of the image must agree on.
type imageFacts struct {
	Platform   string
	User       string
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	Labels     map[string]string
	Ports      map[string]struct{}
	Volumes    map[string]struct{}
	StopSignal string
	Files      map[string]file
}

func factsOf(a archived) imageFacts {
	c := a.cf.Config
	labels := maps.Clone(c.Labels)
	delete(labels, "io.buildah.version") // buildah says who built it
	files := map[string]file{}
	for path, f := range a.files {
		f.ModTime = 0 // COPY keeps the build stage's times
		files[path] = f
	}
	return imageFacts{
		Platform: a.cf.OS + "/" + a.cf.Architecture + "/" + a.cf.Variant,
		User:     c.User, Entrypoint: c.Entrypoint, Cmd: c.Cmd, Env: c.Env, WorkingDir: c.WorkingDir,
		Labels: labels, Ports: c.ExposedPorts, Volumes: c.Volumes, StopSignal: c.StopSignal,
		Files: files,
	}
}

// The Dockerfile builds the image hack/image.sh does: podman builds its
// final stage from the files of hack/image.sh --rootfs, which its build
// stage makes (TestTheDockerfileBuildStageIsHackImageSh; here a build
// context named build stands for that stage, which needs golang's image
// and the network), with the build's version, revision and time; and the
// two images have the same configuration, labels and files, modes and
// owners included.
func TestTheDockerfileBuildsTheSameImage(t *testing.T) {
	ours := readShared(t).host(t)
	p := newPodman(t)

	ctx := t.TempDir()
	imageSh(t, "--platform", hostPlatform(), "--rootfs", filepath.Join(ctx, "rootfs"))
	labels := ours.cf.Config.Labels
	p.run("build", "--build-context", "build="+ctx, "-f", filepath.Join(root, "Dockerfile"),
		"--platform", hostPlatform(),
		"--build-arg", "VERSION="+labels["org.opencontainers.image.version"],
		"--build-arg", "REVISION="+labels["org.opencontainers.image.revision"],
		"--build-arg", "CREATED="+labels["org.opencontainers.image.created"],
		"-t", "localhost/vitals-dockerfile:test", t.TempDir())
	saved := filepath.Join(t.TempDir(), "dockerfile.tar")
	p.run("save", "--format", "oci-archive", "-o", saved, "localhost/vitals-dockerfile:test")
	theirs := readArchive(t, saved).only(t)

	if a, b := factsOf(ours), factsOf(theirs); !reflect.DeepEqual(a, b) {
		aj, _ := json.MarshalIndent(a, "", "  ")
		bj, _ := json.MarshalIndent(b, "", "  ")
		t.Errorf("hack/image.sh's image and the Dockerfile's differ:\nhack/image.sh: %s\nDockerfile: %s", aj, bj)
	}
}

// instruction is one instruction of a Dockerfile, its lines joined.
type instruction struct {
	Cmd  string // upper case: FROM, ARG, RUN...
	Args string
}

// dockerfileStages are the Dockerfile's stages, by name (the last, unnamed,
// is ""), each with its instructions, FROM first: its lines as Docker joins
// them (a line that ends in a backslash goes on, comment lines are left out).
func dockerfileStages(t *testing.T) map[string][]instruction {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var joined []string
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "#") || trimmed == "" && cur == "" {
			continue
		}
		if body, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), "\\"); ok {
			cur += body + " "
			continue
		}
		joined = append(joined, strings.TrimSpace(cur+line))
		cur = ""
	}
	stages := map[string][]instruction{}
	name := ""
	for _, l := range joined {
		cmd, args, _ := strings.Cut(l, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			name = ""
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				name = f[len(f)-1]
			}
			if _, twice := stages[name]; twice {
				t.Fatalf("the Dockerfile has two stages named %q", name)
			}
		}
		stages[name] = append(stages[name], in)
	}
	return stages
}

// cloneOfWorkTree is a git clone of the repository, whose HEAD is the work
// tree as it is: its commit, and when the work tree has changes, a commit
// of them on top. Its .git is a directory, as a user's clone's is (a work
// tree of git worktree add has a file that points elsewhere).
func cloneOfWorkTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=vitals test", "-c", "user.email=test@vitals.invalid"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if e, ok := err.(*exec.ExitError); ok {
				stderr = string(e.Stderr)
			}
			t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
		}
		return string(out)
	}
	run(root, "clone", "-q", "--no-checkout", ".", dir)
	run(dir, "checkout", "-q", "--detach", strings.TrimSpace(run(root, "rev-parse", "HEAD")))
	changed := strings.Split(strings.TrimSuffix(run(root, "ls-files", "-z", "--modified", "--others", "--exclude-standard"), "\x00"), "\x00")
	deleted := strings.Split(strings.TrimSuffix(run(root, "ls-files", "-z", "--deleted"), "\x00"), "\x00")
	if changed[0] == "" && deleted[0] == "" {
		return dir
	}
	for _, f := range deleted {
		if f != "" {
			os.Remove(filepath.Join(dir, f))
		}
	}
	for _, f := range changed {
		if f == "" || slices.Contains(deleted, f) {
			continue
		}
		cp := exec.Command("cp", "-p", "--parents", f, dir)
		cp.Dir = root
		if out, err := cp.CombinedOutput(); err != nil {
			t.Fatalf("cp %s into the clone: %v\n%s", f, err, out)
		}
	}
	run(dir, "add", "-A")
	run(dir, "commit", "-q", "--no-verify", "-m", "the work tree")
	return dir
}

// The Dockerfile's build stage makes the files hack/image.sh --rootfs does,
// byte for byte, from a clone, for each platform: its /vitals says
// hack/version.sh's version and the clone's commit, as one that
// hack/image.sh builds does.
//
// Without golang's image (nor a container to run it in), the stage is
// played here as Docker plays it: podman builds its instructions other
// than FROM and RUN on scratch, from the clone as the context (so
// .dockerignore says what the build is sent), and the stage's RUN line runs
// in those files under /bin/sh with only what golang's image and Docker
// give it: its ARGs (TARGETOS and TARGETARCH those of the platform, as
// buildx gives them), Go and git, Go's caches of this machine in place of
// the cache mounts (no download: GOPROXY=off). When the test runs as root,
// so does the line, in files that another user owns, which git refuses to
// read unless told to trust them (safe.directory). The cache mounts are
// where golang's image keeps those caches: GOMODCACHE under its GOPATH, /go,
// and GOCACHE in root's home.
func TestTheDockerfileBuildStageIsHackImageSh(t *testing.T) {
	if hostPlatform() == "" {
		t.Skipf("the image is built for %v, and this machine is %s/%s", slices.Sorted(maps.Keys(platforms)), runtime.GOOS, runtime.GOARCH)
	}
	p := newPodman(t)
	stage := dockerfileStages(t)["build"]
	if len(stage) == 0 || !strings.Contains(stage[0].Args, "golang:") {
		t.Fatalf("the Dockerfile has no stage named build FROM golang's image: %v", stage)
	}

	// The stage's instructions, on scratch: the context as the RUN line
	// finds it.
	var args []instruction
	var run string
	containerfile := "FROM scratch\n"
	for _, in := range stage[1:] {
		switch in.Cmd {
		case "ARG":
			args = append(args, in)
		case "RUN":
			if run != "" {
				t.Fatalf("the build stage has two RUN lines; this test plays one: %s", in.Args)
			}
			run = in.Args
		case "WORKDIR", "COPY":
			if run != "" {
				t.Fatalf("the build stage's %s comes after its RUN line; this test plays it before: %s", in.Cmd, in.Args)
			}
			containerfile += in.Cmd + " " + in.Args + "\n"
		default:
			t.Fatalf("the build stage has a %s, which this test does not play: %s", in.Cmd, in.Args)
		}
	}
	workdir := "/"
	for _, in := range stage {
		if in.Cmd == "WORKDIR" {
			workdir = in.Args
		}
	}
	clone := cloneOfWorkTree(t)
	cf := filepath.Join(t.TempDir(), "Containerfile")
	if err := os.WriteFile(cf, []byte(containerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	stageRoot := filepath.Join(t.TempDir(), "stage")
	p.run("build", "-f", cf, "--output", "type=local,dest="+stageRoot, clone)
	src := filepath.Join(stageRoot, workdir)
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "-R", "65534:65534", stageRoot).CombinedOutput(); err != nil {
			t.Fatalf("chown the context: %v\n%s", err, out)
		}
	}

	// The RUN line: its --mount flags, then its command.
	var caches []string
	for strings.HasPrefix(run, "--") {
		flag, rest, _ := strings.Cut(run, " ")
		run = strings.TrimSpace(rest)
		if opts, ok := strings.CutPrefix(flag, "--mount="); ok && strings.Contains(","+opts+",", ",type=cache,") {
			for _, o := range strings.Split(opts, ",") {
				if target, ok := strings.CutPrefix(o, "target="); ok {
					caches = append(caches, target)
				}
			}
		}
	}
	goenv := exec.Command("go", "env", "GOMODCACHE", "GOCACHE")
	goenv.Env = []string{"PATH=" + os.Getenv("PATH"), "GOPATH=/go", "HOME=/root", "GOENV=off", "GOTOOLCHAIN=local"}
	out, err := goenv.Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	if want := strings.Fields(string(out)); !reflect.DeepEqual(slices.Sorted(slices.Values(caches)), slices.Sorted(slices.Values(want))) {
		t.Errorf("the build stage's cache mounts are %q, want golang's image's GOMODCACHE and GOCACHE, %q", caches, want)
	}
	if strings.Count(run, "--rootfs /rootfs") != 1 || !slices.Contains(dockerfileStages(t)[""], instruction{"COPY", "--from=build /rootfs/ /"}) {
		t.Fatalf("the build stage's RUN line does not lay out /rootfs, which the final stage copies: %s", run)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := exec.Command("bash", filepath.Join(clone, "hack", "version.sh")).Output()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	wantVersion, wantRevision := strings.TrimSpace(string(vs)), strings.TrimSpace(string(head))

	// Each platform's stage, as docker buildx builds them: the same line,
	// cross-compiling on this machine.
	for _, platform := range slices.Sorted(maps.Keys(platforms)) {
		rootfs := filepath.Join(t.TempDir(), "rootfs")
		line := strings.Replace(run, "--rootfs /rootfs", "--rootfs "+rootfs, 1)
		env := []string{
			"PATH=" + filepath.Dir(goBin) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"HOME=" + t.TempDir(), "GOTOOLCHAIN=local", "GOPROXY=off",
			"GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOCACHE=" + goEnv(t, "GOCACHE"),
		}
		build := "linux/" + runtime.GOARCH
		automatic := map[string]string{
			"TARGETPLATFORM": platform, "TARGETOS": "linux", "TARGETARCH": strings.TrimPrefix(platform, "linux/"),
			"BUILDPLATFORM": build, "BUILDOS": "linux", "BUILDARCH": runtime.GOARCH,
		}
		for _, a := range args {
			name, value, hasDefault := strings.Cut(a.Args, "=")
			if v, ok := automatic[name]; ok {
				env = append(env, name+"="+v)
			} else if hasDefault {
				env = append(env, name+"="+strings.Trim(value, `"`))
			}
		}
		sh := exec.Command("/bin/sh", "-c", line)
		sh.Dir, sh.Env = src, env
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("the build stage's RUN line for %s, %s: %v\n%s", platform, line, err, out)
		}

		// hack/image.sh --rootfs in the clone, as its user runs it.
		want := filepath.Join(t.TempDir(), "rootfs")
		imageShIn(t, clone, "--platform", platform, "--rootfs", want)
		got, wanted := dirFiles(t, rootfs), dirFiles(t, want)
		if !reflect.DeepEqual(got, wanted) {
			gj, _ := json.MarshalIndent(got, "", "  ")
			wj, _ := json.MarshalIndent(wanted, "", "  ")
			t.Errorf("the build stage's files for %s differ from hack/image.sh --rootfs's:\nbuild stage: %s\nhack/image.sh: %s", platform, gj, wj)
		}
		if platform != hostPlatform() {
			continue
		}
		var v struct {
			Version, Revision string
			Modified          bool
		}
		out, err := exec.Command(filepath.Join(rootfs, "vitals"), "version", "-o", "json").Output()
		if err != nil || json.Unmarshal(out, &v) != nil {
			t.Fatalf("the build stage's vitals version -o json: %v\n%s", err, out)
		}
		if v.Version != wantVersion || v.Revision != wantRevision || v.Modified {
			t.Errorf("the build stage's vitals is version %q of commit %q (modified %v), want %q of %q, unmodified", v.Version, v.Revision, v.Modified, wantVersion, wantRevision)
		}
	}
}

// goEnv is go env NAME of this machine.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// dirFiles lists the files under dir, by path from dir: their type, mode
// and content (not their owners or times, which the layer sets).
func dirFiles(t *testing.T, dir string) map[string]file {
	t.Helper()
	files := map[string]file{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := file{Type: "dir", Mode: strconv.FormatInt(int64(info.Mode().Perm()), 8)}
		if info.Mode()&fs.ModeSticky != 0 {
			f.Mode = "1" + f.Mode
		}
		if info.Mode().IsRegular() {
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(content)
			f.Type, f.Size, f.SHA256 = "file", int64(len(content)), hex.EncodeToString(sum[:])
		} else if !info.IsDir() {
			f.Type = info.Mode().Type().String()
		}
		rel, _ := filepath.Rel(dir, path)
		files["/"+rel] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// podman load reads hack/image.sh's archive of both platforms and keeps,
// under the image's name, the image for this machine's platform.
func TestPodmanLoadsTheArchive(t *testing.T) {
	a := readShared(t)
	host := a.host(t)
	p := newPodman(t)
	name := a.desc.Annotations["org.opencontainers.image.ref.name"]
	out := p.run("load", "-i", sharedArchive(t))
	if !strings.Contains(out, "Loaded image: "+name) && !strings.Contains(out, "Loaded image(s): "+name) {
		t.Errorf("podman load of hack/image.sh's archive says %q, want it loaded as %s", out, name)
	}
	config, err := host.image.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(p.run("image", "inspect", "--format", "{{.Id}} {{.Os}}/{{.Architecture}} {{.Config.User}} {{.Config.Entrypoint}}", name))
	if want := config.Hex + " " + hostPlatform() + " 65532:65532 [/vitals]"; got != want {
		t.Errorf("podman image inspect %s: %q, want %q (the archive's %s image)", name, got, want, hostPlatform())
	}
}

// A release publishes the archive as docs/install.md says, with skopeo copy
// --all --preserve-digests oci-archive:dist/vitals-image.tar
// docker://ghcr.io/vitals-dev/vitals:vX.Y.Z: the registry then serves,
// under the tag, the archive's image index, of the same digest, and each
// platform's image with the same manifest, configuration and layer. (The
// registry here is go-containerregistry's, on loopback over HTTP, which
// stands for ghcr.io.)
func TestSkopeoPublishesBothPlatforms(t *testing.T) {
	need(t, "skopeo", "to push the archive to a registry, as a release does")
	a := readShared(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	tag := a.images[a.platforms[0]].cf.Config.Labels["org.opencontainers.image.version"]
	dest := strings.TrimPrefix(srv.URL, "http://") + "/vitals-dev/vitals:" + tag
	cmd := exec.Command("skopeo", "copy", "--all", "--preserve-digests", "--dest-tls-verify=false", "oci-archive:"+sharedArchive(t), "docker://"+dest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy --all of the archive to %s: %v\n%s", dest, err, out)
	}
	// What the registry serves, read as a client pulls it (the OCI
	// distribution API): the tag, then each image by its digest.
	index := pull(t, srv.URL, "vitals-dev/vitals", tag, types.OCIImageIndex)
	raw, err := a.index.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(index, raw) {
		t.Errorf("the registry serves as %s:\n%s\nwant the archive's image index, %s:\n%s", tag, index, a.desc.Digest, raw)
	}
	for _, p := range a.platforms {
		img := a.images[p]
		manifest := pull(t, srv.URL, "vitals-dev/vitals", img.desc.Digest.String(), types.OCIManifestSchema1)
		if raw, err := img.image.RawManifest(); err != nil || !bytes.Equal(manifest, raw) {
			t.Errorf("the registry serves as the %s image %s:\n%s\nwant the archive's:\n%s", p, img.desc.Digest, manifest, raw)
		}
		config, _ := img.image.ConfigName()
		layers, _ := img.image.Layers()
		for _, d := range []v1.Hash{config, digestOf(t, layers[0])} {
			resp, err := http.Head(srv.URL + "/v2/vitals-dev/vitals/blobs/" + d.String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("the registry has no blob %s of the %s image: HEAD says %s", d, p, resp.Status)
			}
		}
	}
}

// pull is the manifest that the registry at url serves as repo:reference,
// of the media type want, checked against the digest it says it has.
func pull(t *testing.T, url, repo, reference string, want types.MediaType) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/v2/"+repo+"/manifests/"+reference, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", string(want))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != string(want) {
		t.Fatalf("the registry serves %s:%s as %s, a %q, want a %s:\n%s", repo, reference, resp.Status, resp.Header.Get("Content-Type"), want, body)
	}
	sum := sha256.Sum256(body)
	if got := "sha256:" + hex.EncodeToString(sum[:]); resp.Header.Get("Docker-Content-Digest") != got {
		t.Errorf("the registry says %s:%s is %s, and it is %s", repo, reference, resp.Header.Get("Docker-Content-Digest"), got)
	}
	return body
}

// digestOf is the digest of layer.
func digestOf(t *testing.T, layer v1.Layer) v1.Hash {
	t.Helper()
	d, err := layer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// hack/image.sh refuses what it cannot do, with exit 2 and the reason,
// before it builds anything.
func TestImageShRefusesBadArguments(t *testing.T) {
	existing := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--platform", "linux/s390x"}, "--platform linux/s390x: the image is built for linux/amd64 and linux/arm64"},
		{[]string{"--frobnicate"}, "unknown flag --frobnicate"},
		{[]string{"a.tar", "b.tar"}, "one OUT only, not a.tar and b.tar"},
		{[]string{"--platform", "linux/amd64", "--rootfs", existing}, existing + " exists: --rootfs wants a new directory"},
		{[]string{"--rootfs", filepath.Join(existing, "new")}, "--rootfs DIR lays out one platform's files: say which with --platform linux/amd64 or linux/arm64"},
		{[]string{"--rootfs", existing, "a.tar"}, "--rootfs DIR lays out files only: no OUT with it"},
	} {
		cmd := exec.Command("bash", append([]string{filepath.Join(root, "hack", "image.sh")}, tc.args...)...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("hack/image.sh %s: exit %d (%v), %q; want exit 2 saying %q", strings.Join(tc.args, " "), code, err, out, tc.want)
		}
	}
}

// The image's name is repository:version, for the versions hack/version.sh
// gives; one that cannot be a tag is refused, naming it.
func TestRef(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"dev", "ghcr.io/vitals-dev/vitals:dev"},
		{"v0.1.0", "ghcr.io/vitals-dev/vitals:v0.1.0"},
		{"v0.1.1-snapshot-89924ee", "ghcr.io/vitals-dev/vitals:v0.1.1-snapshot-89924ee"},
		{"v0.1.1-snapshot-89924ee-dirty", "ghcr.io/vitals-dev/vitals:v0.1.1-snapshot-89924ee-dirty"},
		{"v1.0.0+meta", `version "v1.0.0+meta" cannot be an image tag`},
		{"", `version "" cannot be an image tag`},
	} {
		got, err := ref(tc.version)
		s := got.String()
		if err != nil {
			s = err.Error()
		}
		if !strings.HasPrefix(s, tc.want) {
			t.Errorf("ref(%q) = %q, want %q", tc.version, s, tc.want)
		}
	}
}

// -rootfs takes each platform's directory once, as PLATFORM=DIR, for the
// platforms the image is built for; anything else is refused, naming it.
func TestRootfsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the flags' String, or the last error
	}{
		{[]string{"linux/amd64=/a"}, "linux/amd64=/a"},
		{[]string{"linux/arm64=/b", "linux/amd64=/a"}, "linux/amd64=/a linux/arm64=/b"},
		{[]string{"linux/amd64=/a", "linux/amd64=/b"}, "linux/amd64 is given twice"},
		{[]string{"linux/s390x=/a"}, `"linux/s390x=/a": want PLATFORM=DIR, PLATFORM linux/amd64 or linux/arm64`},
		{[]string{"/a"}, `"/a": want PLATFORM=DIR`},
		{[]string{"linux/amd64="}, `"linux/amd64=": want PLATFORM=DIR`},
	} {
		r := rootfsFlags{}
		got := ""
		for _, a := range tc.args {
			if err := r.Set(a); err != nil {
				got = err.Error()
			}
		}
		if got == "" {
			got = r.String()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("-rootfs %s: %q, want %q", strings.Join(tc.args, " -rootfs "), got, tc.want)
		}
	}
}
