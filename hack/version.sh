#!/usr/bin/env bash
# The version of vitals that this work tree builds, as hack/release.sh stamps its binaries and
# hack/image.sh tags its image:
#
#   bash hack/version.sh      prints e.g. v0.1.0, or v0.1.1-snapshot-abc1234[-dirty]
#
# The tag vX.Y.Z at HEAD when the work tree is clean: a release (the root module's tags are the
# release's: v0.1.0, not cmd/vitals/v0.1.0, which is a module's). Anywhere else a snapshot of the
# commit, of the next patch version after the last tag, which sorts after the last release and
# before the next: v0.1.1-snapshot-abc1234 after v0.1.0, with -dirty when the work tree has
# changes, v0.0.1-snapshot-abc1234 before the first tag. Outside a git work tree: dev.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo dev
  exit 0
fi
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null) && git diff --quiet HEAD; then
  echo "$tag"
  exit 0
fi
last=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null) || last=v0.0.0
IFS=. read -r major minor patch <<<"${last#v}"
patch=${patch%%[-+]*}
version=v$major.$minor.$((patch + 1))-snapshot-$(git rev-parse --short HEAD)
git diff --quiet HEAD || version+=-dirty
echo "$version"
