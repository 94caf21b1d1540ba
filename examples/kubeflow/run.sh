#!/usr/bin/env bash
# The Kubeflow OIDC story, runnable: vitals runs a stand-in authservice that
# answers 503 while its provider setup fails, then 302. When its provider goes
# away it answers 503 for good; vitals's live check fails and restarts it, and
# a hook tells the manager. `vitals events --follow` shows it all. Needs Go
# and curl; takes about twenty seconds; leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
export KUBEFLOW_DIR
KUBEFLOW_DIR=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$KUBEFLOW_DIR"' EXIT
vitals="$KUBEFLOW_DIR/vitals"
export VITALS_API="$KUBEFLOW_DIR/vitals.sock"

echo "\$ go build -o \$DIR/vitals ./cmd/vitals && go build -o \$DIR/authservice ./examples/kubeflow/authservice"
go build -o "$vitals" ./cmd/vitals
go build -o "$KUBEFLOW_DIR/authservice" ./examples/kubeflow/authservice
echo "\$ vitals run -c examples/kubeflow/vitals.yaml &"
"$vitals" run -c examples/kubeflow/vitals.yaml >"$KUBEFLOW_DIR/vitals.log" 2>&1 &
pids+=($!)
vitals_pid=$!
for _ in $(seq 100); do [ -S "$VITALS_API" ] && break; sleep 0.1; done
echo "\$ vitals events --follow &"
"$vitals" events --follow >"$KUBEFLOW_DIR/events.txt" &
pids+=($!)

code() { curl -s -o /dev/null -w '%{http_code}' "$1" || true; }
echo
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18558/readyz   # ready once setup stopped failing"
"$vitals" wait --timeout 30s http://127.0.0.1:18558/readyz 2>&1
echo "authservice answers $(code http://127.0.0.1:18080/)"
echo
echo "\$ touch \$DIR/provider-gone     # the provider goes away: 503 for good"
touch "$KUBEFLOW_DIR/provider-gone"
for _ in $(seq 100); do grep -q '"restarts":1' "$KUBEFLOW_DIR/manager.log" 2>/dev/null && break; sleep 0.2; done
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18558/readyz   # the restarted instance"
"$vitals" wait --timeout 30s http://127.0.0.1:18558/readyz 2>&1
echo "authservice answers $(code http://127.0.0.1:18080/)"
sleep 0.5
echo
echo "\$ kill -TERM vitals"
kill -TERM "$vitals_pid"
wait "$vitals_pid" || true
sleep 0.2
echo
echo "vitals events --follow showed:"
sed 's/^/  /' "$KUBEFLOW_DIR/events.txt"
echo
echo "the manager's hook got $(wc -l <"$KUBEFLOW_DIR/manager.log") events, the last:"
tail -n 1 "$KUBEFLOW_DIR/manager.log" | sed 's/^/  /'
