import Foundation
import Testing
@testable import Mailbox

/// Misuse that the schedulers document as a precondition failure, proven with exit tests: each
/// body runs in a child process that must crash.
@Suite("Scheduler preconditions")
struct SchedulerPreconditionTests {
    @Test func testSchedulerMovingBackInTime_crashes() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.advance(by: .seconds(2))
            scheduler.advance(to: scheduler.startDate.addingTimeInterval(1))
        }
    }

    @Test func testSchedulerAdvancedByANegativeInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            TestScheduler().advance(by: -1.0)
        }
    }

    @Test func testSchedulerAdvancedFromInsideItsOwnAction_crashes() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.schedule { scheduler.advance() }
            scheduler.advance()
        }
    }

    @Test func testSchedulerRepeatingWithZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.schedule(after: scheduler.currentDate, interval: .seconds(0)) {}
        }
    }

    @Test func queueSchedulerRepeatingWithZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            QueueScheduler().schedule(after: Date(), interval: .nanoseconds(0)) {}
        }
    }

    @Test func operationQueueSchedulerRepeatingWithNegativeInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            OperationQueueScheduler().schedule(after: Date(), interval: .seconds(-1)) {}
        }
    }

    @Test func minHeapRemoveFirstWhenEmpty_crashes() async {
        await #expect(processExitsWith: .failure) {
            var heap = MinHeap<Int>()
            _ = heap.removeFirst()
        }
    }

    @Test func poolSchedulerRepeatingWithZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            PoolScheduler(workerCount: 1).schedule(after: Date(), interval: .nanoseconds(0)) {}
        }
    }

    @Test func testSchedulerRewoundWhileAdvancing_crashes() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.schedule(after: .seconds(1)) { scheduler.rewind(by: .seconds(1)) }
            scheduler.advance(by: .seconds(1))
        }
    }

    @Test func testSchedulerRewoundBeforeItsStart_crashes() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.advance(by: .seconds(1))
            scheduler.rewind(by: .seconds(2))
        }
    }

    // MARK: The pool's construction and shutdown

    @Test func poolWithNoWorkers_crashes() async {
        await #expect(processExitsWith: .failure) { _ = PoolScheduler(workerCount: 0) }
    }

    @Test func poolWithARunNextLimitBelowOne_crashes() async {
        await #expect(processExitsWith: .failure) { _ = PoolScheduler(workerCount: 1, runNextLimit: 0) }
    }

    /// `shutdown()` joins the workers: one of them cannot wait for itself. The body waits
    /// (bounded) for the action, and exits normally if `shutdown()` returned there.
    @Test func poolShutDownFromOneOfItsOwnWorkers_crashes() async {
        await #expect(processExitsWith: .failure) {
            let pool = PoolScheduler(workerCount: 1)
            let returned = DispatchSemaphore(value: 0)
            pool.schedule {
                pool.shutdown()
                returned.signal()
            }
            _ = returned.wait(timeout: .now() + 30)
        }
    }

    // MARK: ReactiveSwift's Swift concurrency helpers on a DateScheduler

    @Test func sleepForANegativeInterval_crashes() async {
        await #expect(processExitsWith: .failure) { try? await TestScheduler().sleep(for: .seconds(-1)) }
    }

    @Test func sleepWithANegativeLeeway_crashes() async {
        await #expect(processExitsWith: .failure) { try? await TestScheduler().sleep(for: .seconds(0), leeway: .seconds(-1)) }
    }

    @Test func sleepUntilADeadlineNotInTheFuture_crashes() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            try? await scheduler.sleep(until: scheduler.currentDate)
        }
    }

    @Test func asyncTimerWithZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) { _ = TestScheduler().timer(interval: .seconds(0)) }
    }

    @Test func asyncTimerWithANegativeLeeway_crashes() async {
        await #expect(processExitsWith: .failure) { _ = TestScheduler().timer(interval: .seconds(1), leeway: .seconds(-1)) }
    }

    /// The control: a body that misuses nothing exits normally, so the tests above fail for
    /// the precondition, not for some crash of the exit-test machinery.
    @Test func correctUse_exitsNormally() async {
        await #expect(processExitsWith: .success) {
            let scheduler = TestScheduler()
            scheduler.schedule(after: .seconds(1)) {}
            scheduler.advance(by: .seconds(1))
            scheduler.rewind(by: .seconds(1))
            var heap = MinHeap<Int>()
            heap.insert(1)
            _ = heap.removeFirst()
            let pool = PoolScheduler(workerCount: 1, runNextLimit: 1)
            pool.schedule(after: Date(), interval: .nanoseconds(1)) {}?.dispose()
            pool.shutdown()
            _ = scheduler.timer(interval: .seconds(1), leeway: .seconds(0))
        }
    }
}
