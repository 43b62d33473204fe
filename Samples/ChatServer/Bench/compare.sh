#!/usr/bin/env bash
# Same-run comparison of our chat-server against ngIRCd, driven by chat-bench.
#
#   Samples/ChatServer/Bench/compare.sh [--rounds N] [--modes "burst paced slow-consumer idle"]
#                                      [--quick] [--skip-build]
#
# Installs ngircd if missing (apt-get), builds chat-server and chat-bench in release, starts
# ngIRCd (generated config in a temp dir, free loopback port) and chat-server (--port 0), runs
# every mode against both, alternating which goes first, prints every chat-bench JSON line and a
# final {"bench":"chat-compare",...} line with the ratios ours/ngircd (medians over the rounds).
# Both servers are stopped on exit (trap). Traffic goes to 127.0.0.1 only; every run is bounded
# by chat-bench's --deadline. See README.md beside this file for what the fields mean.
set -euo pipefail

ROUNDS=3
MODES="burst paced slow-consumer idle"
QUICK=0
BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift 2 ;;
        --modes) MODES="$2"; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --skip-build) BUILD=0; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# Per-mode workloads (the same for both servers). --quick makes every run short.
BURST_ARGS=${BURST_ARGS:-"--clients 50 --channels 1 --messages 200"}
PACED_ARGS=${PACED_ARGS:-"--clients 200 --channels 10 --rate 2 --duration 10"}
# Enough traffic that a never-reading client overflows any reasonable send queue (about 11 MB
# for it; the kernel's socket buffers alone absorb about 2.5 MB on loopback).
SLOW_ARGS=${SLOW_ARGS:-"--clients 20 --channels 1 --messages 2000 --pad 200 --slow 1"}
IDLE_ARGS=${IDLE_ARGS:-"--clients 10000"}
DEADLINE=${DEADLINE:-90}
if [ "$QUICK" = 1 ]; then
    PACED_ARGS="--clients 200 --channels 10 --rate 2 --duration 3"
    SLOW_ARGS="--clients 20 --channels 1 --messages 1000 --pad 200 --slow 1"
    IDLE_ARGS="--clients 2000"
fi
# Our server: no flood control and a send queue far above what a reading client ever holds
# (a client over it is cut, so the slow consumer still is).
OURS_SENDQ=${OURS_SENDQ:-1048576}

log() { echo "compare.sh: $*" >&2; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"

# 1. ngIRCd.
NGIRCD="$(command -v ngircd || true)"
[ -z "$NGIRCD" ] && [ -x /usr/sbin/ngircd ] && NGIRCD=/usr/sbin/ngircd
if [ -z "$NGIRCD" ]; then
    log "installing ngircd (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq ngircd >&2
    NGIRCD="$(command -v ngircd || echo /usr/sbin/ngircd)"
fi

# 2. Release builds.
cd "$ROOT"
if [ "$BUILD" = 1 ]; then
    log "building chat-server and chat-bench (release)"
    swift build -c release --product chat-server >&2
    swift build -c release --product chat-bench >&2
fi
BIN="$(swift build -c release --show-bin-path)"
SERVER="$BIN/chat-server"
BENCH="$BIN/chat-bench"
[ -x "$SERVER" ] && [ -x "$BENCH" ] || { log "missing $SERVER or $BENCH"; exit 1; }

# Servers and the bench may each hold 10,000+ sockets.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

TMP="$(mktemp -d /tmp/chat-compare.XXXXXX)"
NG_PID=""
OURS_PID=""

stop_pid() {  # pid name: SIGTERM, then SIGKILL if it has not exited within 10 s
    local pid="$1" name="$2" rc=0
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || rc=$?
    [ "$rc" = 0 ] || log "$name (pid $pid) exited with status $rc on SIGTERM (expected 0)"
}
cleanup() {
    stop_pid "$NG_PID" ngIRCd
    stop_pid "$OURS_PID" chat-server
    NG_PID=""
    OURS_PID=""
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    local p i
    for i in $(seq 1 100); do
        p=$((20000 + RANDOM % 30000))
        # A refused connect means nobody listens there.
        if ! (exec 5<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# 3. ngIRCd with every relief its configuration allows (see README: what it cannot turn off).
NG_VERSION="$("$NGIRCD" --version | head -1 | awk '{print $2}')"
NG_BENCH_EXTRA="--oper bench:benchpass --umode +F"
start_ngircd() {
    local line ready=0
    NG_PORT="$(free_port)"
    cat > "$TMP/ngircd.conf" <<EOF
[Global]
Name = irc.ngircd.bench
Info = chat-bench comparison
AdminInfo1 = chat-bench
AdminEMail = bench@localhost
Listen = 127.0.0.1
Ports = $NG_PORT
MotdPhrase = chat-bench
[Limits]
MaxConnections = 0
MaxConnectionsIP = 0
MaxJoins = 0
MaxNickLength = 9
MaxListSize = 100
; 0 = no penalty delays at all (throttling and command penalties below 10 s become 0 s).
MaxPenaltyTime = 0
PingTimeout = 600
PongTimeout = 600
[Options]
DNS = no
Ident = no
PAM = no
RequireAuthPing = no
; The bench OPERs and sets user mode +F ("no flood protection", opers only) on every client.
[Operator]
Name = bench
Password = benchpass
EOF
    rm -f "$TMP/ng.fifo"
    mkfifo "$TMP/ng.fifo"
    "$NGIRCD" --nodaemon --config "$TMP/ngircd.conf" > "$TMP/ng.fifo" 2>&1 &
    NG_PID=$!
    exec 3<"$TMP/ng.fifo"
    while IFS= read -r -t 30 line <&3; do
        echo "$line" >> "$TMP/ngircd.log"
        case "$line" in *"ready."*) ready=1; break ;; esac
    done
    [ "$ready" = 1 ] || { log "ngIRCd did not start:"; cat "$TMP/ngircd.log" >&2; exit 1; }
    cat <&3 >> "$TMP/ngircd.log" &
    exec 3<&-
    log "ngIRCd $NG_VERSION pid $NG_PID on 127.0.0.1:$NG_PORT"
}

# 4. Our server.
start_ours() {
    local line
    rm -f "$TMP/ours.fifo"
    mkfifo "$TMP/ours.fifo"
    "$SERVER" --host 127.0.0.1 --port 0 --no-flood-control --sendq "$OURS_SENDQ" --max-clients 30000 \
        --oper bench:benchpass > "$TMP/ours.fifo" 2>> "$TMP/ours.err" &
    OURS_PID=$!
    exec 4<"$TMP/ours.fifo"
    IFS= read -r -t 30 line <&4 || { log "chat-server did not start:"; cat "$TMP/ours.err" >&2; exit 1; }
    case "$line" in "chat-server listening on "*) ;; *) log "unexpected first line: $line"; exit 1 ;; esac
    OURS_PORT="${line##*:}"
    cat <&4 > /dev/null &
    exec 4<&-
    log "chat-server pid $OURS_PID on 127.0.0.1:$OURS_PORT (--no-flood-control --sendq $OURS_SENDQ)"
}

# A fresh server, so a run's figures do not depend on what earlier runs left behind (ngIRCd's
# loops grow with its connection pool, which never shrinks; freed heap is reused).
restart() {  # ngircd|ours
    if [ "$1" = ngircd ]; then stop_pid "$NG_PID" ngIRCd; NG_PID=""; start_ngircd
    else stop_pid "$OURS_PID" chat-server; OURS_PID=""; start_ours; fi
}

# 5. The runs, alternating which server goes first.
RESULTS="$TMP/results.jsonl"
: > "$RESULTS"
run_one() {  # server-label mode args...
    local label="$1" mode="$2"; shift 2
    local port pid extra out
    if [ "$label" = ngircd ]; then port=$NG_PORT; pid=$NG_PID; extra=$NG_BENCH_EXTRA
    else port=$OURS_PORT; pid=$OURS_PID; extra=""; fi
    kill -0 "$pid" 2>/dev/null || { log "$label is not running"; exit 1; }
    # shellcheck disable=SC2086
    out="$("$BENCH" "$mode" --host 127.0.0.1 --port "$port" --label "$label" --server-pid "$pid" \
        --deadline "$DEADLINE" $extra "$@" || true)"
    [ -n "$out" ] || out="{\"bench\":\"chat\",\"mode\":\"$mode\",\"server\":\"$label\",\"ok\":false,\"error\":\"chat-bench printed nothing\"}"
    echo "$out"
    echo "$out" >> "$RESULTS"
}
round=1
while [ "$round" -le "$ROUNDS" ]; do
    # Every round starts on fresh servers; so does every idle run (its RSS figures).
    restart ngircd
    restart ours
    for mode in $MODES; do
        case "$mode" in
            burst) args=$BURST_ARGS ;;
            paced) args=$PACED_ARGS ;;
            slow-consumer) args=$SLOW_ARGS ;;
            idle) args=$IDLE_ARGS ;;
            *) log "unknown mode $mode"; exit 2 ;;
        esac
        if [ $(( (round + ${#mode}) % 2 )) = 1 ]; then order="ngircd ours"; else order="ours ngircd"; fi
        for label in $order; do
            if [ "$mode" = idle ]; then restart "$label"; fi
            log "round $round/$ROUNDS $mode -> $label"
            # shellcheck disable=SC2086
            run_one "$label" "$mode" $args
        done
    done
    round=$((round + 1))
done

# 6. Ratios ours/ngircd (medians over rounds) and the verdicts.
awk -v limits="ngIRCd cannot turn off: at most 3 commands per connection per event-loop pass (10 with user mode +F, which only an IRC operator may set: the bench OPERs for it), its 1-second loop tick for commands left in a read buffer below 513 bytes, the 2 KB read buffer, the 32 KB per-client write buffer (WRITEBUFFER_MAX_LEN, compile-time: a client over it is disconnected), the listen backlog of 10 (the bench keeps 8 connects in flight), and Nagle on its sockets (it never sets TCP_NODELAY)" '
function num(line, key,   m) {
    if (match(line, "\"" key "\":-?[0-9.]+")) { m = substr(line, RSTART, RLENGTH); sub(/^"[^"]*":/, "", m); return m + 0 }
    return ""
}
function str(line, key,   m) {
    if (match(line, "\"" key "\":\"[^\"]*\"")) { m = substr(line, RSTART, RLENGTH); sub(/^"[^"]*":"/, "", m); sub(/"$/, "", m); return m }
    return ""
}
function median(arr, n,   i, j, t) {
    if (n == 0) return ""
    for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
    return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{
    mode = str($0, "mode"); server = str($0, "server")
    if ($0 !~ /"ok":true/) { bad[server]++ }
    k = mode SUBSEP server
    for (f = 1; f <= nf; f++) {
        v = num($0, fields[f])
        if (v != "") { n[k, fields[f]]++; vals[k, fields[f], n[k, fields[f]]] = v }
    }
}
function med(mode, server, field,   i, a, c) {
    c = n[mode SUBSEP server, field] + 0
    for (i = 1; i <= c; i++) a[i] = vals[mode SUBSEP server, field, i]
    return median(a, c)
}
function ratio(mode, field,   o, g) {
    o = med(mode, "ours", field); g = med(mode, "ngircd", field)
    if (o == "" || g == "" || g == 0) return "null"
    return sprintf("%.3f", o / g)
}
function val(mode, server, field,   v) { v = med(mode, server, field); return v == "" ? "null" : sprintf("%.2f", v) }
BEGIN {
    split("deliveries_per_s p50_us p99_us max_us server_cpu_s server_peak_rss_mb rss_per_conn_kb slow_disconnected elapsed_s", fields, " ")
    nf = 9
}
END {
    printf "{\"bench\":\"chat-compare\",\"rounds\":%d", rounds
    printf ",\"burst_ratio\":%s,\"burst_ours_per_s\":%s,\"burst_ngircd_per_s\":%s", ratio("burst", "deliveries_per_s"), val("burst", "ours", "deliveries_per_s"), val("burst", "ngircd", "deliveries_per_s")
    printf ",\"burst_cpu_ratio\":%s", ratio("burst", "server_cpu_s")
    printf ",\"paced_p50_ratio\":%s,\"paced_p99_ratio\":%s,\"paced_p99_us_ours\":%s,\"paced_p99_us_ngircd\":%s", ratio("paced", "p50_us"), ratio("paced", "p99_us"), val("paced", "ours", "p99_us"), val("paced", "ngircd", "p99_us")
    printf ",\"paced_cpu_ratio\":%s", ratio("paced", "server_cpu_s")
    printf ",\"slow_consumer_ratio\":%s,\"slow_disconnected_ours\":%s,\"slow_disconnected_ngircd\":%s", ratio("slow-consumer", "deliveries_per_s"), val("slow-consumer", "ours", "slow_disconnected"), val("slow-consumer", "ngircd", "slow_disconnected")
    printf ",\"idle_rss_per_conn_ratio\":%s,\"idle_rss_per_conn_kb_ours\":%s,\"idle_rss_per_conn_kb_ngircd\":%s", ratio("idle", "rss_per_conn_kb"), val("idle", "ours", "rss_per_conn_kb"), val("idle", "ngircd", "rss_per_conn_kb")
    printf ",\"idle_setup_ratio\":%s", ratio("idle", "elapsed_s")
    printf ",\"ours_runs_not_ok\":%d,\"ngircd_runs_not_ok\":%d", bad["ours"] + 0, bad["ngircd"] + 0
    printf ",\"ngircd_limits\":\"%s\"}\n", limits
}' rounds="$ROUNDS" "$RESULTS"
