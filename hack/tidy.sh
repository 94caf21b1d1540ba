#!/usr/bin/env bash
# go mod tidy in a module of this repository, alone, as its users build it: without go.work.
#
#   bash hack/tidy.sh DIR...          e.g. bash hack/tidy.sh cmd/vitals grpchealth
#
# The modules require each other at the release version (v0.1.0), which no proxy serves before
# it is tagged, and go.mod has no replace: so this serves them from the work tree, with
# hack/release/modproxy, in a module cache of its own (a module cache never changes, and the work
# tree does). Other modules come from the module cache in use, else from GOPROXY as usual.
# The work tree's sums of the repository's own modules are left out of go.sum: they are not
# those of the tags, and go.work needs none.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"

[ $# -gt 0 ] || { echo "usage: bash hack/tidy.sh DIR... (a module's directory: cmd/vitals, grpchealth, bench, ...)" >&2; exit 2; }
dirs=()
for d in "$@"; do
  [ -f "$d/go.mod" ] || { echo "hack/tidy.sh: $d: no go.mod there" >&2; exit 2; }
  dirs+=("$(cd "$d" && pwd)")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && go run ./hack/release/modproxy "$tmp/proxy" >/dev/null)
cache=$(go env GOMODCACHE)/cache/download
upstream=$(go env GOPROXY)

for d in "${dirs[@]}"; do
  echo "hack/tidy.sh: go mod tidy in ${d#"$repo"/}"
  (cd "$d" && GOWORK=off GOFLAGS="${GOFLAGS:-} -modcacherw" GOMODCACHE="$tmp/modcache" \
    GOPROXY="file://$tmp/proxy,file://$cache,$upstream" GONOSUMDB=github.com/vitals-dev/vitals \
    go mod tidy)
  if [ -f "$d/go.sum" ]; then
    sed -i '\#^github\.com/vitals-dev/vitals[ /]#d' "$d/go.sum"
  fi
done
