#!/usr/bin/env bash
# The quickstart: runs vitals with examples/quickstart/vitals.yaml, shows
# /readyz failing until a small command creates the file the check waits for,
# then passing, then failing again when vitals is told to stop. Needs Go and
# curl; takes about ten seconds; leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
export VITALS_QUICKSTART_DIR
VITALS_QUICKSTART_DIR=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$VITALS_QUICKSTART_DIR"' EXIT

echo "\$ go build -o \$TMP/vitals ./cmd/vitals"
go build -o "$VITALS_QUICKSTART_DIR/vitals" ./cmd/vitals
echo "\$ vitals run -c examples/quickstart/vitals.yaml &"
"$VITALS_QUICKSTART_DIR/vitals" run -c examples/quickstart/vitals.yaml 2>"$VITALS_QUICKSTART_DIR/vitals.log" &
pid=$!
ask() {
  echo; echo "\$ curl -s localhost:8558/readyz?verbose"
  curl -s -w '(HTTP %{http_code})\n' 'http://127.0.0.1:8558/readyz?verbose'
}
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:8558/livez && break; sleep 0.1; done
sleep 1
ask
echo; echo "\$ echo '[Peer]' > \$DIR/peer1.conf     # the small command the check waits for"
echo '[Peer]' > "$VITALS_QUICKSTART_DIR/peer1.conf"
sleep 1.5
ask
echo; echo "\$ vitals checks --api \$DIR/vitals.sock          # the management API"
"$VITALS_QUICKSTART_DIR/vitals" checks --api "$VITALS_QUICKSTART_DIR/vitals.sock"
echo; echo "\$ kill -TERM vitals                    # readiness fails at once, then it stops"
kill -TERM "$pid"
wait "$pid" || true
echo; echo "vitals's log:"
sed 's/^/  /' "$VITALS_QUICKSTART_DIR/vitals.log"
