import Dispatch
import Foundation
@testable import Mailbox
import Synchronization
import Testing

/// `QueueScheduler.schedule(_:)` batches actions into drains on its queue; these check that the
/// batching keeps the scheduler contract: exactly once, never if disposed first, one at a time,
/// in order per scheduling thread, and no action stranded.
@Suite("QueueScheduler drains")
struct QueueSchedulerDrainTests {
    final class Counters: Sendable {
        let running = Atomic<Bool>(false)
        let overlaps = Atomic<Int>(0)
        let total = Atomic<Int>(0)
    }

    @Test func manyThreads_eachActionRunsOnceSeriallyAndInOrderPerThread() {
        let scheduler = QueueScheduler(name: "drain-test")
        let threads = 4, perThread = 5_000
        let log = LockedValueBox([[Int]](repeating: [], count: threads))
        let counters = Counters()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                scheduler.schedule {
                    if counters.running.exchange(true, ordering: .acquiring) {
                        counters.overlaps.add(1, ordering: .relaxed)
                    }
                    log.withLockedValue { $0[thread].append(index) }
                    counters.running.store(false, ordering: .releasing)
                    if counters.total.add(1, ordering: .relaxed).newValue == threads * perThread { done.signal() }
                }
            }
        }
        done.wait()
        let overlaps = counters.overlaps.load(ordering: .relaxed)
        #expect(overlaps == 0)
        let expected = Array(0..<perThread)
        #expect(log.withLockedValue { $0 } == [[Int]](repeating: expected, count: threads))
    }

    @Test func disposedBeforeItsTurn_neverRuns() {
        let scheduler = QueueScheduler(name: "drain-test")
        let gate = DispatchSemaphore(value: 0)
        let counters = Counters()
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule { gate.wait() }
        let disposable = scheduler.schedule { counters.total.add(1, ordering: .relaxed) }
        scheduler.schedule { done.signal() }
        disposable?.dispose()
        gate.signal()
        done.wait()
        let runs = counters.total.load(ordering: .relaxed)
        #expect(runs == 0)
        #expect(disposable?.isDisposed == true)
    }

    @Test func actionSchedulingAnAction_runsItAfterwards() {
        let scheduler = QueueScheduler(name: "drain-test")
        let done = DispatchSemaphore(value: 0)
        let order = LockedValueBox([Int]())
        scheduler.schedule {
            scheduler.schedule {
                order.withLockedValue { $0.append(2) }
                done.signal()
            }
            order.withLockedValue { $0.append(1) }
        }
        done.wait()
        #expect(order.withLockedValue { $0 } == [1, 2])
    }

    /// Bursts separated by a full drain: the drain must clear its flag and the next burst must
    /// start a new one (no action stranded in the pending queue).
    @Test func repeatedBursts_neverStrandAnAction() {
        let scheduler = QueueScheduler(name: "drain-test")
        for burst in 0..<2_000 {
            let done = DispatchSemaphore(value: 0)
            for index in 0..<(burst % 5) { scheduler.schedule { _ = index } }
            scheduler.schedule { done.signal() }
            done.wait()
        }
    }
}
