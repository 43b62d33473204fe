import Foundation
import Testing
@testable import Mailbox

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("MPSCQueue")
struct MPSCQueueTests {
    @Test func singleThread_dequeuesInEnqueueOrder() {
        let queue = MPSCQueue<Int>()
        for value in 0..<1_000 { queue.enqueue(value) }
        var dequeued: [Int] = []
        while let value = queue.dequeue() { dequeued.append(value) }
        #expect(dequeued == Array(0..<1_000))
    }

    @Test func dequeueOnEmpty_returnsNilAndQueueStaysUsable() {
        let queue = MPSCQueue<String>()
        #expect(queue.dequeue() == nil)
        queue.enqueue("a")
        #expect(queue.dequeue() == "a")
        #expect(queue.dequeue() == nil)
        queue.enqueue("b")
        queue.enqueue("c")
        #expect(queue.dequeue() == "b")
        queue.enqueue("d")
        #expect(queue.dequeue() == "c")
        #expect(queue.dequeue() == "d")
        #expect(queue.dequeue() == nil)
    }

    @Test func isEmpty_tracksEnqueueAndDequeue() {
        let queue = MPSCQueue<Int>()
        #expect(queue.isEmpty)
        queue.enqueue(1)
        #expect(!queue.isEmpty)
        queue.enqueue(2)
        _ = queue.dequeue()
        #expect(!queue.isEmpty)
        _ = queue.dequeue()
        #expect(queue.isEmpty)
    }

    @Test func deinit_releasesEveryElementStillQueued() {
        let tracker = LifetimeTracker()
        var kept: Tracked?
        do {
            let queue = MPSCQueue<Tracked>()
            for index in 0..<100 { queue.enqueue(tracker.instance(index)) }
            kept = queue.dequeue()
            for _ in 0..<9 { _ = queue.dequeue() }
            #expect(tracker.liveCount == 91)
        }
        #expect(tracker.instanceCount == 100)
        #expect(tracker.liveCount == 1, "the queue leaked elements it still held when it was deinitialised")
        #expect(kept?.payload == 0)
        kept = nil
        #expect(tracker.liveCount == 0)
    }

    /// The consumer never ran, so the queue is freed from its lazily published first block.
    @Test func deinit_withoutAnyDequeue_releasesEveryElement() {
        let tracker = LifetimeTracker()
        do {
            let queue = MPSCQueue<Tracked>()
            for index in 0..<5 { queue.enqueue(tracker.instance(index)) }
            #expect(tracker.liveCount == 5)
        }
        #expect(tracker.liveCount == 0)
    }

    @Test func unusedQueue_allocatesNoBlock_andIsEmpty() {
        let queue = MPSCQueue<Int>()
        #expect(queue.tail.firstBlock.load(ordering: .relaxed) == nil)
        #expect(queue.isEmpty)
        #expect(queue.dequeue() == nil)
        #expect(queue.tail.firstBlock.load(ordering: .relaxed) == nil)
        queue.enqueue(1)
        #expect(queue.tail.firstBlock.load(ordering: .relaxed) != nil)
        #expect(queue.tail.tailBlock.load(ordering: .relaxed) == queue.tail.firstBlock.load(ordering: .relaxed))
        #expect(queue.dequeue() == 1)
    }

    @Test func dequeuedElement_isNoLongerRetainedByTheQueue() {
        let tracker = LifetimeTracker()
        let queue = MPSCQueue<Tracked>()
        queue.enqueue(tracker.instance())
        queue.enqueue(tracker.instance())
        _ = queue.dequeue()
        #expect(tracker.liveCount == 1, "a dequeued slot still holds its element (dequeue must move it out of its block)")
        _ = queue.dequeue()
        #expect(tracker.liveCount == 0)
        withExtendedLifetime(queue) {}
    }

    struct Item: Sendable {
        var producer: Int
        var sequence: Int
    }

    /// Many producers, one consumer: nothing lost, nothing duplicated, each producer's elements in
    /// the order it enqueued them.
    @Test func manyProducers_noElementLostOrDuplicatedAndPerProducerFIFO() {
        // Small enough for a few seconds under ThreadSanitizer; MAILBOX_SOAK=1 makes it a soak.
        let producers = 8
        let perProducer = ProcessInfo.processInfo.environment["MAILBOX_SOAK"] == nil ? 10_000 : 500_000
        let queue = MPSCQueue<Item>()
        let start = DispatchSemaphore(value: 0)
        let producersDone = DispatchGroup()

        for producer in 0..<producers {
            producersDone.enter()
            let thread = Thread {
                start.wait()
                for sequence in 0..<perProducer {
                    queue.enqueue(Item(producer: producer, sequence: sequence))
                }
                producersDone.leave()
            }
            thread.start()
        }

        // This thread is the single consumer.
        var next = [Int](repeating: 0, count: producers)
        var outOfOrder = 0
        var received = 0
        for _ in 0..<producers { start.signal() }
        let deadline = Date().addingTimeInterval(60)
        while received < producers * perProducer, Date() < deadline {
            guard let item = queue.dequeue() else {
                sched_yield()
                continue
            }
            if item.sequence != next[item.producer] { outOfOrder += 1 }
            next[item.producer] = item.sequence + 1
            received += 1
        }
        #expect(producersDone.waitBounded())

        #expect(received == producers * perProducer)
        #expect(outOfOrder == 0, "elements lost, duplicated or reordered within a producer")
        #expect(next == [Int](repeating: perProducer, count: producers))
        #expect(queue.dequeue() == nil, "an element was dequeued twice or invented")
        #expect(queue.isEmpty)
    }

    /// One producer and a consumer that keeps up with it: the consumer is almost always at the
    /// slot the producer is writing, finding it claimed but not yet flagged, and often at the
    /// end of a block while the producer appends the next one and moves `tailBlock` on. Under
    /// ThreadSanitizer this is the reliable reproducer for races between `dequeue`'s reads of a
    /// slot's flag, its element and a block's `next`, and `enqueue`'s writes of the same.
    @Test
    func consumerAtTheTail_whileTheProducerLinks_seesEveryElementInOrder() {
        let count = 50_000
        let queue = MPSCQueue<Int>()
        let produced = DispatchGroup()
        produced.enter()
        Thread {
            for value in 0..<count { queue.enqueue(value) }
            produced.leave()
        }.start()

        var expected = 0
        var outOfOrder = 0
        let deadline = Date().addingTimeInterval(60)
        while expected < count, Date() < deadline {
            guard let value = queue.dequeue() else { continue }
            if value != expected { outOfOrder += 1 }
            expected = value + 1
        }
        #expect(produced.waitBounded())
        #expect(expected == count)
        #expect(outOfOrder == 0)
        #expect(queue.dequeue() == nil)
    }

    /// The consumer role moves between threads (as it does between mailbox runs) with a
    /// happens-before edge; ThreadSanitizer checks the hand-over.
    @Test func consumerRoleHandedBetweenThreads_seesEveryElementOnce() {
        let queue = MPSCQueue<Int>()
        let consumers = DispatchQueue(label: "consumers")
        let total = Locked([Int]())
        let done = DispatchGroup()
        for batch in 0..<20 {
            for value in 0..<100 { queue.enqueue(batch * 100 + value) }
            done.enter()
            // Each batch is drained by a block on a serial queue, whose threads may differ.
            consumers.async {
                var drained: [Int] = []
                while let value = queue.dequeue() { drained.append(value) }
                total.withLock { $0.append(contentsOf: drained) }
                done.leave()
            }
            #expect(done.waitBounded())
        }
        #expect(total.snapshot == Array(0..<2_000))
    }
}
