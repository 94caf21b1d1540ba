#!/usr/bin/env bash
# A real etcd and kube-apiserver on loopback, for the tests that talk to Kubernetes.
#
#   hack/kube-env.sh build       build both binaries into the cache (once), print their directory
#   hack/kube-env.sh up DIR [OWNER_PID]
#                                start etcd and kube-apiserver with their state in DIR (new or
#                                empty); write DIR/kubeconfig (admin), DIR/kubeconfig-restricted (a
#                                user with no rights until a test grants some) and DIR/env; print
#                                DIR/env. With OWNER_PID, everything comes down once that process
#                                has ended, even if it never calls down.
#   hack/kube-env.sh down DIR    stop what `up DIR` started (only those pids), and remove DIR (only
#                                a directory up made)
#   hack/kube-env.sh tools       build helm and kustomize into the cache (once), print their paths
#   hack/kube-env.sh tool NAME   print the path of helm or kustomize in the cache, built or not
#
# Both binaries are built from the Go module proxy in throw-away modules under the cache, never
# in this repository's modules: etcd from go.etcd.io/etcd/server/v3 (etcdmain.Main), and
# kube-apiserver from k8s.io/kubernetes, whose go.mod requires its staging modules as v0.0.0, so
# the throw-away module replaces each with the matching published v0.X.Y. A cold build takes
# minutes and a few GB of Go build cache; later runs find the binaries and start in seconds.
# helm (helm.sh/helm/v4, cmd/helm) and kustomize (sigs.k8s.io/kustomize/kustomize/v5), which the
# tests of deploy/helm and deploy/kustomize run, are built the same way, each in its own module.
#
# Environment: KUBE_VERSION (v1.37.2), ETCD_VERSION (v3.6.16), HELM_VERSION (v4.3.2),
# KUSTOMIZE_VERSION (v5.8.2: v5.8.3 and its kustomize/api v0.21.3 need Go 1.27), VITALS_TOOLS
# (the cache, default ${XDG_CACHE_HOME:-$HOME/.cache}/vitals-tools).
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
HELM_VERSION=${HELM_VERSION:-v4.3.2}
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.8.2}
TOOLS=${VITALS_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/vitals-tools}
BIN=$TOOLS/kube-$KUBE_VERSION-etcd-$ETCD_VERSION
LOG=$BIN/build.log

die() { echo "kube-env: $*" >&2; exit 1; }

# throwaway runs go in a throw-away module directory: no go.work, modules from the proxy. Its
# output goes to $LOG, and its end to stderr when it fails.
throwaway() {
  local dir=$1 log=$LOG
  shift
  if ! (cd "$dir" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 "$@") >>"$log" 2>&1; then
    echo "kube-env: in $dir: $* failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}

build_etcd() {
  local dir=$BIN/src/etcd
  rm -rf "$dir" && mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module throwaway/etcd

go 1.26
MOD
  cat >"$dir/main.go" <<'GO'
// Command etcd is etcd's own main, for tests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  throwaway "$dir" go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" || return 1
  throwaway "$dir" go mod tidy || return 1
  throwaway "$dir" go build -trimpath -o "$BIN/etcd.partial" . && mv "$BIN/etcd.partial" "$BIN/etcd"
}

build_apiserver() {
  local dir=$BIN/src/kube-apiserver minor=${KUBE_VERSION#v1.}
  minor=${minor%%.*}
  rm -rf "$dir" && mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module throwaway/kubeapiserver

go 1.26
MOD
  local gomod
  gomod=$(cd "$dir" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  [ -f "$gomod" ] || die "no go.mod for k8s.io/kubernetes@$KUBE_VERSION"
  # Every staging module k8s.io/kubernetes requires as v0.0.0 is published as v0.<minor>.<patch>.
  local edits=()
  for mod in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod" | sort -u); do
    edits+=("-replace=$mod=$mod@v0.${KUBE_VERSION#v1.}")
  done
  [ ${#edits[@]} -gt 0 ] || die "found no staging modules in $gomod"
  throwaway "$dir" go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION" "${edits[@]}" || return 1
  cat >"$dir/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
  throwaway "$dir" go mod tidy || return 1
  local pkg=k8s.io/component-base/version
  throwaway "$dir" go build -trimpath -ldflags "-X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor" \
    -o "$BIN/kube-apiserver.partial" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$BIN/kube-apiserver.partial" "$BIN/kube-apiserver"
}

build() {
  mkdir -p "$BIN"
  # Test packages start their API servers at the same time: one builds, the others wait for it.
  exec 9>"$BIN/.lock"
  flock 9
  if [ ! -x "$BIN/etcd" ]; then
    echo "kube-env: building etcd $ETCD_VERSION into $BIN (once)" >&2
    build_etcd || die "building etcd $ETCD_VERSION failed"
  fi
  if [ ! -x "$BIN/kube-apiserver" ]; then
    echo "kube-env: building kube-apiserver $KUBE_VERSION into $BIN (once; a cold build takes minutes)" >&2
    build_apiserver || die "building kube-apiserver $KUBE_VERSION failed"
  fi
  rm -rf "$BIN/src"
  flock -u 9
  echo "$BIN"
}

# tool NAME: the path of the cached helm or kustomize, NAME-VERSION in the cache (as
# internal/testenv's Tool names the tools it builds).
tool() {
  case $1 in
  helm) echo "$TOOLS/helm-$HELM_VERSION" ;;
  kustomize) echo "$TOOLS/kustomize-$KUSTOMIZE_VERSION" ;;
  *) die "no tool $1: helm or kustomize" ;;
  esac
}

# build_tool NAME MODULE VERSION PACKAGE [GO BUILD FLAGS...]: build PACKAGE of MODULE@VERSION
# into tool NAME's path, in a throw-away module that requires that version and no other.
build_tool() {
  local name=$1 module=$2 version=$3 pkg=$4 dir dest
  shift 4
  dir=$TOOLS/src/$name dest=$(tool "$name")
  rm -rf "$dir" && mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module throwaway/$name

go 1.26
MOD
  cat >"$dir/tools.go" <<GO
//go:build tools

package tools

import _ "$pkg"
GO
  throwaway "$dir" go mod edit -require="$module@$version" || return 1
  throwaway "$dir" go mod tidy || return 1
  throwaway "$dir" go build -trimpath "$@" -o "$dest.partial" "$pkg" && mv "$dest.partial" "$dest"
}

tools() {
  mkdir -p "$TOOLS"
  LOG=$TOOLS/tools-build.log
  exec 9>"$TOOLS/.tools.lock"
  flock 9
  if [ ! -x "$(tool helm)" ]; then
    echo "kube-env: building helm $HELM_VERSION into $TOOLS (once)" >&2
    build_tool helm helm.sh/helm/v4 "$HELM_VERSION" helm.sh/helm/v4/cmd/helm \
      -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" ||
      die "building helm $HELM_VERSION failed"
  fi
  if [ ! -x "$(tool kustomize)" ]; then
    echo "kube-env: building kustomize $KUSTOMIZE_VERSION into $TOOLS (once)" >&2
    build_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5 \
      -ldflags "-s -w" || die "building kustomize $KUSTOMIZE_VERSION failed"
  fi
  rm -rf "$TOOLS/src"
  flock -u 9
  tool helm
  tool kustomize
}

# free_port prints a loopback TCP port that nothing listens on now.
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "found no free loopback port"
}

# running DIR NAME: whether the pid in DIR/NAME.pid is alive.
running() { [ -f "$1/$2.pid" ] && kill -0 "$(cat "$1/$2.pid")" 2>/dev/null; }

# wait_ready DIR URL SECONDS: until the API server answers /readyz with ok (0), its process
# has ended (1), or SECONDS have passed (2).
wait_ready() {
  local deadline=$((SECONDS + $3))
  while [ $SECONDS -lt $deadline ]; do
    if curl -fsSk --max-time 2 -H "Authorization: Bearer $(cat "$1/admin.token")" "$2/readyz" 2>/dev/null | grep -qx ok; then
      return 0
    fi
    running "$1" apiserver || return 1
    sleep 0.2
  done
  return 2
}

start_etcd() {
  local dir=$1 port peer
  for attempt in 1 2 3; do
    port=$(free_port) peer=$(free_port)
    "$BIN/etcd" --name vitals-test --data-dir "$dir/etcd" \
      --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
      --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
      --initial-cluster "vitals-test=http://127.0.0.1:$peer" \
      --log-level warn >"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/etcd.pid"
    for _ in $(seq 100); do
      if curl -fsS --max-time 1 "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"health":"true"'; then
        echo "$port" >"$dir/etcd.port"
        return 0
      fi
      running "$dir" etcd || break
      sleep 0.1
    done
    stop "$dir" etcd
  done
  echo "kube-env: etcd did not start; the end of its log ($dir/etcd.log):" >&2
  tail -n 30 "$dir/etcd.log" >&2
  return 1
}

# start_apiserver DIR: start kube-apiserver on DIR/apiserver.port. The first start chooses the
# port, and chooses again if another process took it meanwhile; a restart keeps it.
start_apiserver() {
  local dir=$1 port chosen=no status
  if [ ! -f "$dir/apiserver.port" ]; then
    chosen=yes
  fi
  for attempt in 1 2 3; do
    [ $chosen = no ] || free_port >"$dir/apiserver.port"
    port=$(cat "$dir/apiserver.port")
    "$BIN/kube-apiserver" \
      --etcd-servers "http://127.0.0.1:$(cat "$dir/etcd.port")" \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
      --endpoint-reconciler-type none \
      --cert-dir "$dir/certs" \
      --authorization-mode RBAC \
      --token-auth-file "$dir/tokens.csv" \
      --service-account-issuer https://kubernetes.default.svc.cluster.local \
      --service-account-key-file "$dir/sa.pub" --service-account-signing-key-file "$dir/sa.key" \
      --service-cluster-ip-range 10.96.0.0/16 \
      --disable-admission-plugins ServiceAccount \
      >>"$dir/apiserver.log" 2>&1 &
    echo $! >"$dir/apiserver.pid"
    status=0
    wait_ready "$dir" "https://127.0.0.1:$port" 60 || status=$?
    [ $status -eq 0 ] && return 0
    stop "$dir" apiserver
    if [ $status -eq 1 ] && [ $chosen = yes ] && grep -q "address already in use" "$dir/apiserver.log"; then
      echo "kube-env: port $port was taken; trying another" >&2
      continue
    fi
    break
  done
  echo "kube-env: the API server on port $port did not become ready; the end of its log ($dir/apiserver.log):" >&2
  tail -n 30 "$dir/apiserver.log" >&2
  return 1
}

# stop DIR NAME: stop the process in DIR/NAME.pid, SIGKILL after 10s.
stop() {
  local dir=$1 pid
  [ -f "$dir/$2.pid" ] || return 0
  pid=$(cat "$dir/$2.pid")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/$2.pid"
}

kubeconfig() { # kubeconfig FILE USER TOKEN PORT
  cat >"$1" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: vitals-test
  cluster:
    server: https://127.0.0.1:$4
    insecure-skip-tls-verify: true
users:
- name: $2
  user:
    token: $3
contexts:
- name: vitals-test
  context: {cluster: vitals-test, user: $2, namespace: default}
current-context: vitals-test
YAML
}

# MARK names the file that says a directory is one `up` made, and that `down` may remove.
MARK=.kube-env

up() {
  local dir=$1 owner=${2:-}
  [ -n "$dir" ] || die "usage: $0 up DIR [OWNER_PID]"
  [ -z "$owner" ] || kill -0 "$owner" 2>/dev/null || die "owner pid $owner is not running"
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    die "$dir is not empty: up wants a new or empty directory, which down removes"
  fi
  command -v openssl >/dev/null || die "openssl is needed for the service-account key pair"
  command -v curl >/dev/null || die "curl is needed to see when the servers are ready"
  build >/dev/null
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  echo "made by $0 up; $0 down $dir stops its servers and removes it" >"$dir/$MARK"
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  local admin restricted
  admin=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n') restricted=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  echo "$admin" >"$dir/admin.token"
  # The admin is in system:masters; the restricted user has no rights until a test grants some.
  printf '%s,vitals-admin,vitals-admin,"system:masters"\n%s,vitals-restricted,vitals-restricted\n' "$admin" "$restricted" >"$dir/tokens.csv"
  chmod 600 "$dir/tokens.csv" "$dir/admin.token" "$dir/sa.key"
  if [ -n "$owner" ]; then
    # A test process that ends without calling down (a panic, go test's -timeout) leaves
    # nothing behind: this watcher brings everything down when its owner is gone.
    setsid bash "$0" watch "$dir" "$owner" </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/watcher.pid"
  fi
  start_etcd "$dir" || { down "$dir"; die "etcd did not start"; }
  start_apiserver "$dir" || { down "$dir"; die "kube-apiserver did not start"; }
  local port
  port=$(cat "$dir/apiserver.port")
  kubeconfig "$dir/kubeconfig" vitals-admin "$admin" "$port"
  kubeconfig "$dir/kubeconfig-restricted" vitals-restricted "$restricted" "$port"
  cat >"$dir/env" <<ENV
KUBE_ENV_DIR=$dir
KUBE_SERVER=https://127.0.0.1:$port
KUBECONFIG=$dir/kubeconfig
KUBECONFIG_RESTRICTED=$dir/kubeconfig-restricted
KUBE_RESTRICTED_USER=vitals-restricted
ENV
  cat "$dir/env"
}

# watch DIR OWNER: wait until the pid OWNER has ended, then bring DIR down.
watch() {
  while kill -0 "$2" 2>/dev/null && [ -f "$1/$MARK" ]; do
    sleep 1
  done
  rm -f "$1/watcher.pid"
  down "$1"
}

# down DIR: stop what up started there and remove DIR. A directory up did not make is left
# alone (an error); one that is gone already is fine.
down() {
  local dir=$1
  [ -n "$dir" ] || die "usage: $0 down DIR"
  [ -e "$dir" ] || return 0
  [ -f "$dir/$MARK" ] || die "$dir was not made by $0 up (no $MARK in it): not touching it"
  stop "$dir" apiserver
  stop "$dir" etcd
  if [ -f "$dir/watcher.pid" ]; then
    kill "$(cat "$dir/watcher.pid")" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
build) build ;;
tools) tools ;;
tool) tool "${2:?usage: $0 tool helm|kustomize}" ;;
up) up "${2:-}" "${3:-}" ;;
watch) watch "${2:?}" "${3:?}" ;;
down) down "${2:-}" ;;
# For tests of an API server that goes away and comes back, on the same port with the same data.
stop-apiserver) stop "${2:?usage: $0 stop-apiserver DIR}" apiserver ;;
start-apiserver) start_apiserver "${2:?usage: $0 start-apiserver DIR}" ;;
*) die "usage: $0 build | tools | tool NAME | up DIR [OWNER_PID] | down DIR | stop-apiserver DIR | start-apiserver DIR" ;;
esac
