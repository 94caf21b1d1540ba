#!/usr/bin/env bash
# The StackStorm story, runnable: vitals runs a stand-in st2rulesengine that
# says it has started, connects to RabbitMQ (a private node that this script
# starts) a little later, registers its consumer, answers pings through the
# broker and says READY=1. The script shows /startupz, then /readyz as each
# of its reasons to fail goes away in turn; then the service loses its
# connection (readiness fails with the line that says so, and passes again
# once the new connection has held for 3s), then gets stuck (its pings go
# unanswered, and vitals restarts it); then `vitals events` tells it all.
# Needs Go, curl, and Debian's rabbitmq-server and python3-pika; takes about
# half a minute once RabbitMQ answers (about ten seconds); leaves nothing
# behind.
set -euo pipefail
cd "$(dirname "$0")/../.."

python=/usr/bin/python3 # Debian's, which has python3-pika; a python3 on PATH may be another
# The node itself, not /usr/sbin/rabbitmq-server, which switches to the user
# rabbitmq and to the system's files.
rabbitmq=/usr/lib/rabbitmq/bin/rabbitmq-server
debs=()
command -v curl >/dev/null || debs+=(curl)
[ -x "$rabbitmq" ] || debs+=(rabbitmq-server)
"$python" -c 'import pika' 2>/dev/null || debs+=(python3-pika)
if [ "${#debs[@]}" -gt 0 ]; then
  echo "examples/stackstorm/run.sh needs ${debs[*]}: apt-get install -y --no-install-recommends ${debs[*]}" >&2
  exit 1
fi
command -v go >/dev/null || { echo "examples/stackstorm/run.sh needs Go (https://go.dev/dl/)" >&2; exit 1; }

export STACKSTORM_DIR STACKSTORM_MQ_PORT
STACKSTORM_DIR=$(mktemp -d)
export VITALS_API="$STACKSTORM_DIR/vitals.sock"
vitals="$STACKSTORM_DIR/vitals"
url=http://127.0.0.1:18559 # vitals's listen, in vitals.yaml
pids=()                    # vitals and vitals events, which SIGTERM stops
mq_pid=""                  # RabbitMQ's process group
mq_env=()                  # RabbitMQ's environment, which epmd -kill needs too

# stop_rabbitmq stops the node's process group, and the port mapper (epmd)
# that it started as a daemon, outside it.
stop_rabbitmq() {
  [ -n "$mq_pid" ] || return 0
  kill -TERM -- "-$mq_pid" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 -- "-$mq_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$mq_pid" 2>/dev/null || true
  env "${mq_env[@]}" epmd -kill >/dev/null 2>&1 || true
  mq_pid=""
}
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  stop_rabbitmq
  rm -rf "$STACKSTORM_DIR"
}
trap cleanup EXIT

fail() {
  echo "examples/stackstorm/run.sh: $*" >&2
  for f in vitals.log rulesengine.log; do
    [ -s "$STACKSTORM_DIR/$f" ] && { echo "$f:"; tail -n 30 "$STACKSTORM_DIR/$f"; } >&2
  done
  exit 1
}

# start_rabbitmq runs a private node on three free loopback ports (AMQP, its
# distribution and its own port mapper), its files and its Erlang cookie
# (HOME) in a directory of its own, and waits until its AMQP port accepts.
# It fails when the node exits first: another process took one of its ports.
start_rabbitmq() {
  local dir="$STACKSTORM_DIR/rabbitmq" dist epmd
  read -r STACKSTORM_MQ_PORT dist epmd < <("$python" -c '
import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
  rm -rf "$dir" && mkdir -p "$dir"
  : >"$dir/rabbitmq-env.conf" # in place of /etc/rabbitmq's
  : >"$dir/rabbitmq.conf"
  echo '[].' >"$dir/enabled_plugins"
  mq_env=(
    HOME="$dir"
    RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
    RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
    RABBITMQ_MNESIA_BASE="$dir/mnesia"
    RABBITMQ_LOG_BASE="$dir/log"
    RABBITMQ_LOGS=-
    RABBITMQ_NODENAME="st2-example-$STACKSTORM_MQ_PORT@localhost"
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    RABBITMQ_NODE_PORT="$STACKSTORM_MQ_PORT"
    RABBITMQ_DIST_PORT="$dist"
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    ERL_EPMD_PORT="$epmd"
    ERL_EPMD_ADDRESS=127.0.0.1
  )
  # In a session, and so a process group, of its own: stop_rabbitmq stops
  # the whole node.
  (cd "$dir" && exec env "${mq_env[@]}" setsid "$rabbitmq" >"$dir/rabbitmq.log" 2>&1) &
  mq_pid=$!
  for _ in $(seq 900); do # 90s: about ten on two idle cores
    (exec 3<>"/dev/tcp/127.0.0.1/$STACKSTORM_MQ_PORT") 2>/dev/null && return 0
    kill -0 "$mq_pid" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 20 "$dir/rabbitmq.log" >&2
  stop_rabbitmq
  return 1
}

# now is the time in microseconds; since T prints the seconds from T to now.
now() { local t=${EPOCHREALTIME//[!0-9]/}; echo "$t"; }
since() { local ms=$((($(now) - $1) / 1000)); printf '+%d.%ds' $((ms / 1000)) $((ms % 1000 / 100)); }

# changes PATH prints each answer of the endpoint that differs from the one
# before (its numbers aside: countdowns, durations, pids), each with the
# time since the first, and returns once it answers 200 after having failed.
changes() {
  local start last="" body key failed=""
  start=$(now)
  echo "\$ curl -s 'localhost:18559$1'   # every 100ms: each answer that differs, until 200"
  for _ in $(seq 600); do
    body=$(curl -s -w '(HTTP %{http_code})' "$url$1") || true
    key=$(sed -E 's/[0-9][0-9.]*(ms|µs|s)?//g' <<<"$body")
    if [ "$key" != "$last" ]; then
      last=$key
      echo "$(since "$start"):"
      sed 's/^/  /' <<<"$body"
    fi
    case $body in
    *"(HTTP 200)") [ -n "$failed" ] && return 0 ;;
    *) failed=yes ;;
    esac
    kill -0 "$vitals_pid" 2>/dev/null || fail "vitals exited"
    sleep 0.1
  done
  fail "$1 did not answer 200 within a minute"
}

echo "\$ go build -o \$DIR/vitals ./cmd/vitals"
go build -o "$vitals" ./cmd/vitals

echo "\$ rabbitmq-server &   # a private node, on free loopback ports"
start=$(now)
start_rabbitmq || start_rabbitmq || start_rabbitmq || fail "RabbitMQ did not start (three tries)"
echo "RabbitMQ accepts on 127.0.0.1:$STACKSTORM_MQ_PORT after $(since "$start")"

echo
echo "\$ vitals run -c examples/stackstorm/vitals.yaml &"
"$vitals" run -c examples/stackstorm/vitals.yaml >"$STACKSTORM_DIR/rulesengine.log" 2>"$STACKSTORM_DIR/vitals.log" &
pids+=($!)
vitals_pid=$!
# Its listeners are bound before the workload starts.
for _ in $(seq 300); do
  curl -s -o /dev/null "$url/livez" && break
  kill -0 "$vitals_pid" 2>/dev/null || fail "vitals exited"
  sleep 0.1
done
curl -s -o /dev/null "$url/livez" || fail "vitals does not answer on $url"

echo
echo "\$ curl -s 'localhost:18559/startupz?verbose'   # before its line"
curl -s -w '(HTTP %{http_code})\n' "$url/startupz?verbose"
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18559/startupz"
"$vitals" wait --timeout 30s "$url/startupz" 2>&1 || fail "startup did not pass"
echo "\$ curl -s 'localhost:18559/startupz?verbose'"
curl -s -w '(HTTP %{http_code})\n' "$url/startupz?verbose"

echo
echo "# It has started, and is not ready: not connected, no consumer, no READY=1."
changes '/readyz?verbose'
echo
echo "\$ vitals checks"
"$vitals" checks

echo
after=$("$vitals" events | tail -n 1 | awk '{print $1}')
echo "\$ vitals events --follow --after $after &   # what happens from now on"
"$vitals" events --follow --after "$after" >"$STACKSTORM_DIR/events.txt" &
pids+=($!)
follow_pid=$!

echo
echo "\$ touch \$DIR/mq-lost    # it loses its connection, and connects again a second later"
touch "$STACKSTORM_DIR/mq-lost"
changes '/readyz?verbose'

echo
echo "\$ touch \$DIR/stuck      # it gets stuck: connected, consuming, and answering nothing"
touch "$STACKSTORM_DIR/stuck"
for _ in $(seq 300); do
  grep -q 'service-started .* restarts 1' "$STACKSTORM_DIR/events.txt" && break
  sleep 0.1
done
grep -q 'service-started .* restarts 1' "$STACKSTORM_DIR/events.txt" || fail "vitals did not restart the stuck service within 30s"
echo "\$ vitals wait --timeout 30s http://127.0.0.1:18559/readyz   # the restarted instance"
"$vitals" wait --timeout 30s "$url/readyz" 2>&1 || fail "the restarted instance is not ready"
sleep 0.2
kill "$follow_pid"
echo
echo "vitals events --follow showed:"
sed 's/^/  /' "$STACKSTORM_DIR/events.txt"

echo
echo "\$ kill -TERM vitals"
kill -TERM "$vitals_pid"
wait "$vitals_pid" || true
echo
echo "the rules engine's log (vitals's stdout):"
sed 's/^/  /' "$STACKSTORM_DIR/rulesengine.log"
