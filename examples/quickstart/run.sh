#!/usr/bin/env bash
# The quickstart: runs vitals with examples/quickstart/vitals.yaml, shows
# /readyz failing until a small command creates the file the check waits for,
# then passing, then failing again when vitals is told to stop. Needs Go and
# curl; takes about ten seconds; leaves nothing behind when it works. When it
# does not (port 8558 taken by another server, say), it shows vitals's own
# log, and keeps it.
set -euo pipefail
cd "$(dirname "$0")/../.."
export VITALS_QUICKSTART_DIR
VITALS_QUICKSTART_DIR=$(mktemp -d)
log=$(mktemp "${TMPDIR:-/tmp}/vitals-quickstart-XXXXXX")
pid=
finish() {
  status=$?
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$VITALS_QUICKSTART_DIR"
  if [ "$status" -eq 0 ] || [ ! -s "$log" ]; then rm -f "$log"; return; fi
  echo >&2; echo "vitals's log, kept in $log:" >&2
  sed 's/^/  /' "$log" >&2
}
trap finish EXIT

echo "\$ go build -o \$TMP/vitals ./cmd/vitals"
go build -o "$VITALS_QUICKSTART_DIR/vitals" ./cmd/vitals
echo "\$ vitals run -c examples/quickstart/vitals.yaml &"
"$VITALS_QUICKSTART_DIR/vitals" run -c examples/quickstart/vitals.yaml 2>"$log" &
pid=$!
ask() {
  echo; echo "\$ curl -s localhost:8558/readyz?verbose"
  curl -s -w '(HTTP %{http_code})\n' 'http://127.0.0.1:8558/readyz?verbose'
}
# vitals is up when its own API answers, on the socket in $DIR: port 8558
# may answer from another server, while this vitals has exited.
api() { "$VITALS_QUICKSTART_DIR/vitals" checks --api "$VITALS_QUICKSTART_DIR/vitals.sock" >/dev/null 2>&1; }
for _ in $(seq 100); do
  if ! kill -0 "$pid" 2>/dev/null || api; then break; fi
  sleep 0.1
done
if ! kill -0 "$pid" 2>/dev/null; then
  code=0; wait "$pid" || code=$?
  pid=
  echo "vitals did not start: it exited with status $code" >&2
  exit 1
elif ! api; then
  echo "vitals did not start: its API did not answer within 10s" >&2
  exit 1
fi
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
sed 's/^/  /' "$log"
