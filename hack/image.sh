#!/usr/bin/env bash
# vitals's container image, built without a container daemon:
#
#   hack/image.sh [OUT]
#       an OCI image archive, OUT (default dist/vitals-image.tar): an OCI image layout in a tar,
#       whose index.json names ghcr.io/vitals-dev/vitals:VERSION an image index of two images,
#       linux/amd64 and linux/arm64, each with the static vitals of its platform: the
#       multi-platform image that a registry serves under that name (skopeo copy --all pushes it
#       so). podman load, skopeo (oci-archive:OUT) and containerd's import read it; podman load
#       takes this machine's platform's image from it.
#   hack/image.sh --platform linux/amd64|linux/arm64 [OUT]
#       an archive of that platform's image only, named the same
#   hack/image.sh --platform ... --rootfs DIR
#       only the image's files for that platform, laid out in DIR (a new directory): what the
#       Dockerfile's build stage runs
#
# The image is FROM scratch, with what vitals needs: a static vitals (CGO_ENABLED=0) as /vitals,
# its entrypoint; /etc/passwd and /etc/group naming root and nonroot (65532:65532, the user it
# runs as); the CA certificates of this machine (Debian's ca-certificates) at
# /etc/ssl/certs/ca-certificates.crt; and a /tmp that any user can write (1777), where a non-root
# vitals puts its management socket. hack/image/main.go makes of each platform's files one layer,
# the image's configuration (the Dockerfile's final stage says the same: hack/image/image_test.go
# compares the two) and the archive, with go-containerregistry. Every file time and the image's
# creation time are SOURCE_DATE_EPOCH, by default the commit's time: one commit gives one archive,
# byte for byte.
#
# Environment: PLATFORM (as --platform, which wins; unset, both), VERSION (hack/version.sh's: the
# release tag at a clean HEAD, else v0.1.1-snapshot-abc1234 after v0.1.0), SOURCE_DATE_EPOCH (the
# commit's time), CA_CERTIFICATES (/etc/ssl/certs/ca-certificates.crt).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"

die() { echo "hack/image.sh: $*" >&2; exit 2; }

# The platforms the image is built for, in an image index by default.
all_platforms=(linux/amd64 linux/arm64)
platform=${PLATFORM:-}
rootfs_only= out=
while [ $# -gt 0 ]; do
  case $1 in
  --platform) platform=${2:?--platform needs linux/amd64 or linux/arm64}; shift 2 ;;
  --platform=*) platform=${1#*=}; shift ;;
  --rootfs) rootfs_only=${2:?--rootfs needs a directory}; shift 2 ;;
  -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) die "unknown flag $1 (see hack/image.sh --help)" ;;
  *) [ -z "$out" ] || die "one OUT only, not $out and $1"; out=$1; shift ;;
  esac
done
case $platform in
''|linux/amd64|linux/arm64) ;;
*) die "--platform $platform: the image is built for linux/amd64 and linux/arm64" ;;
esac
[ -z "$rootfs_only" ] || [ -z "$out" ] || die "--rootfs DIR lays out files only: no OUT with it"
[ -z "$rootfs_only" ] || [ -n "$platform" ] || die "--rootfs DIR lays out one platform's files: say which with --platform linux/amd64 or linux/arm64"

# The release binaries' version (hack/version.sh): the tag v0.1.0, or a snapshot after it.
VERSION=${VERSION:-$(bash hack/version.sh)}
revision=$(git rev-parse HEAD 2>/dev/null || true)
certs=${CA_CERTIFICATES:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$certs" ] || die "no CA certificates at $certs: install Debian's ca-certificates (apt-get install ca-certificates), or name a bundle in CA_CERTIFICATES"

# rootfs PLATFORM DIR: the image's files for PLATFORM, in a new directory DIR, each with its mode set here (whatever the
# umask): directories 0755, files 0644, vitals 0755, /tmp 1777. Owners are the builder's: the
# layer and the Dockerfile's COPY make them root's.
rootfs() {
  local platform=$1 dir=$2
  [ ! -e "$dir" ] || die "$dir exists: --rootfs wants a new directory"
  install -d -m 0755 "$dir" "$dir/etc" "$dir/etc/ssl" "$dir/etc/ssl/certs"
  install -d -m 1777 "$dir/tmp"
  # No home directories (nothing in the image writes one): /nonexistent says so, as Debian's
  # nobody does.
  printf '%s\n' 'root:x:0:0:root:/nonexistent:/sbin/nologin' 'nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin' >"$dir/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$dir/etc/group"
  chmod 0644 "$dir/etc/passwd" "$dir/etc/group"
  install -m 0644 "$certs" "$dir/etc/ssl/certs/ca-certificates.crt"
  # -trimpath and the fixed version make the binary the same wherever it is built from one commit.
  # From a git work tree, vitals version says its commit (as the revision label does), whatever
  # GOFLAGS says. -tags grpcnotrace as hack/release.sh builds it.
  CGO_ENABLED=0 GOOS=${platform%/*} GOARCH=${platform#*/} go build -trimpath -tags grpcnotrace ${revision:+-buildvcs=true} \
    -ldflags "-s -w -X github.com/vitals-dev/vitals/version.Version=$VERSION" \
    -o "$dir/vitals" ./cmd/vitals
  chmod 0755 "$dir/vitals"
}

if [ -n "$rootfs_only" ]; then
  rootfs "$platform" "$rootfs_only"
  exit 0
fi

out=${out:-dist/vitals-image.tar}
case $out in /*) ;; *) out=$PWD/$out ;; esac
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
platforms=("${all_platforms[@]}")
[ -z "$platform" ] || platforms=("$platform")
flags=()
for p in "${platforms[@]}"; do
  rootfs "$p" "$tmp/${p//\//-}"
  flags+=(-rootfs "$p=$tmp/${p//\//-}")
done
(cd hack/image && go run . "${flags[@]}" -out "$out" \
  -version "$VERSION" -revision "$revision" -created "$SOURCE_DATE_EPOCH")
list="${platforms[*]}"
echo "$out: ghcr.io/vitals-dev/vitals:$VERSION (${list// /, })"
