#!/usr/bin/env bash
# Hang hunting: runs the concurrency-heavy test suites (bridges, ask, mailboxes, the pool
# scheduler, lifecycle, supervision, fault injection) many times in a row, each run under a
# watchdog. A run that outlives the watchdog is a hang: every thread's backtrace is printed
# (gdb, or the Swift backtracer when gdb cannot be had) before the run is killed.
#
#   Tests/stress.sh                 # 50 runs
#   Tests/stress.sh --quick         # as many runs as fit in 150 s (what .ci/run uses)
#   Tests/stress.sh --minutes 60    # as many runs as fit in an hour
#   Tests/stress.sh --runs 500 --load 2 --watchdog 300
#
# Options:
#   --runs N          stop after N runs (default 50; with --minutes, no run limit unless given)
#   --minutes M       stop starting new runs after M minutes (decimals allowed)
#   --quick           --minutes 2.5, watchdog 120 s
#   --load K          keep K busy loops running meanwhile (both cores loaded: --load 2)
#   --watchdog S      seconds one run may take before it counts as a hang (default 180)
#   --filter REGEX    which tests (swift-testing --filter); default: the concurrency suites
#   --tsan            build and run with ThreadSanitizer (its own scratch path, .build-tsan)
#   --no-build        use the test binary already built
#   --stop-on-failure stop at the first failed or hung run
#   --logs DIR        where the logs of failed and hung runs go (default .build/stress-logs)
#
# Exit status: 0 when every run passed, 1 when any failed or hung, 2 on bad usage.
# The test binary is copied aside before the loop, so rebuilding meanwhile does not disturb it.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=""
minutes=""
load=0
watchdog=180
tsan=0
build=1
stop_on_failure=0
logs=".build/stress-logs"
filter='MailboxTests\.(StoreTests|AskProducerAndActionTests|ConcurrencyBridgeTests|BindingToActorTests|ActorOutputAndStateTests|AskAndTimerTests|AskEdgeCaseTests|ContainmentTests|ShutdownUnderLoadTests|HangRegressionTests|MailboxCapacityAndOrderingTests|PoolActivationTests|LifecycleTests|SpawnWhileStoppingTests|RealTimeSchedulers|MPSCQueueStressTests|Supervis|ElasticPoolTests|BalancingPoolTests|PoolReviewRegressionTests|RouterTests|ReceptionistTests)|FaultInjectionTests'

usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --minutes) minutes="$2"; shift 2 ;;
        --quick) minutes="2.5"; watchdog=120; shift ;;
        --load) load="$2"; shift 2 ;;
        --watchdog) watchdog="$2"; shift 2 ;;
        --filter) filter="$2"; shift 2 ;;
        --tsan) tsan=1; shift ;;
        --no-build) build=0; shift ;;
        --stop-on-failure) stop_on_failure=1; shift ;;
        --logs) logs="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "stress.sh: unknown option $1" >&2; usage ;;
    esac
done
if [ -z "$runs" ] && [ -z "$minutes" ]; then runs=50; fi

# MARK: Tools

# A hang is only useful with its backtraces: get gdb if it is missing (CI runs on a clean
# Debian machine as root); otherwise the Swift backtracer answers SIGQUIT with every thread.
have_gdb=0
if command -v gdb >/dev/null 2>&1; then
    have_gdb=1
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing gdb for backtraces of hung runs"
    if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdb) >/dev/null 2>&1; then
        have_gdb=1
    fi
fi
if [ "$have_gdb" = 0 ]; then
    echo "== gdb unavailable: hung runs get the Swift backtracer's report (SIGQUIT)"
fi

# MARK: Build

scratch=()
sanitize=()
if [ "$tsan" = 1 ]; then
    scratch=(--scratch-path .build-tsan)
    sanitize=(--sanitize=thread)
fi
if [ "$build" = 1 ]; then
    echo "== building the tests${sanitize:+ (ThreadSanitizer)}"
    swift build --build-tests "${scratch[@]}" "${sanitize[@]}" || exit 1
fi
bin_dir="$(swift build --show-bin-path "${scratch[@]}" "${sanitize[@]}")"
binary="$bin_dir/MailboxPackageTests.xctest"
if [ ! -x "$binary" ]; then
    echo "stress.sh: no test binary at $binary (build the tests first)" >&2
    exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/mailbox-stress.XXXXXX")"
cp "$binary" "$work/tests"
mkdir -p "$logs"

# MARK: Load and clean-up

load_pids=()
current=""
cleanup() {
    [ -n "$current" ] && kill -9 "$current" 2>/dev/null
    for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo "== interrupted"; exit 130' INT TERM
for _ in $(seq 1 "$load"); do
    ( while :; do :; done ) &
    load_pids+=($!)
done
[ "$load" -gt 0 ] && echo "== $load busy loops loading the cores"

# MARK: One run under the watchdog

# Prints every thread's backtrace of process $1 into file $2.
backtraces() {
    local pid="$1" out="$2"
    if [ "$have_gdb" = 1 ]; then
        timeout 120 gdb -p "$pid" -batch -nx -q \
            -ex 'set pagination off' -ex 'info threads' -ex 'thread apply all bt 40' >>"$out" 2>&1
    else
        # Handled by the Swift backtracer (enabled for the run below): all threads, then exit.
        kill -QUIT "$pid" 2>/dev/null
        sleep 20
    fi
}

# Runs the suites once; returns 0 (passed), 1 (failed) or 3 (hung).
run_once() {
    local log="$1"
    SWIFT_BACKTRACE="enable=yes,interactive=no,threads=all,color=no,timeout=30s" \
        "$work/tests" --testing-library swift-testing --filter "$filter" >"$log" 2>&1 &
    current=$!
    local waited=0
    while kill -0 "$current" 2>/dev/null; do
        if [ "$waited" -ge "$watchdog" ]; then
            {
                echo
                echo "==== WATCHDOG: run still going after ${watchdog}s; backtraces of every thread"
                echo "==== tests not finished:"
                comm -23 <(grep -o 'Test [^ ]*() started' "$log" | sed 's/ started//' | sort) \
                         <(grep -E -o 'Test [^ ]*\(\) (passed|failed)' "$log" | sed -E 's/ (passed|failed)//' | sort)
            } >>"$log"
            backtraces "$current" "$log"
            kill -9 "$current" 2>/dev/null
            wait "$current" 2>/dev/null
            current=""
            return 3
        fi
        sleep 1
        waited=$((waited + 1))
    done
    wait "$current"
    local status=$?
    current=""
    [ "$status" = 0 ] && return 0
    return 1
}

# MARK: The loop

start=$(date +%s)
deadline=""
if [ -n "$minutes" ]; then
    deadline=$(awk -v s="$start" -v m="$minutes" 'BEGIN { printf "%d", s + m * 60 }')
fi
passed=0
failed=0
hung=0
n=0
echo "== stress: filter '$filter', watchdog ${watchdog}s${runs:+, up to $runs runs}${minutes:+, for $minutes min}"
while :; do
    [ -n "$runs" ] && [ "$n" -ge "$runs" ] && break
    [ -n "$deadline" ] && [ "$(date +%s)" -ge "$deadline" ] && break
    n=$((n + 1))
    log="$work/run-$n.log"
    t0=$(date +%s)
    run_once "$log"
    outcome=$?
    t=$(( $(date +%s) - t0 ))
    case "$outcome" in
        0)
            passed=$((passed + 1))
            echo "run $n: passed (${t}s)"
            ;;
        1)
            failed=$((failed + 1))
            cp "$log" "$logs/failed-run-$n-$start.log"
            echo "run $n: FAILED (${t}s), log $logs/failed-run-$n-$start.log"
            grep -E '✘|failed|Fatal error|Expectation' "$log" | head -20
            ;;
        3)
            hung=$((hung + 1))
            cp "$log" "$logs/hung-run-$n-$start.log"
            echo "run $n: HUNG (watchdog ${watchdog}s), backtraces in $logs/hung-run-$n-$start.log"
            sed -n '/==== tests not finished:/,/^$/p' "$log" | head -20
            ;;
    esac
    rm -f "$log"
    if [ "$stop_on_failure" = 1 ] && [ "$outcome" != 0 ]; then break; fi
done
elapsed=$(( $(date +%s) - start ))
echo "== stress: $n runs in ${elapsed}s: $passed passed, $failed failed, $hung hung"
[ "$failed" = 0 ] && [ "$hung" = 0 ]
