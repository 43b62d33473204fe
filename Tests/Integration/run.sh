#!/usr/bin/env bash
# Integration tests of the IRC chat server with real clients.
#
#   bash Tests/Integration/run.sh [--server ours|ngircd] [pytest arguments...]
#
# From the package root, on a Debian machine with the Swift toolchain, python3 and pip:
#   1. installs what it needs, idempotently and quietly: ii, tmux, irssi, nats-server (the
#      several-nodes tests start their own, with JetStream) (and ngircd for
#      --server ngircd) with apt-get (apt-get update only if something is missing), and a Python
#      virtual environment in .build/integration-venv with the PyPI packages irc and pytest;
#   2. builds chat-server in release (or uses the binary named by $CHAT_SERVER);
#   3. runs Tests/Integration/test_*.py with pytest against it; every test starts its own server
#      on --port 0 and stops it. Bounded: the pytest run is killed after $INTEGRATION_TIMEOUT
#      seconds (default 300).
# --server ngircd runs the same tests against ngIRCd (the reference server) instead of ours;
# tests that depend on chat-server's own flags or behaviour are skipped there, with the reason.
# Exit status: non-zero on any failure.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT="$(pwd)"
HERE="$ROOT/Tests/Integration"

SERVER=ours
PYTEST_ARGS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --server) SERVER="${2:?--server needs ours or ngircd}"; shift 2 ;;
        --server=*) SERVER="${1#--server=}"; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) PYTEST_ARGS+=("$1"); shift ;;
    esac
done
case "$SERVER" in ours|ngircd) ;; *) echo "run.sh: --server must be ours or ngircd" >&2; exit 2 ;; esac

LOG_DIR="$ROOT/.build/integration-logs"
mkdir -p "$LOG_DIR"

quietly() {  # runs a command with its output in a log; shows the log's tail if it fails
    local name="$1"; shift
    if ! "$@" >"$LOG_DIR/$name.log" 2>&1; then
        echo "run.sh: '$*' failed; last lines of $LOG_DIR/$name.log:" >&2
        tail -n 40 "$LOG_DIR/$name.log" >&2
        exit 1
    fi
}

as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
    else echo "run.sh: need root (or sudo) to install: $*" >&2; return 1
    fi
}

# ------------------------------------------------------------------------------ 1. Debian packages
PACKAGES=(ii tmux irssi nats-server)   # nats-server: the several-nodes tests (test_cluster_chat.py)
[[ "$SERVER" == ngircd ]] && PACKAGES+=(ngircd)
MISSING=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || MISSING+=("$p")
done
if [[ ${#MISSING[@]} -gt 0 ]]; then
    echo "== installing ${MISSING[*]}"
    export DEBIAN_FRONTEND=noninteractive
    quietly apt-update as_root apt-get -o DPkg::Lock::Timeout=300 update -q
    quietly apt-install as_root apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${MISSING[@]}"
fi

# ---------------------------------------------------------------------- 1b. Python virtual env
VENV="$ROOT/.build/integration-venv"
PY="$VENV/bin/python"
if ! "$PY" -c "import irc.client, pytest" >/dev/null 2>&1; then
    echo "== preparing the Python environment in .build/integration-venv"
    if [[ ! -x "$PY" ]]; then
        if ! python3 -m venv "$VENV" >"$LOG_DIR/venv.log" 2>&1; then
            # Debian's python3 needs python3-venv for ensurepip
            rm -rf "$VENV"
            export DEBIAN_FRONTEND=noninteractive
            quietly apt-update as_root apt-get -o DPkg::Lock::Timeout=300 update -q
            quietly apt-install-venv as_root apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends python3-venv
            quietly venv python3 -m venv "$VENV"
        fi
    fi
    quietly pip "$PY" -m pip install -q --disable-pip-version-check irc pytest
fi

# ------------------------------------------------------------------------------- 2. the server
if [[ "$SERVER" == ours ]]; then
    if [[ -n "${CHAT_SERVER:-}" ]]; then
        BINARY="$CHAT_SERVER"
    else
        echo "== swift build -c release --product chat-server"
        quietly swift-build swift build -c release --product chat-server
        BINARY="$(swift build -c release --show-bin-path)/chat-server"
    fi
    [[ -x "$BINARY" ]] || { echo "run.sh: no chat-server binary at $BINARY" >&2; exit 1; }
    PYTEST_ARGS=(--server=ours "--chat-server=$BINARY" "${PYTEST_ARGS[@]}")
else
    PYTEST_ARGS=(--server=ngircd "${PYTEST_ARGS[@]}")
fi

# -------------------------------------------------------------------------------- 3. the tests
echo "== pytest against $SERVER"
export IRC_REQUIRE_CLIENTS=1   # ii/irssi missing is a failure here, not a skip
export PYTHONDONTWRITEBYTECODE=1
cd "$HERE"
status=0
timeout -k 10 "${INTEGRATION_TIMEOUT:-300}" "$PY" -m pytest -c "$HERE/pytest.ini" --rootdir="$HERE" -q -rfEs "${PYTEST_ARGS[@]}" || status=$?
if [[ $status -eq 124 || $status -eq 137 ]]; then
    echo "run.sh: the integration tests did not finish within ${INTEGRATION_TIMEOUT:-300} s" >&2
fi
exit "$status"
