#!/usr/bin/env bash
# The Kubeflow OIDC story, runnable: Pebble runs vitals, as in a charm's
# workload container, and vitals runs a stand-in authservice that answers 503
# while its provider setup fails, then 302. Pebble's checks ask vitals
# (layer.yaml), so `pebble health --level=ready`, as Juju's readiness probe,
# fails while vitals's readiness does. When its provider goes away the
# authservice answers 503 for good; vitals's live check fails and restarts it,
# and its hook records Pebble notices, which would wake the charm. Then vitals
# freezes (SIGSTOP): Pebble's check of its /livez fails, and Pebble restarts
# vitals, which starts the authservice again. `vitals events --follow` shows
# it all, `pebble notices` what the charm would get. Needs Go and curl:
# vitals, the authservice and Pebble (the version bench/go.mod pins, its
# module fetched into Go's module cache the first time) are built with go
# build. Takes under a minute; leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEFLOW_DIR PEBBLE XDG_CONFIG_HOME PATH
KUBEFLOW_DIR=$(mktemp -d)
PEBBLE="$KUBEFLOW_DIR/pebble"         # Pebble's directory: its layers, its state and its socket
XDG_CONFIG_HOME="$KUBEFLOW_DIR/config" # where the pebble command keeps what it listed
PATH="$KUBEFLOW_DIR/bin:$PATH"
unset PEBBLE_SOCKET
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$KUBEFLOW_DIR"' EXIT
export VITALS_API="$KUBEFLOW_DIR/vitals.sock"

echo "\$ go build -o \$DIR/bin/vitals ./cmd/vitals && go build -o \$DIR/authservice ./examples/kubeflow/authservice"
go build -o "$KUBEFLOW_DIR/bin/vitals" ./cmd/vitals
go build -o "$KUBEFLOW_DIR/authservice" ./examples/kubeflow/authservice
echo "\$ cd bench && go build -o \$DIR/bin/pebble github.com/canonical/pebble/cmd/pebble   # the Pebble bench/go.mod pins"
(cd bench && go build -o "$KUBEFLOW_DIR/bin/pebble" github.com/canonical/pebble/cmd/pebble)
mkdir -p "$PEBBLE/layers"
cp examples/kubeflow/layer.yaml "$PEBBLE/layers/001-authservice.yaml"
echo "\$ PEBBLE=\$DIR/pebble pebble run --http 127.0.0.1:38813 --verbose &   # as Juju runs it; its layer: examples/kubeflow/layer.yaml"
pebble run --http 127.0.0.1:38813 --verbose >"$KUBEFLOW_DIR/pebble.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$VITALS_API" ] && break; sleep 0.1; done
echo "\$ vitals events --follow &"
vitals events --follow >"$KUBEFLOW_DIR/events.txt" 2>/dev/null &
follow=$!
pids+=($follow)

code() { curl -s -o /dev/null -w '%{http_code}' "$1" || true; }
# health LEVEL: pebble health, and what Juju's probe of LEVEL gets.
health() {
  echo "\$ pebble health --level=$1"
  pebble health --level="$1" && true
  echo "(exit $?; Juju's probe of /v1/health?level=$1 gets $(code "http://127.0.0.1:38813/v1/health?level=$1"))"
}
# refresh: Pebble asks vitals's /readyz now, rather than at its next period.
refresh() {
  echo "\$ pebble check vitals-ready --refresh >/dev/null   # Pebble asks vitals's /readyz now, not at its next period"
  pebble check vitals-ready --refresh >/dev/null
}
# gone PID: whether PID has exited (a zombie has).
gone() { case "$(ps -o stat= -p "$1")" in "" | Z*) echo gone ;; *) echo "still running" ;; esac; }
# started: the pid of the authservice vitals started last.
started() { vitals events | awk '$3 == "service-started" { pid = $6 } END { print pid }'; }
echo
echo "\$ vitals wait --timeout 30s --status 503 --body 'setup .*statuscode: 503' 'http://127.0.0.1:18558/readyz?verbose'"
echo "  # vitals is not ready: the authservice answers 503 while its provider setup fails"
vitals wait --timeout 30s --status 503 --body 'setup .*statuscode: 503' 'http://127.0.0.1:18558/readyz?verbose' 2>&1
refresh
echo "\$ pebble check vitals-ready   # its error is vitals's answer"
pebble check vitals-ready
health ready
echo
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18558/readyz   # ready once setup stopped failing"
vitals wait --timeout 30s http://127.0.0.1:18558/readyz 2>&1
echo "authservice answers $(code http://127.0.0.1:18080/)"
refresh
health ready
echo
echo "\$ touch \$DIR/provider-gone     # the provider goes away: 503 for good"
touch "$KUBEFLOW_DIR/provider-gone"
echo "\$ pebble notices --key vitals.dev/service-exited --timeout 30s   # wait, as Juju does, for the authservice's exit"
pebble notices --key vitals.dev/service-exited --timeout 30s | tee "$KUBEFLOW_DIR/notices.txt"
id=$(awk 'NR == 2 {print $1}' "$KUBEFLOW_DIR/notices.txt")
echo "\$ pebble notice $id   # what the charm reads: event.notice.key, and .last_data"
pebble notice "$id"
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18558/readyz   # the restarted instance"
vitals wait --timeout 30s http://127.0.0.1:18558/readyz 2>&1
echo "authservice answers $(code http://127.0.0.1:18080/)"
sleep 0.5
echo
echo "vitals events --follow showed:"
sed 's/^/  /' "$KUBEFLOW_DIR/events.txt"

echo
auth=$(started)
frozen=$(ps -o ppid= -p "$auth" | tr -d ' ')
echo "\$ kill -STOP $frozen   # vitals (the authservice's parent; the authservice is $auth) freezes, and answers nothing"
kill -STOP "$frozen"
refresh
echo "\$ pebble checks"
pebble checks
health ready
echo "\$ vitals wait --timeout 60s http://127.0.0.1:18558/readyz   # vitals-alive fails 3 times: Pebble restarts vitals"
vitals wait --timeout 60s http://127.0.0.1:18558/readyz 2>&1
echo "Pebble's log said:"
grep -E 'Check "vitals-alive" threshold|on-check-failure action|exited after check failure' "$KUBEFLOW_DIR/pebble.log" | sed 's/^/  /'
kill "$follow" 2>/dev/null || true # it followed the frozen vitals, which is gone
vitals events --follow >"$KUBEFLOW_DIR/events.txt" 2>/dev/null &
pids+=($!)
auth_now=$(started)
vitals_now=$(ps -o ppid= -p "$auth_now" | tr -d ' ')
echo "vitals is pid $vitals_now, the authservice $auth_now; the frozen vitals ($frozen) is $(gone "$frozen"), and its authservice ($auth) $(gone "$auth")"
echo "authservice answers $(code http://127.0.0.1:18080/)"
health alive
sleep 0.5
echo
echo "\$ pebble stop authservice   # vitals drains, and stops the authservice"
pebble stop authservice
sleep 0.2
echo
echo "vitals events --follow showed, of the restarted vitals:"
sed 's/^/  /' "$KUBEFLOW_DIR/events.txt"
echo
echo "\$ pebble notices --type custom   # vitals's: one notice for each type of event, its occurrences counted"
pebble notices --type custom
echo "\$ pebble notice custom vitals.dev/service-exited   # the same notice: one more occurrence, the last one's data"
pebble notice custom vitals.dev/service-exited
