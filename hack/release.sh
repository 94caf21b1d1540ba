#!/usr/bin/env bash
# The release's binaries, by one command:
#
#   bash hack/release.sh [DIR]       DIR defaults to dist/ (git-ignored)
#
# writes, for linux/amd64 and linux/arm64, the full build and the probe build (-tags vitals_probe,
# the one-shot CLI only), static (CGO_ENABLED=0), built with -trimpath and stamped with the
# version, and their SHA-256 checksums. Both are built with -tags grpcnotrace: without grpc's
# debug pages (golang.org/x/net/trace), whose templates would make the linker keep every exported
# method of every type, a third of the full build.
#
#   DIR/vitals-linux-amd64        DIR/vitals-probe-linux-amd64
#   DIR/vitals-linux-arm64        DIR/vitals-probe-linux-arm64
#   DIR/SHA256SUMS                (cd DIR && sha256sum -c SHA256SUMS)
#
# The version is hack/version.sh's: the tag vX.Y.Z at HEAD when the work tree is clean (a
# release), else a snapshot of the commit after the last tag, v0.1.1-snapshot-abc1234 after v0.1.0
# (with -dirty when the work tree has changes). vitals version says it, and hack/image.sh tags
# its image with the same. .goreleaser.yaml makes the same files with goreleaser, for those who release with it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$repo"
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"

platforms=(linux/amd64 linux/arm64)

die() { echo "hack/release.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on PATH: install Go 1.26.5 or later"
git rev-parse --git-dir >/dev/null 2>&1 || die "not a git work tree: the version comes from its tags"

version=$(bash hack/version.sh)

rm -f "$out"/vitals-linux-* "$out"/vitals-probe-linux-* "$out/SHA256SUMS"
names=()
for platform in "${platforms[@]}"; do
  goos=${platform%/*} goarch=${platform#*/}
  for flavour in full probe; do
    name=vitals-$goos-$goarch tags=(-tags grpcnotrace)
    if [ "$flavour" = probe ]; then
      name=vitals-probe-$goos-$goarch tags=(-tags vitals_probe,grpcnotrace)
    fi
    echo "hack/release.sh: $name ($version)"
    # -s -w: no symbol table or DWARF, as release binaries ship (a third smaller); -trimpath: no
    # path of this machine in the binary, so that the same commit builds the same bytes;
    # -buildvcs=true: the commit and its time in the binary (vitals version), whatever GOFLAGS says.
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=true "${tags[@]}" \
      -ldflags "-s -w -X github.com/vitals-dev/vitals/version.Version=$version" \
      -o "$out/$name" ./cmd/vitals || die "go build of $name failed"
    names+=("$name")
  done
done
(cd "$out" && sha256sum "${names[@]}" > SHA256SUMS)
echo "hack/release.sh: $out/SHA256SUMS: ${#names[@]} binaries of vitals $version"
