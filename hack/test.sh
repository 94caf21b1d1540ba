#!/usr/bin/env bash
# Every test of every module of the workspace, set up first, on a Debian machine with Go:
#
#   bash hack/test.sh [go test flags...]     e.g. -tags soak -timeout 60m, or -run TestX
#
# It installs the system packages the tests need when it can (as root, with apt-get), builds the
# real etcd and kube-apiserver, helm and kustomize once (hack/kube-env.sh, cached under
# ~/.cache/vitals-tools), and
# runs `go test -race -timeout 20m` over every module. Where it cannot install what is missing, it
# says exactly what and fails: a test that would skip for want of a server is a test not run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"

# curl (the client a user probes with), openssl (the API server's service-account keys), the real
# servers the dependency kinds are tested against (each test starts its own, on a free loopback
# port), wrk (bench's load generator, whose test runs every benchmark briefly), util-linux
# (prlimit: the connection flood runs vitals under a low open-file limit), ca-certificates (the
# image's CA bundle), podman (which builds the Dockerfile, to compare it with hack/image.sh's
# image; it runs no container), skopeo (which publishes the image's archive, to a registry on
# loopback), git (the version of a build, the release's and the image's), python3-pika (the
# service of examples/stackstorm, a RabbitMQ client in Python, whose script a test runs), python3
# (the notify kind's sd_notify client), systemd (systemd-notify, a real sd_notify client) and
# chromium (the headless browser the status page's tests drive, through chromedp).
packages=(curl openssl postgresql redis-server rabbitmq-server nats-server wrk util-linux ca-certificates podman skopeo git python3-pika python3 systemd chromium)

command -v go >/dev/null || { echo "hack/test.sh: go is not on PATH: install Go 1.26.5 or later (https://go.dev/dl/)" >&2; exit 1; }
command -v dpkg >/dev/null || { echo "hack/test.sh: no dpkg: this is not a Debian machine; install the equivalents of: ${packages[*]}" >&2; exit 1; }
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "hack/test.sh: the tests need ${missing[*]}, which are not installed: run" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    echo "or run hack/test.sh as root, which installs them" >&2
    exit 1
  fi
fi

# Some tests need root: vitals run as another user (uid 65534), as PID 1 of a PID namespace, and
# the image's files in a chroot on a read-only root. As another user they fail, saying so.
if [ "$(id -u)" -ne 0 ]; then
  echo "hack/test.sh: as uid $(id -u), the tests that need root (vitals as another user, as PID 1, the image in a chroot) fail: run hack/test.sh as root to run them" >&2
fi

# The tests fail, rather than skip, when what they need is not there (internal/testenv).
export CI="${CI:-true}"
bash hack/kube-env.sh build >/dev/null
bash hack/kube-env.sh tools >/dev/null
timeout=(-timeout 20m)
for a in "$@"; do
  case $a in -timeout|-timeout=*) timeout=() ;; esac
done
go test -race "${timeout[@]}" "$@" $(go list -m -f '{{.Dir}}/...')
