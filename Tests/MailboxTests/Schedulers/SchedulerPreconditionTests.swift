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

    /// The control: a body that misuses nothing exits normally, so the tests above fail for
    /// the precondition, not for some crash of the exit-test machinery.
    @Test func correctUse_exitsNormally() async {
        await #expect(processExitsWith: .success) {
            let scheduler = TestScheduler()
            scheduler.schedule(after: .seconds(1)) {}
            scheduler.advance(by: .seconds(1))
            var heap = MinHeap<Int>()
            heap.insert(1)
            _ = heap.removeFirst()
        }
    }
}
