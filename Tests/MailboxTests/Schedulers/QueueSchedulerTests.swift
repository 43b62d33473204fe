import Dispatch
import Foundation
import Testing
@testable import Mailbox

extension RealTimeSchedulers {
    @Suite("QueueScheduler")
    struct QueueSchedulerTests {
        let scheduler = QueueScheduler(name: "MailboxTests.QueueScheduler")

        /// Waits until everything already scheduled has run: a marker through the scheduler
        /// itself (FIFO), then the queue (for timers' blocks already dispatched to it).
        func drain() {
            let flushed = DispatchSemaphore(value: 0)
            scheduler.schedule { flushed.signal() }
            flushed.wait()
            scheduler.queue.sync {}
        }

        @Test func repeatingTimerWokenBeforeItsDate_reArmsForTheDateInsteadOfTicking() {
            // A clock that says the start date is still ahead on the first two wake-ups, as if
            // Dispatch had woken the timer early twice.
            let start = Date()
            let reads = Locked(0)
            let clock: @Sendable () -> Date = {
                reads.increment() <= 2 ? start.addingTimeInterval(-1) : Date()
            }
            let ticks = Locked(0)
            let ticked = DispatchSemaphore(value: 0)
            // An hour between ticks: only the re-armed first deadline can tick within the wait.
            let timer = scheduler.queue.repeatingTimer(from: start, interval: .seconds(3_600), leeway: .nanoseconds(0), now: clock) {
                ticks.increment()
                ticked.signal()
            }
            #expect(ticked.waitBounded(), "the timer was not re-armed after an early wake-up")
            timer.dispose()
            #expect(reads.snapshot == 3, "the clock is checked on each wake-up until the first tick, and not after")
            #expect(ticks.snapshot == 1)
        }

        @Test func init_namesTheQueue() {
            #expect(scheduler.queue.label == "MailboxTests.QueueScheduler")
        }

        @Test func actions_runOneAtATimeInSchedulingOrder() {
            let order = Locked([Int]())
            let probe = ConcurrencyProbe()
            let done = DispatchSemaphore(value: 0)
            let count = 2_000
            for index in 0..<count {
                scheduler.schedule {
                    probe.run { order.append(index) }
                    if index == count - 1 { done.signal() }
                }
            }
            #expect(done.waitBounded())
            #expect(order.snapshot == Array(0..<count))
            #expect(probe.maximum == 1)
        }

        @Test func actionsFromSeveralThreads_keepEachThreadsOrder() {
            let order = Locked([(thread: Int, index: Int)]())
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<500 {
                    scheduler.schedule { order.append((thread, index)) }
                }
            }
            drain()
            let all = order.snapshot
            #expect(all.count == 2_000)
            for thread in 0..<4 {
                #expect(all.filter { $0.thread == thread }.map(\.index) == Array(0..<500))
            }
        }

        @Test func disposingBeforeTheActionStarts_preventsIt() {
            let gate = Gate()
            let ran = Locked([String]())
            scheduler.schedule(gate.hold)
            #expect(gate.waitUntilHeld())
            let cancelled = scheduler.schedule { ran.append("cancelled") }
            scheduler.schedule { ran.append("kept") }
            cancelled?.dispose()
            #expect(cancelled?.isDisposed == true)
            gate.open()
            drain()
            #expect(ran.snapshot == ["kept"])
        }

        @Test func disposingAfterTheActionRan_changesNothing() {
            let runs = Locked(0)
            let disposable = scheduler.schedule { runs.increment() }
            drain()
            disposable?.dispose()
            drain()
            #expect(runs.snapshot == 1)
        }

        @Test func timedActions_neverRunBeforeTheirDate() {
            let results = Locked([(requested: Date, ran: Date)]())
            let done = DispatchSemaphore(value: 0)
            let delays = [0.001, 0.005, 0.01, 0.02, 0.035, 0.05]
            for delay in delays {
                let requested = Date().addingTimeInterval(delay)
                scheduler.schedule(after: requested) {
                    results.append((requested, Date()))
                    done.signal()
                }
            }
            #expect(done.waitBounded(count: delays.count))
            #expect(results.snapshot.count == delays.count)
            for result in results.snapshot {
                #expect(result.ran >= result.requested, "ran \(result.requested.timeIntervalSince(result.ran)) s early")
            }
        }

        @Test func scheduleAfterDuration_neverRunsBeforeTheDelayHasPassed() {
            let ranAt = Locked<Date?>(nil)
            let done = DispatchSemaphore(value: 0)
            let earliest = scheduler.currentDate.addingTimeInterval(0.02)
            scheduler.schedule(after: .milliseconds(20)) {
                ranAt.withLock { $0 = Date() }
                done.signal()
            }
            #expect(done.waitBounded())
            #expect(ranAt.snapshot.map { $0 >= earliest } == true)
        }

        /// Regression: Dispatch reads a wall deadline at or before 1970 as "forever".
        @Test(arguments: [Date.distantPast, Date(timeIntervalSince1970: 0), Date().addingTimeInterval(-10)])
        func timedActionInThePast_runsSoon(date: Date) {
            let done = DispatchSemaphore(value: 0)
            scheduler.schedule(after: date) { done.signal() }
            #expect(done.waitBounded(.seconds(5)))
        }

        @Test func repeatingActionStartingInTheDistantPast_runs() {
            let twice = DispatchSemaphore(value: 0)
            let runs = Locked(0)
            let disposable = scheduler.schedule(after: Date.distantPast, interval: .milliseconds(5), leeway: .milliseconds(1)) {
                if runs.increment() == 2 { twice.signal() }
            }
            #expect(twice.waitBounded(.seconds(5)))
            disposable?.dispose()
        }

        @Test func disposingATimedActionBeforeItsDate_preventsIt() {
            let ran = Locked(false)
            let date = Date().addingTimeInterval(0.02)
            let cancelled = scheduler.schedule(after: date) { ran.withLock { $0 = true } }
            cancelled?.dispose()
            // On a loaded machine this thread may be descheduled past the date before it
            // disposes: then the action may rightly have run, and this run cannot judge.
            let disposedInTime = Date() < date
            // Wait, with the scheduler itself, until well after the cancelled action's date.
            let later = DispatchSemaphore(value: 0)
            scheduler.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            if disposedInTime { #expect(ran.snapshot == false) }
        }

        @Test func disposingATimedAction_releasesTheActionAtOnce() {
            let tracker = LifetimeTracker()
            let disposable = Self.scheduleCapturing(tracker.instance(), on: scheduler, after: Date().addingTimeInterval(3_600))
            #expect(tracker.liveCount == 1)
            disposable?.dispose()
            #expect(tracker.liveCount == 0, "a cancelled timed action stays alive until its date")
        }

        @Test func timedActionThatRan_isReleasedEvenWhileItsDisposableIsKept() {
            let tracker = LifetimeTracker()
            let disposable = Self.scheduleCapturing(tracker.instance(), on: scheduler, after: Date())
            #expect(spinUntil { tracker.liveCount == 0 })
            withExtendedLifetime(disposable) {}
        }

        /// Schedules an action that keeps `tracked` alive until it is released.
        static func scheduleCapturing(_ tracked: Tracked, on scheduler: QueueScheduler, after date: Date) -> (any Disposable)? {
            scheduler.schedule(after: date) { _ = tracked }
        }

        @Test func repeatingAction_firstRunNeverEarlyAndStopsWhenDisposedFromInside() {
            let runs = Locked([Date]())
            let handle = Locked<(any Disposable)?>(nil)
            let fifth = DispatchSemaphore(value: 0)
            let start = Date().addingTimeInterval(0.02)
            // Assigned under the lock, so a run that reads it waits until it is set.
            handle.withLock { slot in
                slot = scheduler.schedule(after: start, interval: .milliseconds(10), leeway: .milliseconds(1)) {
                    runs.append(Date())
                    if runs.snapshot.count == 5 {
                        // Disposed on the queue, inside a run: no further run may start.
                        handle.withLock { $0 }?.dispose()
                        fifth.signal()
                    }
                }
            }
            #expect(fifth.waitBounded())

            let later = DispatchSemaphore(value: 0)
            scheduler.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            #expect(runs.snapshot.count == 5)
            #expect(runs.snapshot.first.map { $0 >= start } == true, "the first run came before the requested date")
        }

        @Test func repeatingAction_noRunAfterDisposalIsObservedOnTheQueue() {
            let runs = Locked(0)
            let third = DispatchSemaphore(value: 0)
            let disposable = scheduler.schedule(after: Date(), interval: .milliseconds(5), leeway: .milliseconds(1)) {
                if runs.increment() == 3 { third.signal() }
            }
            #expect(third.waitBounded())
            disposable?.dispose()
            drain()
            let afterDisposal = runs.snapshot

            let later = DispatchSemaphore(value: 0)
            scheduler.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            #expect(runs.snapshot == afterDisposal, "the timer ran again after its disposal")
            #expect(afterDisposal >= 3)
        }

        @Test func targeting_runsOnTheTargetQueueYetStaysSerialAndFIFO() {
            let key = DispatchSpecificKey<String>()
            let target = DispatchQueue(label: "MailboxTests.target", attributes: .concurrent)
            target.setSpecific(key: key, value: "target")
            let targeted = QueueScheduler(name: "MailboxTests.targeted", targeting: target)

            let order = Locked([Int]())
            let onTarget = Locked(0)
            let probe = ConcurrencyProbe()
            let done = DispatchSemaphore(value: 0)
            for index in 0..<500 {
                targeted.schedule {
                    probe.run {
                        if DispatchQueue.getSpecific(key: key) == "target" { onTarget.increment() }
                        order.append(index)
                    }
                    if index == 499 { done.signal() }
                }
            }
            #expect(done.waitBounded())
            #expect(onTarget.snapshot == 500)
            #expect(order.snapshot == Array(0..<500))
            #expect(probe.maximum == 1)
        }
    }
}
