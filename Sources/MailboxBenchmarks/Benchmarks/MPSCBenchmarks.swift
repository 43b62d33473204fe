#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Mailbox
import Synchronization

// The mailbox's queue on its own: P producer threads, one consumer, against a mutex-protected
// ring buffer doing the same work on the same threads.

extension BenchmarkRegistry {
    static let mpsc: [Benchmark] = [
        Benchmark(
            "mpsc",
            summary: "PRODUCERS threads enqueue N Ints in total into MPSCQueue, one thread dequeues "
                + "(polling); baseline: a Synchronization.Mutex-protected ring-buffer deque",
            parameters: [.init("N", default: 10_000_000), .init("PRODUCERS", default: 2)]
        ) { sizes throws(BenchmarkError) in
            let (total, producers) = (sizes[0], sizes[1])
            guard producers <= total else {
                throw .badArguments("mpsc: N (\(total)) must be at least PRODUCERS (\(producers))")
            }
            guard producers < 1 << 20, total < 1 << 40 else {
                throw .badArguments("mpsc: at most 2^20 producers and 2^40 elements")
            }
            return runMPSCComparison(total: total, producers: producers)
        },
    ]
}

/// The queue operations the MPSC benchmark drives, so ours and the baseline share one loop.
protocol BenchmarkIntQueue: AnyObject, Sendable {
    func enqueue(_ value: Int)
    func dequeue() -> Int?
}

extension MPSCQueue: BenchmarkIntQueue where Element == Int {}
extension MutexDeque: BenchmarkIntQueue {}

/// What the consumer saw in one run.
struct MPSCRunOutcome {
    var seconds: Double
    var received: Int
    /// Every element arrived exactly once (count and checksum match what was sent), each
    /// producer's elements in the order it sent them, and the queue is empty at the end.
    var ok: Bool
    /// Times the consumer found the queue empty before it had everything.
    var emptyPolls: Int
}

func runMPSCComparison(total: Int, producers: Int) -> BenchmarkResult {
    // Warm up both (threads, allocator arenas, page faults) at a tenth of the size, untimed.
    let warmUp = max(producers, total / 10)
    _ = runMPSC(MPSCQueue<Int>(), total: warmUp, producers: producers)
    _ = runMPSC(MutexDeque(), total: warmUp, producers: producers)

    var ours: [MPSCRunOutcome] = []
    var baseline: [MPSCRunOutcome] = []
    let medians = interleavedMedians(
        rounds: comparisonRounds,
        ours: {
            ours.append(runMPSC(MPSCQueue<Int>(), total: total, producers: producers))
            return ours.last!.seconds
        },
        baseline: {
            baseline.append(runMPSC(MutexDeque(), total: total, producers: producers))
            return baseline.last!.seconds
        }
    )
    let oursOK = ours.allSatisfy(\.ok)
    let baselineOK = baseline.allSatisfy(\.ok)

    var result = BenchmarkResult(
        seconds: medians.ours,
        msgs: total,
        baseline: .init(name: "mutex-deque", seconds: medians.baseline),
        ok: oursOK && baselineOK
    )
    result.extra = [
        ("producers", .int(producers)),
        ("rounds", .int(comparisonRounds)),
        ("empty_polls", .int(ours.map(\.emptyPolls).reduce(0, +) / max(1, ours.count))),
        ("baseline_empty_polls", .int(baseline.map(\.emptyPolls).reduce(0, +) / max(1, baseline.count))),
        ("note", .string("median of interleaved rounds; 1 msg = 1 enqueue + 1 dequeue; consumer on the main thread")),
    ]
    if !oursOK { printDiagnostic("mpsc: MPSCQueue self-check failed") }
    if !baselineOK { printDiagnostic("mpsc: baseline self-check failed") }
    return result
}

/// The sum of every element the producers sent, added up by each producer when it is done.
private final class SentChecksum: Sendable {
    let value = Atomic<Int>(0)
}

/// Bits of an element holding the producer's sequence number; the producer index sits above.
private let sequenceBits = 40
private let sequenceMask = (1 << sequenceBits) - 1

/// Runs `producers` threads enqueueing `total` elements into `queue` between them while the
/// calling thread dequeues them all. Times from the moment every thread is ready until the
/// consumer has the last element.
func runMPSC<Queue: BenchmarkIntQueue>(_ queue: Queue, total: Int, producers: Int) -> MPSCRunOutcome {
    let sent = SentChecksum()
    let gate = StartGate(participants: producers)
    var threads: [BenchThread] = []
    for producer in 0..<producers {
        // The first producer also sends the remainder.
        let count = total / producers + (producer == 0 ? total % producers : 0)
        threads.append(BenchThread {
            var checksum = 0
            let tag = producer << sequenceBits
            gate.arriveAndWait()
            for sequence in 0..<count {
                let element = tag | sequence
                queue.enqueue(element)
                checksum &+= element
            }
            sent.value.wrappingAdd(checksum, ordering: .relaxed)
        })
    }

    var nextSequence = [Int](repeating: 0, count: producers)
    var received = 0
    var checksum = 0
    var inOrder = true
    var emptyPolls = 0
    var missesInARow = 0

    gate.waitForAllThenOpen()
    let start = MonotonicClock.nanoseconds()
    while received < total {
        if let element = queue.dequeue() {
            let producer = element >> sequenceBits
            let sequence = element & sequenceMask
            if producer < producers {
                inOrder = inOrder && sequence == nextSequence[producer]
                nextSequence[producer] = sequence &+ 1
            } else {
                inOrder = false
            }
            checksum &+= element
            received &+= 1
            missesInARow = 0
        } else {
            // Same polling policy for every queue: spin briefly, then give the CPU away (on a
            // machine with fewer cores than threads a producer may be waiting for it).
            emptyPolls &+= 1
            missesInARow &+= 1
            if missesInARow > 16 { sched_yield() }
        }
    }
    let end = MonotonicClock.nanoseconds()
    for thread in threads { thread.join() }
    let drained = queue.dequeue() == nil

    return MPSCRunOutcome(
        seconds: Double(end &- start) / 1e9,
        received: received,
        ok: inOrder && drained && checksum == sent.value.load(ordering: .relaxed),
        emptyPolls: emptyPolls
    )
}
