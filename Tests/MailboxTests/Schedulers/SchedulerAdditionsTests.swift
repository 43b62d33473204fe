import Dispatch
import Foundation
import Testing
@testable import Mailbox

@Suite("Scheduler additions for ReactiveSwift parity")
struct SchedulerAdditionsTests {
    @Test func testSchedulerRewind_movesTheClockBack_andActionsRunWhenReachedAgain() {
        let scheduler = TestScheduler()
        let ran = Box<[Date]>([])
        scheduler.advance(by: .seconds(10))
        scheduler.schedule(after: scheduler.currentDate.addingTimeInterval(1)) { ran.modify { $0.append(scheduler.currentDate) } }
        scheduler.rewind(by: .seconds(5))
        #expect(scheduler.currentDate == scheduler.startDate.addingTimeInterval(5))
        scheduler.advance(by: .seconds(5))
        #expect(ran.value.isEmpty)
        scheduler.advance(by: .seconds(1))
        #expect(ran.value == [scheduler.startDate.addingTimeInterval(11)])
    }

    @Test func dispatchTimeIntervalDelays_areCountedExactly() {
        let scheduler = TestScheduler()
        let ran = Box<[String]>([])
        let delay: DispatchTimeInterval = .milliseconds(1500)
        scheduler.schedule(after: delay) { ran.modify { $0.append("once") } }
        let repeating = scheduler.schedule(after: delay, interval: .seconds(1), leeway: .seconds(0)) { ran.modify { $0.append("tick") } }
        scheduler.advance(by: .milliseconds(1499))
        #expect(ran.value.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(ran.value == ["once", "tick"])
        scheduler.advance(by: .seconds(1))
        #expect(ran.value == ["once", "tick", "tick"])
        repeating?.dispose()
        scheduler.advance(by: .seconds(5))
        #expect(ran.value.count == 3)
    }

    /// Yields until `condition` holds, up to `realTimeTimeout`; `false` if it never did.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = DispatchTime.now() + realTimeTimeout
        while !condition() {
            if DispatchTime.now() >= deadline { return false }
            await Task.yield()
        }
        return true
    }

    @Test func sleep_resumesWhenTheSchedulersClockGetsThere() async throws {
        let scheduler = TestScheduler()
        let woke = Locked(false)
        let task = Task {
            try await scheduler.sleep(for: .seconds(2))
            woke.withLock { $0 = true }
        }
        // Wait (bounded) for the task to have scheduled its wake-up, then move the clock.
        #expect(await eventually { scheduler.pendingActionCount == 1 })
        scheduler.advance(by: .seconds(1))
        #expect(!woke.snapshot)
        scheduler.advance(by: .seconds(1))
        try await task.value
        #expect(woke.snapshot)
    }

    @Test func sleep_throwsCancellationError_andCancelsTheWakeUp() async {
        let scheduler = TestScheduler()
        let task = Task { try await scheduler.sleep(until: scheduler.currentDate.addingTimeInterval(60)) }
        #expect(await eventually { scheduler.pendingActionCount == 1 })
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        // The wake-up was cancelled: running the scheduler finds nothing to do but drop it.
        scheduler.run()
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test func timer_yieldsTheDateEveryInterval_untilTheConsumerStops() async {
        let scheduler = TestScheduler()
        let stream = scheduler.timer(interval: .seconds(1))
        scheduler.advance(by: .seconds(3))
        var dates: [Date] = []
        for await date in stream {
            dates.append(date)
            if dates.count == 3 { break }
        }
        #expect(dates == [1, 2, 3].map { scheduler.startDate.addingTimeInterval($0) })
    }

    @Test func queueSchedulerOnAQueue_runsActionsOnAQueueTargetingIt() {
        let key = DispatchSpecificKey<Int>()
        let target = DispatchQueue(label: "target")
        target.setSpecific(key: key, value: 7)
        let scheduler = QueueScheduler(queue: target, name: "named")
        #expect(scheduler.queue.label == "named")
        let done = DispatchSemaphore(value: 0)
        let seen = Locked<Int?>(nil)
        scheduler.schedule {
            seen.withLock { $0 = DispatchQueue.getSpecific(key: key) }
            done.signal()
        }
        #expect(done.waitBounded())
        #expect(seen.snapshot == 7)
    }

    @Test func uiScheduler_runsActionsOnTheMainQueue_inOrder() {
        let scheduler = UIScheduler()
        let mainQueue = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: mainQueue, value: 1)
        let ran = Locked<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        let cancelled = Locked(false)
        // Hold the main queue so that what follows stays queued until `open()`.
        let gate = Gate()
        scheduler.schedule { gate.hold() }
        #expect(gate.waitUntilHeld())
        // Scheduled from a thread that is not the main queue: queued on the main queue.
        scheduler.schedule { ran.append(DispatchQueue.getSpecific(key: mainQueue) == 1) }
        let skipped = scheduler.schedule { cancelled.withLock { $0 = true } }
        skipped?.dispose()
        scheduler.schedule {
            ran.append(DispatchQueue.getSpecific(key: mainQueue) == 1)
            done.signal()
        }
        gate.open()
        #expect(done.waitBounded())
        #expect(ran.snapshot == [true, true])
        #expect(!cancelled.snapshot)
    }
}
