#!/usr/bin/env bash
# Prepares the Python virtual environment of the NATS interop peer (Tests/Integration/nats/peer.py)
# and prints its python's path on stdout, nothing else.
#
#   bash Tests/Integration/nats/venv.sh
#
# The environment lives in $MAILBOX_NATS_VENV (default: .build/nats-venv under the package root,
# git-ignored) with the PyPI package nats-py; an environment that already imports nats is reused
# as it is (no network then). Exits non-zero, with the cause on stderr (pip's log tail included),
# when it cannot be made, e.g. PyPI unreachable.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
VENV="${MAILBOX_NATS_VENV:-$ROOT/.build/nats-venv}"
PY="$VENV/bin/python"
LOG="$(dirname "$VENV")/nats-venv.log"

if "$PY" -c "import nats" >/dev/null 2>&1; then
    echo "$PY"
    exit 0
fi

mkdir -p "$(dirname "$VENV")"
fail() {
    echo "venv.sh: $1; last lines of $LOG:" >&2
    tail -n 20 "$LOG" >&2
    exit 1
}
: >"$LOG"
if [[ ! -x "$PY" ]]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV" >>"$LOG" 2>&1 || fail "python3 -m venv $VENV failed (Debian's python3 needs python3-venv)"
fi
timeout 300 "$PY" -m pip install -q --disable-pip-version-check 'nats-py>=2.6,<3' >>"$LOG" 2>&1 \
    || fail "pip install nats-py failed (is PyPI reachable?)"
"$PY" -c "import nats" >>"$LOG" 2>&1 || fail "nats-py installed but 'import nats' fails"
echo "$PY"
