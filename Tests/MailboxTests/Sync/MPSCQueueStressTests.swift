import Foundation
import Synchronization
@testable import Mailbox
import Testing

@Suite("MPSCQueue under concurrent producers")
struct MPSCQueueStressTests {
    /// Sizes stay small for the default run (thousands of block boundaries, seconds under
    /// ThreadSanitizer on 2 cores); `MAILBOX_SOAK=1` makes them a soak.
    private let soak = ProcessInfo.processInfo.environment["MAILBOX_SOAK"] != nil

    /// Elements carry their producer in the high bits and the producer's sequence number below.
    private static let sequenceBits = 32

    /// When a consumer loop gives up: far beyond what a correct run takes (milliseconds; seconds
    /// under ThreadSanitizer), so that a lost element fails the test instead of spinning.
    private static func deadline() -> DispatchTime {
        .now() + (ProcessInfo.processInfo.environment["MAILBOX_SOAK"] != nil ? .seconds(600) : realTimeTimeout)
    }

    /// Whether `deadline` has passed; if so, records the failure (with what arrived).
    private static func isPast(_ deadline: DispatchTime, received: Int, of total: Int) -> Bool {
        guard DispatchTime.now() >= deadline else { return false }
        Issue.record("the consumer waited in vain: \(received) of \(total) elements arrived")
        return true
    }

    /// Runs `producers` threads enqueueing `perProducer` elements each while this thread
    /// dequeues, then checks no loss, no duplication and per-producer FIFO.
    private func drain(producers: Int, perProducer: Int) {
        let queue = MPSCQueue<Int>()
        let group = DispatchGroup()
        for producer in 0..<producers {
            // Own threads, not the dispatch pool: consumers spinning on pool threads (tests run
            // in parallel) must not starve a producer queued behind them.
            group.enter()
            Thread {
                for sequence in 0..<perProducer {
                    queue.enqueue(producer << Self.sequenceBits | sequence)
                }
                group.leave()
            }.start()
        }
        var next = [Int](repeating: 0, count: producers)
        var received = 0
        let total = producers * perProducer
        let deadline = Self.deadline()
        while received < total {
            guard let element = queue.dequeue() else {
                // A lost element would otherwise keep this loop spinning for ever.
                if Self.isPast(deadline, received: received, of: total) { return }
                sched_yield()  // let preempted producers run (2 cores, often busy)
                continue
            }
            let producer = element >> Self.sequenceBits
            let sequence = element & ((1 << Self.sequenceBits) - 1)
            #expect(producer < producers)
            guard producer < producers else { return }
            // Equal means in order and not duplicated; the total count then rules out loss.
            #expect(sequence == next[producer], "producer \(producer) out of order")
            next[producer] = sequence + 1
            received += 1
        }
        group.wait()
        #expect(queue.dequeue() == nil)
        #expect(queue.isEmpty)
        #expect(next == [Int](repeating: perProducer, count: producers))
    }

    /// The first block is allocated by the first enqueue: producers racing to be first (and
    /// past the first block's two slots, before it is even the tail), with the consumer
    /// starting at the same time, still lose and duplicate nothing.
    @Test func freshQueues_producersRacingTheFirstEnqueue_neitherLoseNorDuplicate() {
        let rounds = soak ? 20_000 : 500
        let producers = 3, perProducer = 4
        for _ in 0..<rounds {
            let queue = MPSCQueue<Int>()
            let go = Atomic<Bool>(false)
            let group = DispatchGroup()
            for producer in 0..<producers {
                // Own threads, not the dispatch pool: a producer spinning on `go` must not hold
                // a pool thread that another test's producer is queued behind.
                group.enter()
                Thread {
                    while !go.load(ordering: .acquiring) { sched_yield() }
                    for sequence in 0..<perProducer {
                        queue.enqueue(producer << Self.sequenceBits | sequence)
                    }
                    group.leave()
                }.start()
            }
            go.store(true, ordering: .releasing)
            var next = [Int](repeating: 0, count: producers)
            var received = 0
            let deadline = Self.deadline()
            while received < producers * perProducer {
                guard let element = queue.dequeue() else {
                    if Self.isPast(deadline, received: received, of: producers * perProducer) { return }
                    sched_yield()
                    continue
                }
                let producer = element >> Self.sequenceBits
                #expect(element & ((1 << Self.sequenceBits) - 1) == next[producer])
                next[producer] += 1
                received += 1
            }
            group.wait()
            #expect(queue.dequeue() == nil)
        }
    }

    @Test func oneProducer_deliversEverythingInOrder() {
        drain(producers: 1, perProducer: soak ? 1_000_000 : 20_000)
    }

    @Test func fourProducers_neitherLoseNorDuplicateAndKeepEachProducersOrder() {
        drain(producers: 4, perProducer: soak ? 500_000 : 10_000)
    }

    @Test func eightProducers_manyBlocks_neitherLoseNorDuplicate() {
        drain(producers: 8, perProducer: soak ? 400_000 : 5_000)
    }

    /// Class elements across threads: every one is released exactly once (no leak, no double
    /// release) whether it was dequeued or still queued when the queue went away.
    @Test func concurrentReferenceElements_areReleasedExactlyOnce() {
        final class Tracked: Sendable {
            let onDeinit: @Sendable () -> Void
            init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        let released = LockedValueBox(0)
        let producers = 4, perProducer = 20_000
        do {
            let queue = MPSCQueue<Tracked>()
            let group = DispatchGroup()
            for _ in 0..<producers {
                group.enter()
                Thread {
                    for _ in 0..<perProducer {
                        queue.enqueue(Tracked { released.withLockedValue { $0 += 1 } })
                    }
                    group.leave()
                }.start()
            }
            // Take half, leave the rest queued for deinit.
            var taken = 0
            let deadline = Self.deadline()
            while taken < producers * perProducer / 2 {
                if queue.dequeue() != nil {
                    taken += 1
                } else if Self.isPast(deadline, received: taken, of: producers * perProducer / 2) {
                    return
                }
            }
            group.wait()
        }
        // The producer threads' closures hold the queue until the threads have exited, which
        // may be just after `group.wait()` returns: its deinit (releasing the queued half) can
        // come a moment later.
        #expect(spinUntil { released.withLockedValue { $0 } >= producers * perProducer })
        #expect(released.withLockedValue { $0 } == producers * perProducer)
    }

    @Test func emptyQueue_dequeuesNilAndIsEmpty() {
        let queue = MPSCQueue<Int>()
        #expect(queue.dequeue() == nil)
        #expect(queue.isEmpty)
        queue.enqueue(1)
        #expect(!queue.isEmpty)
        #expect(queue.dequeue() == 1)
        #expect(queue.dequeue() == nil)
    }

    /// `deinit` frees queued elements: each holds a reference whose release is counted.
    @Test func deinit_releasesQueuedElements() {
        final class Tracked: Sendable {
            let onDeinit: @Sendable () -> Void
            init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        let released = LockedValueBox(0)
        do {
            let queue = MPSCQueue<Tracked>()
            for _ in 0..<1_000 {
                queue.enqueue(Tracked { released.withLockedValue { $0 += 1 } })
            }
            _ = queue.dequeue()
        }
        #expect(released.withLockedValue { $0 } == 1_000)
    }
}
