#!/usr/bin/env bash
# Runs a command (by default the NATS and socket tests) against a real nats-server of its own.
#
#   bash Tests/Integration/nats.sh [--cluster] [--keep] [--] [command args...]
#
# From anywhere; the command runs in the package root. On a Debian machine as root (or with sudo):
#   1. installs nats-server with apt-get when it is missing, prints its version;
#   2. starts one nats-server on free loopback ports, from a config in a temporary directory
#      (client port, http monitoring port, ping_interval 2s with ping_max 2, JetStream, a system
#      account SYS and an account APP; no_auth_user app, so a client without credentials is app);
#      with --cluster also three more servers routed to each other (cluster "mailbox", no auth, no
#      JetStream), waiting until each has its 2 routes;
#   3. makes the Python peer's virtual environment (Tests/Integration/nats/venv.sh; if that fails,
#      says why and goes on without it);
#   4. builds the cluster-node sample (release) for the multi-process cluster tests, exports the
#      MAILBOX_NATS_* variables below and MAILBOX_CLUSTER_NODE, and runs the command (default:
#      swift test --skip-build --filter 'NATS|Net|Cluster'), killed after $MAILBOX_NATS_TIMEOUT seconds
#      when that is set (default: 1800 for the default command, no limit for a given one);
#   5. stops every server (the pids in the pid files too, so a server a test restarted is stopped)
#      and removes the temporary directory (--keep or MAILBOX_NATS_KEEP=1 keep it, for the logs).
# Exit status: the command's; 1 if a server does not start (its log's tail is printed). When the
# command fails, the tail of each server's log is printed.
#
# Exported (see Tests/Integration/README.md):
#   MAILBOX_NATS_URL            nats://127.0.0.1:PORT, no credentials needed (no_auth_user app)
#   MAILBOX_NATS_PORT           PORT alone
#   MAILBOX_NATS_MONITOR_URL    http://127.0.0.1:MPORT (/varz, /connz, /subsz, /routez, /healthz)
#   MAILBOX_NATS_AUTH_URL       nats://app:app@127.0.0.1:PORT: good credentials (user app)
#   MAILBOX_NATS_BAD_AUTH_URL   nats://app:wrong@127.0.0.1:PORT: refused, -ERR 'Authorization Violation'
#   MAILBOX_NATS_SERVER_BIN     the nats-server executable
#   MAILBOX_NATS_CONFIG         its config: `$MAILBOX_NATS_SERVER_BIN -c $MAILBOX_NATS_CONFIG` starts
#                               the same server again on the same ports (same log, same JetStream store)
#   MAILBOX_NATS_PID_FILE       the file in which the server (and a restarted one) writes its pid
#   MAILBOX_NATS_LOG            the server's log file (appended to by restarts)
#   MAILBOX_NATS_DIR            the temporary directory (removed at the end)
#   MAILBOX_NATS_PY, MAILBOX_NATS_PEER   the venv's python and Tests/Integration/nats/peer.py
#                               (unset when the venv could not be made)
#   with --cluster, comma-separated, in the same order:
#   MAILBOX_NATS_CLUSTER_URLS, MAILBOX_NATS_CLUSTER_MONITOR_URLS, MAILBOX_NATS_CLUSTER_PID_FILES,
#   MAILBOX_NATS_CLUSTER_CONFIGS
#   MAILBOX_CLUSTER_NODE        the release build of the cluster-node sample (unset if it did not build)
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT="$(pwd)"

CLUSTER=0
KEEP="${MAILBOX_NATS_KEEP:-0}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cluster) CLUSTER=1; shift ;;
        --keep) KEEP=1; shift ;;
        --) shift; break ;;
        -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
DEFAULT_COMMAND=0
if [[ $# -eq 0 ]]; then
    set -- swift test --skip-build --filter 'NATS|Net|Cluster'
    DEFAULT_COMMAND=1
fi

say() { echo "nats.sh: $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
    else say "need root (or sudo) to run: $*"; return 1
    fi
}

# ------------------------------------------------------------------------------- 1. nats-server
if ! command -v nats-server >/dev/null 2>&1; then
    say "installing nats-server with apt-get"
    mkdir -p "$ROOT/.build"
    APT_LOG="$ROOT/.build/nats-apt.log"
    export DEBIAN_FRONTEND=noninteractive
    if ! { as_root apt-get -o DPkg::Lock::Timeout=300 update -q \
           && as_root apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends nats-server; } \
           >"$APT_LOG" 2>&1; then
        say "apt-get install nats-server failed; last lines of $APT_LOG:"
        tail -n 20 "$APT_LOG" >&2
        exit 1
    fi
fi
SERVER_BIN="$(command -v nats-server)"
echo "== $("$SERVER_BIN" --version) ($SERVER_BIN)"

# ------------------------------------------------------------------------------ helpers
DIR="$(mktemp -d "${TMPDIR:-/tmp}/mailbox-nats.XXXXXX")"
STARTED_PIDS=()   # the servers this script started
PID_FILES=()      # the pid files of all servers (a test's restart writes its new pid there)
LOGS=()

is_nats_server() {  # pid: true when it is a live nats-server process (not a reused pid)
    [[ -n "$1" && -r "/proc/$1/comm" ]] && [[ "$(cat "/proc/$1/comm" 2>/dev/null)" == nats-server* ]]
}

stop_servers() {
    local pids=() pid f deadline
    for pid in "${STARTED_PIDS[@]}"; do is_nats_server "$pid" && pids+=("$pid"); done
    for f in "${PID_FILES[@]}"; do
        pid="$(cat "$f" 2>/dev/null || true)"
        is_nats_server "$pid" && pids+=("$pid")
    done
    [[ ${#pids[@]} -eq 0 ]] && return 0
    kill -TERM "${pids[@]}" 2>/dev/null || true
    deadline=$((SECONDS + 10))
    for pid in "${pids[@]}"; do
        while is_nats_server "$pid" && [[ $SECONDS -lt $deadline ]]; do sleep 0.05; done
        if is_nats_server "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    wait 2>/dev/null || true
}

print_logs() {  # the tail of every server's log
    local log
    for log in "${LOGS[@]}"; do
        [[ -f "$log" ]] || continue
        echo "---- last lines of $log" >&2
        tail -n "${1:-30}" "$log" >&2
    done
}

# shellcheck disable=SC2317  # run by the trap
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [[ -n "${CMD_PID:-}" ]]; then kill -TERM -- "-$CMD_PID" 2>/dev/null || true; fi
    stop_servers
    if [[ "$KEEP" == 1 ]]; then
        say "kept $DIR (configs, logs)"
    else
        rm -rf "$DIR"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_ports() {  # n: prints n distinct free loopback TCP ports, one a line
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
    s.close()
EOF
}

# wait_ready pid port log: waits (30 s at most) until 127.0.0.1:port greets with INFO
wait_ready() {
    local pid="$1" port="$2" log="$3" deadline=$((SECONDS + 30)) greeting
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            say "nats-server (pid $pid, port $port) exited during startup; last lines of $log:"
            tail -n 40 "$log" >&2
            return 1
        fi
        greeting="$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && head -c 4 <&3" 2>/dev/null || true)"
        [[ "$greeting" == INFO ]] && return 0
        if [[ $SECONDS -ge $deadline ]]; then
            say "nats-server (pid $pid) does not accept on 127.0.0.1:$port after 30 s; last lines of $log:"
            tail -n 40 "$log" >&2
            return 1
        fi
        sleep 0.05
    done
}

start_server() {  # config log: starts nats-server -c config in the background; sets LAST_PID
    "$SERVER_BIN" -c "$1" >>"$2" 2>&1 &
    LAST_PID=$!
    STARTED_PIDS+=("$LAST_PID")
    # Not a job of this shell: a server a test kills is not reported as "Killed" (the cleanup
    # still stops every server by its pid).
    disown "$LAST_PID" 2>/dev/null || true
}

# http_json url expr: prints the python expression expr over the JSON at url (d), or fails
http_json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as r:
    d = json.load(r)
print(eval(sys.argv[2]))
EOF
}

# --------------------------------------------------------------------- 2. the single server
# A port found free can be taken by someone else before the server binds it: then try again.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
T0=$(now_ms)
for attempt in 1 2 3; do
    mapfile -t P < <(free_ports 2)
    PORT=${P[0]} MPORT=${P[1]}
    CONF="$DIR/nats.conf"
    LOG="$DIR/nats.log"
    PID_FILE="$DIR/nats.pid"
    cat >"$CONF" <<EOF
# Generated by Tests/Integration/nats.sh for MailboxNATS's tests.
server_name: mailbox-nats
listen: 127.0.0.1:$PORT
http: 127.0.0.1:$MPORT
pid_file: "$PID_FILE"
log_file: "$LOG"
# A client that does not answer the server's PINGs is dropped after ~6 s ('Stale Connection').
ping_interval: "2s"
ping_max: 2
jetstream {
  store_dir: "$DIR/js"
  max_memory_store: 256MB
  max_file_store: 1GB
}
accounts {
  SYS { users: [ { user: sys, password: sys } ] }
  APP {
    jetstream: enabled
    users: [ { user: app, password: app }, { user: other, password: other } ]
  }
}
system_account: SYS
# A client without credentials is app; wrong credentials are refused ('Authorization Violation').
no_auth_user: app
EOF
    : >"$LOG"
    start_server "$CONF" "$LOG"
    if wait_ready "$LAST_PID" "$PORT" "$LOG"; then break; fi
    stop_servers
    STARTED_PIDS=()
    if [[ $attempt -eq 3 ]] || ! grep -q "address already in use" "$LOG"; then exit 1; fi
    say "port taken meanwhile; trying other ports"
done
PID_FILES+=("$PID_FILE")
LOGS+=("$LOG")
echo "== nats-server on 127.0.0.1:$PORT (monitoring $MPORT), ready in $(( $(now_ms) - T0 )) ms"

export MAILBOX_NATS_URL="nats://127.0.0.1:$PORT"
export MAILBOX_NATS_PORT="$PORT"
export MAILBOX_NATS_MONITOR_URL="http://127.0.0.1:$MPORT"
export MAILBOX_NATS_AUTH_URL="nats://app:app@127.0.0.1:$PORT"
export MAILBOX_NATS_BAD_AUTH_URL="nats://app:wrong@127.0.0.1:$PORT"
export MAILBOX_NATS_SERVER_BIN="$SERVER_BIN"
export MAILBOX_NATS_CONFIG="$CONF"
export MAILBOX_NATS_PID_FILE="$PID_FILE"
export MAILBOX_NATS_LOG="$LOG"
export MAILBOX_NATS_DIR="$DIR"

# -------------------------------------------------------------------------- the cluster
if [[ $CLUSTER -eq 1 ]]; then
    T0=$(now_ms)
    for attempt in 1 2 3; do
        mapfile -t P < <(free_ports 9)   # 3 × (client, cluster, monitoring)
        C_URLS=(); C_MON=(); C_PIDS=(); C_CONFS=(); C_LOGS=(); C_STARTED=()
        for i in 0 1 2; do
            client=${P[$((3 * i))]} route=${P[$((3 * i + 1))]} mon=${P[$((3 * i + 2))]}
            routes=()
            for j in 0 1 2; do
                [[ $j -ne $i ]] && routes+=("nats-route://127.0.0.1:${P[$((3 * j + 1))]}")
            done
            conf="$DIR/cluster-$((i + 1)).conf" log="$DIR/cluster-$((i + 1)).log" pidf="$DIR/cluster-$((i + 1)).pid"
            cat >"$conf" <<EOF
# Generated by Tests/Integration/nats.sh: node $((i + 1)) of 3 of MailboxNATS's test cluster.
server_name: mailbox-c$((i + 1))
listen: 127.0.0.1:$client
http: 127.0.0.1:$mon
pid_file: "$pidf"
log_file: "$log"
ping_interval: "2s"
ping_max: 2
cluster {
  name: mailbox
  listen: 127.0.0.1:$route
  routes: [ ${routes[0]}, ${routes[1]} ]
}
EOF
            : >"$log"
            start_server "$conf" "$log"
            C_STARTED+=("$LAST_PID:$client:$log")
            C_URLS+=("nats://127.0.0.1:$client"); C_MON+=("http://127.0.0.1:$mon")
            C_PIDS+=("$pidf"); C_CONFS+=("$conf"); C_LOGS+=("$log")
        done
        ok=1
        for s in "${C_STARTED[@]}"; do
            IFS=: read -r pid client log <<<"$s"
            wait_ready "$pid" "$client" "$log" || { ok=0; break; }
        done
        if [[ $ok -eq 1 ]]; then break; fi
        for s in "${C_STARTED[@]}"; do
            pid="${s%%:*}"; is_nats_server "$pid" && kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
        done
        if [[ $attempt -eq 3 ]] || ! cat "${C_LOGS[@]}" | grep -q "address already in use"; then exit 1; fi
        say "a cluster port was taken meanwhile; trying other ports"
    done
    PID_FILES+=("${C_PIDS[@]}")
    LOGS+=("${C_LOGS[@]}")
    # Each node is ready when it has routes to the two others.
    deadline=$((SECONDS + 30))
    for i in 0 1 2; do
        while :; do
            nroutes="$(http_json "${C_MON[$i]}/routez" 'd["num_routes"]' 2>/dev/null || echo "?")"
            [[ "$nroutes" == 2 ]] && break
            if [[ $SECONDS -ge $deadline ]]; then
                say "cluster node $((i + 1)) has $nroutes routes, not 2, after 30 s"
                print_logs 40
                exit 1
            fi
            sleep 0.1
        done
    done
    echo "== nats-server cluster of 3 on ${C_URLS[*]}, routed in $(( $(now_ms) - T0 )) ms"
    join() { local IFS=,; echo "$*"; }
    MAILBOX_NATS_CLUSTER_URLS="$(join "${C_URLS[@]}")"
    MAILBOX_NATS_CLUSTER_MONITOR_URLS="$(join "${C_MON[@]}")"
    MAILBOX_NATS_CLUSTER_PID_FILES="$(join "${C_PIDS[@]}")"
    MAILBOX_NATS_CLUSTER_CONFIGS="$(join "${C_CONFS[@]}")"
    export MAILBOX_NATS_CLUSTER_URLS MAILBOX_NATS_CLUSTER_MONITOR_URLS MAILBOX_NATS_CLUSTER_PID_FILES \
        MAILBOX_NATS_CLUSTER_CONFIGS
fi

# --------------------------------------------------------------------- 3. the Python peer
if PEER_PY="$(bash "$ROOT/Tests/Integration/nats/venv.sh")"; then
    export MAILBOX_NATS_PY="$PEER_PY"
    export MAILBOX_NATS_PEER="$ROOT/Tests/Integration/nats/peer.py"
else
    say "no Python peer (nats-py): MAILBOX_NATS_PY and MAILBOX_NATS_PEER stay unset; interop tests skip"
    unset MAILBOX_NATS_PY MAILBOX_NATS_PEER
fi

# --------------------------------------------------------------------------- 4. the command
# The cluster tests start several cluster-node processes; a release build keeps the million-tell
# scenario to seconds.
if swift build -c release --product cluster-node >"$ROOT/.build/cluster-node-build.log" 2>&1; then
    export MAILBOX_CLUSTER_NODE="$(swift build -c release --show-bin-path)/cluster-node"
else
    say "cluster-node did not build (its multi-process tests skip); the build log ends with:"
    tail -20 "$ROOT/.build/cluster-node-build.log" >&2
    unset MAILBOX_CLUSTER_NODE
fi
env | grep '^MAILBOX_NATS_\|^MAILBOX_CLUSTER_' | sort | sed 's/^/   /' >&2
LIMIT="${MAILBOX_NATS_TIMEOUT:-}"
[[ -z "$LIMIT" && $DEFAULT_COMMAND -eq 1 ]] && LIMIT=1800
echo "== $*"
status=0
if [[ -n "$LIMIT" && "$LIMIT" != 0 ]]; then
    # In the background so that an interrupt of this script (whose trap ends the servers) also
    # reaches the command: timeout runs it in a process group of its own, killed in cleanup.
    timeout -k 10 "$LIMIT" "$@" &
    CMD_PID=$!
    wait "$CMD_PID" || status=$?
    CMD_PID=
    if [[ $status -eq 124 || $status -eq 137 ]]; then say "'$*' did not finish within $LIMIT s"; fi
else
    "$@" || status=$?
fi

# ------------------------------------------------------------------------------ 5. the end
if [[ $status -ne 0 ]]; then
    say "'$*' exited with status $status; the servers' logs end with:"
    print_logs 30
fi
if [[ $status -ne 0 ]]; then
    # A test may stop a server on purpose (the cluster failover); worth saying only on failure,
    # so that a green run ends with the test runner's own summary line.
    for f in "${PID_FILES[@]}"; do
        pid="$(cat "$f" 2>/dev/null || true)"
        is_nats_server "$pid" || say "note: the server of $(basename "$f" .pid) was not running at the end"
    done
fi
exit "$status"
