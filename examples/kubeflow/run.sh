#!/usr/bin/env bash
# The Kubeflow OIDC story, runnable: Pebble runs vitals, as in a charm's
# workload container, and vitals runs a stand-in authservice that answers 503
# while its provider setup fails, then 302. When its provider goes away it
# answers 503 for good; vitals's live check fails and restarts it, and its
# hook records Pebble notices, which would wake the charm. `vitals events
# --follow` shows it all, `pebble notices` what the charm would get. Needs Go
# and curl: vitals, the authservice and Pebble (the version bench/go.mod pins,
# its module fetched into Go's module cache the first time) are built with go
# build. Takes about half a minute; leaves nothing behind.
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
echo "\$ PEBBLE=\$DIR/pebble pebble run --verbose &   # its layer: examples/kubeflow/layer.yaml, vitals run -c examples/kubeflow/vitals.yaml"
pebble run --verbose >"$KUBEFLOW_DIR/pebble.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$VITALS_API" ] && break; sleep 0.1; done
echo "\$ vitals events --follow &"
vitals events --follow >"$KUBEFLOW_DIR/events.txt" &
pids+=($!)

code() { curl -s -o /dev/null -w '%{http_code}' "$1" || true; }
echo
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18558/readyz   # ready once setup stopped failing"
vitals wait --timeout 30s http://127.0.0.1:18558/readyz 2>&1
echo "authservice answers $(code http://127.0.0.1:18080/)"
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
echo "\$ pebble stop authservice   # vitals drains, and stops the authservice"
pebble stop authservice
sleep 0.2
echo
echo "vitals events --follow showed:"
sed 's/^/  /' "$KUBEFLOW_DIR/events.txt"
echo
echo "\$ pebble notices --type custom   # vitals's: one notice for each type of event, its occurrences counted"
pebble notices --type custom
echo "\$ pebble notice custom vitals.dev/service-exited   # the same notice: one more occurrence, the last one's data"
pebble notice custom vitals.dev/service-exited
