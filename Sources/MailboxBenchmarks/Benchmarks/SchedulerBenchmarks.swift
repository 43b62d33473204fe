import Dispatch
import Foundation
import Mailbox

// The cost a scheduler adds over the queue it wraps: N empty actions scheduled from one thread,
// timed until the last has run, against the raw queue doing the same in the same process.

extension BenchmarkRegistry {
    static let schedulers: [Benchmark] = [
        Benchmark(
            "schedule-queue",
            summary: "N empty actions through QueueScheduler().schedule {}; "
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
            summary: "N empty actions through OperationQueueScheduler().schedule {} (serial); "
                + "baseline: OperationQueue.addOperation(BlockOperation {}), "
                + "maxConcurrentOperationCount 1. Default N is 100000: Foundation's OperationQueue "
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
/// `count` empty ones, signals a semaphore: everything before it has run by then.
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
    _ = timeEmptyActions(warmUp) { schedule(oursTarget, $0) }
    _ = timeEmptyActions(warmUp) { baselineSchedule(baselineTarget, $0) }

    let medians = interleavedMedians(
        rounds: comparisonRounds,
        ours: { timeEmptyActions(count) { schedule(oursTarget, $0) } },
        baseline: { timeEmptyActions(count) { baselineSchedule(baselineTarget, $0) } }
    )

    var result = BenchmarkResult(
        seconds: medians.ours,
        msgs: count,
        baseline: .init(name: baselineName, seconds: medians.baseline),
        ok: true
    )
    result.extra = [
        ("rounds", .int(comparisonRounds)),
        ("note", .string("median of interleaved rounds; 1 msg = 1 empty action scheduled and run; one scheduling thread")),
    ]
    return result
}

/// Schedules `count` empty actions and then one that signals, and waits for it: the seconds
/// from the first `schedule` call until the signal arrives.
func timeEmptyActions(_ count: Int, schedule: (@escaping @Sendable () -> Void) -> Void) -> Double {
    let finished = DispatchSemaphore(value: 0)
    let start = MonotonicClock.nanoseconds()
    for _ in 0..<count {
        schedule {}
    }
    schedule { finished.signal() }
    finished.wait()
    let end = MonotonicClock.nanoseconds()
    return Double(end &- start) / 1e9
}
