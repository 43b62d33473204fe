import Dispatch
import Foundation
import Testing
@testable import Mailbox

extension RealTimeSchedulers {
    @Suite("OperationQueueScheduler")
    struct OperationQueueSchedulerTests {
        let scheduler = OperationQueueScheduler(name: "MailboxTests.OperationQueueScheduler")

        /// Waits, with a bound, until every operation already on the scheduler's queue has finished.
        func drain(_ scheduler: OperationQueueScheduler) -> Bool {
            spinUntil { scheduler.queue.operationCount == 0 }
        }

        @Test func convenienceInit_makesASerialNamedQueue() {
            #expect(scheduler.queue.maxConcurrentOperationCount == 1)
            #expect(scheduler.queue.name == "MailboxTests.OperationQueueScheduler")
        }

        @Test func actions_runOnTheGivenOperationQueue() {
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let wrapped = OperationQueueScheduler(queue: queue)
            #expect(wrapped.queue === queue)
            let queueID = ObjectIdentifier(queue)
            let onQueue = Locked(false)
            let done = DispatchSemaphore(value: 0)
            wrapped.schedule {
                onQueue.withLock { $0 = OperationQueue.current.map(ObjectIdentifier.init) == queueID }
                done.signal()
            }
            #expect(done.waitBounded())
            #expect(onQueue.snapshot)
        }

        @Test func widthOne_runsOneAtATimeInSchedulingOrder() {
            let order = Locked([Int]())
            let probe = ConcurrencyProbe()
            let done = DispatchSemaphore(value: 0)
            let count = 1_000
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

        @Test func disposingBeforeTheActionStarts_cancelsItsOperationAndItNeverRuns() {
            let gate = Gate()
            let ran = Locked([String]())
            scheduler.schedule(gate.hold)
            #expect(gate.waitUntilHeld())
            let cancelled = scheduler.schedule { ran.append("cancelled") }
            let operation = scheduler.queue.operations.last
            #expect(operation?.isCancelled == false)
            scheduler.schedule { ran.append("kept") }

            cancelled?.dispose()
            #expect(cancelled?.isDisposed == true)
            #expect(operation?.isCancelled == true, "disposal did not cancel the operation")

            gate.open()
            #expect(drain(scheduler))
            #expect(ran.snapshot == ["kept"])
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

        @Test(arguments: [Date.distantPast, Date().addingTimeInterval(-10)])
        func timedActionInThePast_runsSoon(date: Date) {
            let done = DispatchSemaphore(value: 0)
            scheduler.schedule(after: date) { done.signal() }
            #expect(done.waitBounded(.seconds(5)))
        }

        @Test func disposingATimedActionBeforeItsDate_preventsIt() {
            let ran = Locked(false)
            let date = Date().addingTimeInterval(0.02)
            let cancelled = scheduler.schedule(after: date) { ran.withLock { $0 = true } }
            cancelled?.dispose()
            // On a loaded machine this thread may be descheduled past the date before it
            // disposes: then the action may rightly have run, and this run cannot judge.
            let disposedInTime = Date() < date
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

        /// Schedules an action that keeps `tracked` alive until it is released.
        static func scheduleCapturing(_ tracked: Tracked, on scheduler: OperationQueueScheduler, after date: Date) -> (any Disposable)? {
            scheduler.schedule(after: date) { _ = tracked }
        }

        @Test func disposingATimedActionQueuedButNotStarted_cancelsItsOperation() {
            // Suspend the queue so the due action's operation waits there, then cancel it.
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.isSuspended = true
            let suspended = OperationQueueScheduler(queue: queue)
            let ran = Locked(false)
            let cancelled = suspended.schedule(after: Date()) { ran.withLock { $0 = true } }
            #expect(spinUntil { queue.operationCount == 1 }, "the due action was never handed to the queue")
            let operation = queue.operations.first

            cancelled?.dispose()
            #expect(operation?.isCancelled == true)
            let done = DispatchSemaphore(value: 0)
            suspended.schedule { done.signal() }
            queue.isSuspended = false
            #expect(done.waitBounded())
            #expect(drain(suspended))
            #expect(ran.snapshot == false)
        }

        @Test func repeatingAction_stopsWhenDisposedFromInside() {
            let runs = Locked([Date]())
            let handle = Locked<(any Disposable)?>(nil)
            let third = DispatchSemaphore(value: 0)
            let start = Date().addingTimeInterval(0.02)
            // Assigned under the lock, so a run that reads it waits until it is set.
            handle.withLock { slot in
                slot = scheduler.schedule(after: start, interval: .milliseconds(10), leeway: .milliseconds(1)) {
                    runs.append(Date())
                    if runs.snapshot.count == 3 {
                        handle.withLock { $0 }?.dispose()
                        third.signal()
                    }
                }
            }
            #expect(third.waitBounded())

            let later = DispatchSemaphore(value: 0)
            scheduler.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            #expect(runs.snapshot.count == 3)
            #expect(runs.snapshot.first.map { $0 >= start } == true, "the first run came before the requested date")
        }

        @Test func repeatingAction_noRunStartsAfterDisposal() {
            let runs = Locked(0)
            let third = DispatchSemaphore(value: 0)
            let disposable = scheduler.schedule(after: Date(), interval: .milliseconds(5), leeway: .milliseconds(1)) {
                if runs.increment() == 3 { third.signal() }
            }
            #expect(third.waitBounded())
            disposable?.dispose()
            #expect(drain(scheduler))
            let afterDisposal = runs.snapshot

            let later = DispatchSemaphore(value: 0)
            scheduler.schedule(after: Date().addingTimeInterval(0.1)) { later.signal() }
            #expect(later.waitBounded())
            #expect(runs.snapshot == afterDisposal, "the timer ran again after its disposal")
        }

        @Test func widthAboveOne_startsActionsInTheOrderTheyWereScheduled() {
            let width = 4
            let wide = OperationQueueScheduler(name: "MailboxTests.wide-fifo", maxConcurrentOperationCount: width)
            let gate = Gate()
            let started = Locked([Int]())
            let count = 24
            for index in 0..<count {
                wide.schedule {
                    started.append(index)
                    gate.hold()
                }
            }
            // The first `width` actions hold every slot; the rest wait in the queue.
            #expect(gate.waitUntilHeld(count: width))
            #expect(Set(started.snapshot) == Set(0..<width))
            // Free one slot at a time: exactly one waiting action can start, and it must be the
            // one scheduled earliest.
            for next in width..<count {
                gate.open()
                #expect(gate.waitUntilHeld(), "no action started after a slot was freed")
                #expect(started.snapshot.count == next + 1)
                #expect(started.snapshot.last == next, "action \(started.snapshot.last ?? -1) started before action \(next)")
            }
            gate.open(count: width)
            #expect(drain(wide))
        }

        @Test func widthAboveOne_runsEveryActionExactlyOnceAndNoMoreAtOnceThanTheWidth() {
            let wide = OperationQueueScheduler(name: "MailboxTests.wide", maxConcurrentOperationCount: 4)
            let counts = (0..<1_000).map { _ in Locked(0) }
            let probe = ConcurrencyProbe()
            let group = DispatchGroup()
            for index in counts.indices {
                group.enter()
                wide.schedule {
                    probe.run { counts[index].increment() }
                    group.leave()
                }
            }
            #expect(group.waitBounded())
            #expect(counts.allSatisfy { $0.snapshot == 1 })
            #expect(probe.maximum <= 4)
        }
    }
}
