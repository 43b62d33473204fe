import Dispatch
import Foundation
import Mailbox
import Synchronization

// The cost a scheduler adds over the queue it wraps: N near-empty actions scheduled from one
// thread, timed until the last has run, against the raw queue doing the same in the same process.
// Each action only counts itself, so that the self-check can tell that every one of them ran.

extension BenchmarkRegistry {
    static let schedulers: [Benchmark] = [
        Benchmark(
            "schedule-queue",
            summary: "N near-empty actions (each counts itself with one relaxed atomic add) "
                + "through QueueScheduler().schedule {}; "
                + "baseline: DispatchQueue.async {} on a serial queue",
            parameters: [.init("N", default: 1_000_000)]
        ) { sizes in
            compareScheduling(
                count: sizes[0],
                baselineName: "dispatch-async",
                ours: { QueueScheduler(qos: .default, name: "bench.ours") },
                schedule: { scheduler, action in scheduler.schedule(action) },
                baseline: { DispatchQueue(label: "bench.baseline", qos: .default) },
                baselineSchedule: { queue, action in queue.async(execute: action) }
            )
        },
        Benchmark(
            "schedule-operation",
            summary: "N near-empty actions (each counts itself with one relaxed atomic add) "
                + "through OperationQueueScheduler().schedule {} (serial); "
                + "baseline: OperationQueue.addOperation(BlockOperation {}), maxConcurrentOperationCount 1. Default N is 100000: Foundation's OperationQueue "
                + "costs 3-8 us per operation here, growing with the backlog",
            parameters: [.init("N", default: 100_000)]
        ) { sizes in
            compareScheduling(
                count: sizes[0],
                baselineName: "operation-queue",
                ours: { OperationQueueScheduler(name: "bench.ours") },
                schedule: { scheduler, action in scheduler.schedule(action) },
                baseline: {
                    let queue = OperationQueue()
                    queue.name = "bench.baseline"
                    queue.maxConcurrentOperationCount = 1
                    return queue
                },
                baselineSchedule: { queue, action in queue.addOperation(BlockOperation(block: action)) }
            )
        },
    ]
}

/// Times `count` empty actions through `ours()` and through `baseline()`, each after an untimed
/// warm-up of a tenth of the size, in interleaved rounds; reports the median of each side.
///
/// Both targets are serial, so the run ends when one final action, scheduled after the
/// `count` empty ones, signals a semaphore: everything before it has run by then. The
/// self-check (`ok`) is that every action of every round, on both sides, did run.
func compareScheduling<Ours, Baseline>(
    count: Int,
    baselineName: String,
    ours makeOurs: () -> Ours,
    schedule: (Ours, @escaping @Sendable () -> Void) -> Void,
    baseline makeBaseline: () -> Baseline,
    baselineSchedule: (Baseline, @escaping @Sendable () -> Void) -> Void
) -> BenchmarkResult {
    let warmUp = max(1, count / 10)
    let oursTarget = makeOurs()
    let baselineTarget = makeBaseline()
    // Whether every batch so far ran all of its actions (checked after each batch).
    var allRan = true
    func timed(_ size: Int, _ scheduleOne: (@escaping @Sendable () -> Void) -> Void) -> Double {
        let batch = timeEmptyActions(size, schedule: scheduleOne)
        if batch.ran != size {
            allRan = false
            printDiagnostic("\(baselineName) comparison: \(batch.ran) of \(size) actions ran")
        }
        return batch.seconds
    }
    _ = timed(warmUp) { schedule(oursTarget, $0) }
    _ = timed(warmUp) { baselineSchedule(baselineTarget, $0) }

    let medians = interleavedMedians(
        rounds: comparisonRounds,
        ours: { timed(count) { schedule(oursTarget, $0) } },
        baseline: { timed(count) { baselineSchedule(baselineTarget, $0) } }
    )

    var result = BenchmarkResult(
        seconds: medians.ours,
        msgs: count,
        baseline: .init(name: baselineName, seconds: medians.baseline),
        ok: allRan
    )
    result.extra = [
        ("rounds", .int(comparisonRounds)),
        ("note", .string("median of interleaved rounds; 1 msg = 1 action scheduled and run (its body: one relaxed atomic increment, on both sides, to check that all ran); one scheduling thread")),
    ]
    return result
}

/// Counts the benchmark's actions as they run.
final class RunCounter: Sendable {
    let value = Atomic<Int>(0)
}

/// Schedules `count` actions that only count themselves, then one that signals, and waits for
/// it: the seconds from the first `schedule` call until the signal arrives, and how many of the
/// `count` actions had run by then (all of them, on a serial target).
func timeEmptyActions(_ count: Int, schedule: (@escaping @Sendable () -> Void) -> Void) -> (seconds: Double, ran: Int) {
    let finished = DispatchSemaphore(value: 0)
    let counter = RunCounter()
    let start = MonotonicClock.nanoseconds()
    for _ in 0..<count {
        schedule { counter.value.wrappingAdd(1, ordering: .relaxed) }
    }
    schedule { finished.signal() }
    finished.wait()
    let end = MonotonicClock.nanoseconds()
    // The semaphore orders the counted actions (all before the signal on a serial target)
    // before this load.
    return (Double(end &- start) / 1e9, counter.value.load(ordering: .relaxed))
}
