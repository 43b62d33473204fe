#!/usr/bin/env bash
# Builds (and runs) the Go reference client of the NATS benchmark, Tests/Integration/nats/gobench.
#
#   bash Tests/Integration/nats/go-bench.sh [--build-only] [nats-gobench flags...]
#
# Offline: Go and the nats.go library come from Debian's packages golang-go and
# golang-github-nats-io-go-nats-dev (installed with apt-get when missing; they put the library's
# source, with nkeys, nuid and x/crypto, under /usr/share/gocode/src), and the program is built
# in GOPATH mode (GO111MODULE=off, GOPATH=/usr/share/gocode, GOPROXY=off): no module download.
# The binary is .build/nats-gobench, rebuilt only when main.go is newer; the build cache is in
# .build/go-cache. Then, unless --build-only, runs it with the remaining flags against
# $MAILBOX_NATS_URL (see main.go: -modes, -sizes, -n, -requests, -url), e.g. under a server of
# its own:  bash Tests/Integration/nats.sh -- bash Tests/Integration/nats/go-bench.sh -n 500000
# Exit status: non-zero, with the cause on stderr, when Go is unavailable or the build fails.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
SRC="$ROOT/Tests/Integration/nats/gobench/main.go"
BIN="$ROOT/.build/nats-gobench"
LOG="$ROOT/.build/nats-gobench-build.log"
GOPATH_DEBIAN=/usr/share/gocode
LIB="$GOPATH_DEBIAN/src/github.com/nats-io/nats.go"

BUILD_ONLY=0
if [[ "${1:-}" == "--build-only" ]]; then BUILD_ONLY=1; shift; fi
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then sed -n '2,14p' "$0"; exit 0; fi

mkdir -p "$ROOT/.build"

if ! command -v go >/dev/null 2>&1 || [[ ! -d "$LIB" ]]; then
    echo "go-bench.sh: installing golang-go and golang-github-nats-io-go-nats-dev" >&2
    as_root() {
        if [[ $(id -u) -eq 0 ]]; then "$@"
        elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
        else echo "go-bench.sh: need root (or sudo) for: $*" >&2; return 1
        fi
    }
    export DEBIAN_FRONTEND=noninteractive
    if ! { as_root apt-get -o DPkg::Lock::Timeout=300 update -q \
           && as_root apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends \
                  golang-go golang-github-nats-io-go-nats-dev; } >"$LOG" 2>&1; then
        echo "go-bench.sh: Go or nats.go is unavailable: the apt-get install of golang-go and" \
             "golang-github-nats-io-go-nats-dev failed; last lines of $LOG:" >&2
        tail -n 20 "$LOG" >&2
        exit 1
    fi
fi
if ! command -v go >/dev/null 2>&1 || [[ ! -d "$LIB" ]]; then
    echo "go-bench.sh: Go is unavailable: no 'go' command or no $LIB after installing" >&2
    exit 1
fi

if [[ ! -x "$BIN" || "$SRC" -nt "$BIN" ]]; then
    # GOPATH mode against Debian's source tree; nothing is fetched (GOPROXY=off, GOFLAGS cleared).
    if ! (cd "$(dirname "$SRC")" && env GO111MODULE=off GOPATH="$GOPATH_DEBIAN" GOPROXY=off GOFLAGS= \
              GOTOOLCHAIN=local GOCACHE="$ROOT/.build/go-cache" \
              go build -o "$BIN.tmp" main.go) >"$LOG" 2>&1; then
        echo "go-bench.sh: go build failed; $LOG:" >&2
        tail -n 30 "$LOG" >&2
        exit 1
    fi
    mv -f "$BIN.tmp" "$BIN"
    echo "go-bench.sh: built $BIN ($(go version | cut -d' ' -f3), nats.go from $LIB)" >&2
fi

[[ $BUILD_ONLY -eq 1 ]] && exit 0
exec "$BIN" "$@"
