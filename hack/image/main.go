// Command image builds vitals's container image without a container daemon,
// for hack/image.sh. From the directories that hold the image's files for
// each platform (which hack/image.sh --rootfs lays out, as the Dockerfile's
// build stage does), it makes for each one layer and the image's
// configuration (the Dockerfile's final stage says the same; image_test.go
// holds the two together), and writes an OCI image layout in a tar, which
// podman load, skopeo (oci-archive:FILE) and containerd's import read:
//
//	go run . -rootfs linux/amd64=DIR [-rootfs linux/arm64=DIR] -out FILE [-version dev] [-revision SHA] [-created UNIX]
//
// With one -rootfs, the archive's index.json names that platform's image;
// with more, it names an image index of them, one image per platform, as a
// registry serves a multi-platform image (skopeo copy --all pushes it so).
//
// go-containerregistry makes the images and writes the layout; this command
// decides what goes in them. Every time in the archive is -created
// (hack/image.sh passes SOURCE_DATE_EPOCH, by default the commit's time), so
// the same files and flags give the same archive, byte for byte.
//
// It is a module of its own so that neither the library nor cmd/vitals
// depends on go-containerregistry.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What the image is: the Dockerfile's final stage says the same (USER,
// ENTRYPOINT, CMD, ENV, LABEL), and image_test.go compares the two builds.
const (
	// repository is where the image is published; the archive names the
	// image repository:VERSION.
	repository = "ghcr.io/vitals-dev/vitals"
	// user is the image's user: distroless's nonroot, 65532, which no
	// account of a host has; the image's /etc/passwd names it.
	user = "65532:65532"
)

var (
	// entrypoint is vitals itself: a container's arguments are a vitals
	// command (run, probe, wait, checks...).
	entrypoint = []string{"/vitals"}
	// cmd, without arguments, is the agent on the file that the examples
	// mount; a missing file is said at once (exit 2), naming it.
	cmd = []string{"run", "-c", "/etc/vitals/vitals.yaml"}
	// env is the PATH that Docker and buildah give an image that sets none,
	// said here so that both builds say it; exec checks find commands there.
	env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
)

// build is what one build of the image says of itself.
type build struct {
	version  string    // the image's tag and vitals's version: hack/version.sh's, or dev
	revision string    // the commit, or empty
	created  time.Time // the time of every file and of the image
}

// labels are the image's org.opencontainers.image labels: those that do not
// depend on the build are the Dockerfile's too, and so are the others when
// docker build is given the same --build-arg VERSION, REVISION and CREATED.
func labels(b build) map[string]string {
	const site = "https://github.com/vitals-dev/vitals"
	return map[string]string{
		"org.opencontainers.image.title":         "vitals",
		"org.opencontainers.image.description":   "Startup, liveness and readiness checks that mean what they say: the vitals agent and CLI",
		"org.opencontainers.image.url":           site,
		"org.opencontainers.image.source":        site,
		"org.opencontainers.image.documentation": site + "/blob/main/docs/image.md",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.version":       b.version,
		"org.opencontainers.image.revision":      b.revision,
		"org.opencontainers.image.created":       b.created.UTC().Format(time.RFC3339),
	}
}

// platforms are those the image is built for, by GOOS/GOARCH: arm64 is the
// v8 variant, as registries and docker buildx name it.
var platforms = map[string]v1.Platform{
	"linux/amd64": {OS: "linux", Architecture: "amd64"},
	"linux/arm64": {OS: "linux", Architecture: "arm64", Variant: "v8"},
}

// ref is the image's name in the archive: repository:version.
func ref(version string) (name.Tag, error) {
	tag, err := name.NewTag(repository+":"+version, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("version %q cannot be an image tag: %w", version, err)
	}
	return tag, nil
}

// rootfsFlags are the -rootfs flags: the directory of each platform's
// files, by platform.
type rootfsFlags map[string]string

func (r rootfsFlags) String() string {
	var s []string
	for _, p := range slices.Sorted(maps.Keys(r)) {
		s = append(s, p+"="+r[p])
	}
	return strings.Join(s, " ")
}

func (r rootfsFlags) Set(v string) error {
	p, dir, ok := strings.Cut(v, "=")
	if _, known := platforms[p]; !ok || !known || dir == "" {
		return fmt.Errorf("%q: want PLATFORM=DIR, PLATFORM linux/amd64 or linux/arm64", v)
	}
	if _, twice := r[p]; twice {
		return fmt.Errorf("%s is given twice", p)
	}
	r[p] = dir
	return nil
}

const usage = "usage: image -rootfs linux/amd64=DIR [-rootfs linux/arm64=DIR] -out FILE [-version dev] [-revision SHA] [-created UNIX]"

func main() {
	rootfs := rootfsFlags{}
	flag.Var(rootfs, "rootfs", "`PLATFORM=DIR`: the image's files for PLATFORM (linux/amd64 or linux/arm64), laid out by hack/image.sh --rootfs DIR; once per platform")
	out := flag.String("out", "", "the OCI image archive to write")
	version := flag.String("version", "dev", "vitals's version: the image's tag and its version label")
	revision := flag.String("revision", "", "the commit the image is built from")
	created := flag.Int64("created", 0, "the image's time, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	flag.Parse()
	if flag.NArg() > 0 || len(rootfs) == 0 || *out == "" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	b := build{version: *version, revision: *revision, created: time.Unix(*created, 0).UTC()}
	if err := write(*out, rootfs, b); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// write builds the image of each platform's files and writes their archive
// to out, in place of what was there only once it is whole: of one
// platform, the image; of more, an image index of them, in the order of
// their platforms' names.
func write(out string, rootfs rootfsFlags, b build) error {
	tag, err := ref(b.version)
	if err != nil {
		return err
	}
	var adds []mutate.IndexAddendum
	for _, name := range slices.Sorted(maps.Keys(rootfs)) {
		p := platforms[name]
		img, err := image(rootfs[name], p, b)
		if err != nil {
			return fmt.Errorf("the image for %s: %w", name, err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: notArtifact{img}, Descriptor: v1.Descriptor{Platform: &p}})
	}
	dir, err := os.MkdirTemp("", "vitals-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write an OCI layout in %s: %w", dir, err)
	}
	// The image's name for the tools that load the archive: podman and
	// skopeo read the OCI annotation, containerd its own.
	named := layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.String(),
		"io.containerd.image.name":          tag.String(),
	})
	if len(adds) == 1 {
		err = l.AppendImage(adds[0].Add.(v1.Image), named, layout.WithPlatform(*adds[0].Platform))
	} else {
		err = l.AppendIndex(mutate.AppendManifests(empty.Index, adds...), named)
	}
	if err != nil {
		return fmt.Errorf("write the image into the OCI layout %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".vitals-image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := tarDir(f, dir, b.created, true); err != nil {
		f.Close()
		return fmt.Errorf("write the archive of the OCI layout %s: %w", dir, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), out)
}

// notArtifact is an image whose descriptor says no artifactType: it is an
// image, as docker buildx's indexes say of theirs (go-containerregistry
// otherwise gives it its config's media type, which the OCI image spec asks
// of the referrers API's answers, not of an index).
type notArtifact struct{ v1.Image }

// ArtifactType is "", for go-containerregistry's partial.Descriptor.
func (notArtifact) ArtifactType() (string, error) { return "", nil }

// layerCompression is gzip's default level (6): on vitals's binary, level 9
// makes a layer smaller by less than 1% and takes two and a half times as
// long, for each platform.
const layerCompression = gzip.DefaultCompression

// image is the image of the files in rootfs: one layer, and the
// configuration above.
func image(rootfs string, p v1.Platform, b build) (v1.Image, error) {
	var files bytes.Buffer
	if err := tarDir(&files, rootfs, b.created, false); err != nil {
		return nil, fmt.Errorf("make a layer of %s: %w", rootfs, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(layerCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("make a layer of %s: %w", rootfs, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: b.created}, CreatedBy: "hack/image.sh", Comment: "the files of hack/image.sh --rootfs"},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: b.created}
	cf.Config = v1.Config{
		User:       user,
		Entrypoint: entrypoint,
		Cmd:        cmd,
		Env:        env,
		Labels:     labels(b),
	}
	return mutate.ConfigFile(img, cf)
}

// Special mode bits as tar writes them (archive/tar's c_ISUID, c_ISGID and
// c_ISVTX): /tmp's sticky bit is one.
const (
	tarSetuid = 0o4000
	tarSetgid = 0o2000
	tarSticky = 0o1000
)

// tarDir writes the files under dir to w as a tar, in lexical order, owned
// by root and dated mtime, without dir itself. With normalize, files are
// 0644 and directories 0755 (an OCI layout's); else each keeps its mode,
// special bits included (a layer's). Only directories and regular files
// may be there.
func tarDir(w io.Writer, dir string, mtime time.Time, normalize bool) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Mode: int64(info.Mode().Perm())}
		m := info.Mode()
		if m&fs.ModeSetuid != 0 {
			h.Mode |= tarSetuid
		}
		if m&fs.ModeSetgid != 0 {
			h.Mode |= tarSetgid
		}
		if m&fs.ModeSticky != 0 {
			h.Mode |= tarSticky
		}
		switch {
		case m.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if normalize {
				h.Mode = 0o755
			}
		case m.IsRegular():
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
			if normalize {
				h.Mode = 0o644
			}
		default:
			return fmt.Errorf("%s is a %v: only directories and regular files go into the image", path, m.Type())
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(tw, f)
		if err == nil && n != h.Size {
			err = fmt.Errorf("%s changed while it was read", path)
		}
		return err
	})
	return errors.Join(err, tw.Close())
}
