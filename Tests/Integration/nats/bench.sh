#!/usr/bin/env bash
# Runs MailboxNATS's benchmarks against nats.go on a nats-server of their own.
#
#   bash Tests/Integration/nats/bench.sh [N_PUBSUB [N_REQUEST]]
#
# From anywhere; works in the package root. Offline on a Debian machine (root or sudo if a
# package is missing):
#   1. builds mailbox-bench in release (swift build -c release --product mailbox-bench);
#   2. builds the Go reference .build/nats-gobench (Tests/Integration/nats/go-bench.sh --build-only;
#      if that fails, the benchmarks still run and print baseline "none" with a note);
#   3. under Tests/Integration/nats.sh (which starts nats-server and exports MAILBOX_NATS_URL,
#      MAILBOX_NATS_PID_FILE, ...) runs `mailbox-bench nats-pubsub N_PUBSUB` (default 1000000)
#      and `mailbox-bench nats-request N_REQUEST` (default 20000); each alternates its runs
#      with nats-gobench's (MAILBOX_BENCH_ROUNDS per side, default 3) and prints one JSON line
#      per payload size (16 and 256 bytes) on stdout.
# Environment: MAILBOX_BENCH_ROUNDS; MAILBOX_NATS_GOBENCH (another reference binary);
# SKIP_BUILD=1 uses the binaries already built.
# Exit status: non-zero when a build, the server or a benchmark's self-check fails.
set -euo pipefail

cd "$(dirname "$0")/../../.."
N_PUBSUB="${1:-1000000}"
N_REQUEST="${2:-20000}"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    echo "bench.sh: swift build -c release --product mailbox-bench" >&2
    swift build -c release --product mailbox-bench >&2
    if ! bash Tests/Integration/nats/go-bench.sh --build-only; then
        echo "bench.sh: no Go reference; the benchmarks run without a baseline" >&2
    fi
fi
BIN="$(swift build -c release --show-bin-path)/mailbox-bench"

exec bash Tests/Integration/nats.sh -- bash -c '
    status=0
    "$0" nats-pubsub "$1" || status=$?
    "$0" nats-request "$2" || status=$?
    exit "$status"' "$BIN" "$N_PUBSUB" "$N_REQUEST"
