import Dispatch
import Foundation
import Testing
@testable import Mailbox

/// Every scheduler Mailbox ships, for tests of the contract they all promise.
enum SchedulerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case immediate
    case queue
    case operationQueueSerial
    case operationQueueWide
    case test

    static let wideWidth = 4

    var testDescription: String { rawValue }

    /// Whether actions can be cancelled before they start (not on `ImmediateScheduler`, which
    /// runs them before `schedule` returns).
    var canCancel: Bool { self != .immediate }

    /// Whether the scheduler promises one action at a time.
    var isSerial: Bool { self != .operationQueueWide }

    func makeHarness() -> SchedulerHarness {
        switch self {
        case .immediate:
            return SchedulerHarness(scheduler: ImmediateScheduler(), hold: {}, open: {}, settle: { true })
        case .queue:
            let scheduler = QueueScheduler(name: "MailboxTests.contract")
            return SchedulerHarness(
                scheduler: scheduler,
                hold: { scheduler.queue.suspend() },
                open: { scheduler.queue.resume() },
                settle: {
                    // Through the scheduler: its own actions are FIFO, while blocks submitted
                    // straight to `queue` interleave with whole drains (documented batching).
                    let flushed = DispatchSemaphore(value: 0)
                    scheduler.schedule { flushed.signal() }
                    return flushed.waitBounded()
                }
            )
        case .operationQueueSerial, .operationQueueWide:
            let width = self == .operationQueueWide ? Self.wideWidth : 1
            let scheduler = OperationQueueScheduler(name: "MailboxTests.contract", maxConcurrentOperationCount: width)
            return SchedulerHarness(
                scheduler: scheduler,
                hold: { scheduler.queue.isSuspended = true },
                open: { scheduler.queue.isSuspended = false },
                settle: { spinUntil { scheduler.queue.operationCount == 0 } }
            )
        case .test:
            // Nothing runs on a TestScheduler before it is advanced: no need to hold it.
            let scheduler = TestScheduler()
            return SchedulerHarness(scheduler: scheduler, hold: {}, open: {}, settle: {
                scheduler.run()
                return true
            })
        }
    }
}

/// A scheduler plus the means to keep actions queued and to wait until it has run everything.
///
/// Holding suspends the underlying queue rather than occupying its threads with blocked
/// actions: on Linux, Dispatch grows its thread pool only slowly past the core count.
struct SchedulerHarness {
    let scheduler: any Scheduler
    /// Keeps actions scheduled from now on from starting, until `open`.
    let hold: () -> Void
    /// Lets held actions start.
    let open: () -> Void
    /// Waits until every action that is going to run has run; `false` on time-out.
    let settle: () -> Bool
}

extension RealTimeSchedulers {
    @Suite("Scheduler contract")
    struct SchedulerContractTests {
        @Test(arguments: SchedulerKind.allCases)
        func everyScheduledAction_runsExactlyOnce(kind: SchedulerKind) {
            let harness = kind.makeHarness()
            let counts = (0..<500).map { _ in Locked(0) }
            for counter in counts {
                harness.scheduler.schedule { counter.increment() }
            }
            #expect(harness.settle())
            #expect(counts.allSatisfy { $0.snapshot == 1 })
        }

        @Test(arguments: SchedulerKind.allCases)
        func actionsDisposedBeforeTheyStart_neverRunAndTheOthersRunOnce(kind: SchedulerKind) {
            let harness = kind.makeHarness()
            harness.hold()
            let counts = (0..<200).map { _ in Locked(0) }
            var disposables: [(any Disposable)?] = []
            for counter in counts {
                disposables.append(harness.scheduler.schedule { counter.increment() })
            }
            for (index, disposable) in disposables.enumerated() where !index.isMultiple(of: 2) {
                disposable?.dispose()
            }
            harness.open()
            #expect(harness.settle())

            let expected = counts.indices.map { kind.canCancel && !$0.isMultiple(of: 2) ? 0 : 1 }
            #expect(counts.map(\.snapshot) == expected, "runs per action (odd ones were disposed)")
            if !kind.canCancel {
                #expect(disposables.allSatisfy { $0 == nil }, "an action that already ran cannot be cancelled")
            }
        }

        @Test(arguments: SchedulerKind.allCases.filter(\.isSerial))
        func serialSchedulers_runOneActionAtATimeEvenWhenScheduledFromManyThreads(kind: SchedulerKind) {
            let harness = kind.makeHarness()
            let probe = ConcurrencyProbe()
            let runs = Locked(0)
            let scheduler = harness.scheduler
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<100 {
                    scheduler.schedule { probe.run { _ = runs.increment() } }
                }
            }
            #expect(harness.settle())
            #expect(runs.snapshot == 400)
            // ImmediateScheduler runs each action on its caller's thread: callers on four threads
            // may overlap, which is its documented behaviour, so it is held to "ran" only.
            if kind != .immediate {
                #expect(probe.maximum == 1)
            }
        }
    }
}

/// Every `DateScheduler`, for the timing part of the contract.
enum DateSchedulerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case queue
    case operationQueue
    case test

    var testDescription: String { rawValue }

    /// A scheduler, and how to let `seconds` of its time pass and wait for what is due.
    func make() -> (scheduler: any DateScheduler, letTimePass: (TimeInterval) -> Void) {
        switch self {
        case .queue, .operationQueue:
            let scheduler: any DateScheduler = self == .queue ? QueueScheduler() : OperationQueueScheduler()
            return (scheduler, { seconds in
                let passed = DispatchSemaphore(value: 0)
                scheduler.schedule(after: Date().addingTimeInterval(seconds)) { passed.signal() }
                _ = passed.waitBounded()
            })
        case .test:
            let scheduler = TestScheduler()
            return (scheduler, { scheduler.advance(by: $0) })
        }
    }
}

extension RealTimeSchedulers {
    @Suite("DateScheduler contract")
    struct DateSchedulerContractTests {
        @Test(arguments: DateSchedulerKind.allCases)
        func timedActions_runOnceAndNeverBeforeTheirDateOnTheSchedulersClock(kind: DateSchedulerKind) {
            let (scheduler, letTimePass) = kind.make()
            let results = Locked([(requested: Date, ran: Date)]())
            let ran = DispatchSemaphore(value: 0)
            for milliseconds in [0, 3, 10, 25] {
                let requested = scheduler.currentDate.addingTimeInterval(Double(milliseconds) / 1_000)
                scheduler.schedule(after: requested) {
                    results.append((requested, scheduler.currentDate))
                    ran.signal()
                }
            }
            letTimePass(0.1)
            #expect(ran.waitBounded(count: 4))
            #expect(results.snapshot.count == 4)
            for result in results.snapshot {
                #expect(result.ran >= result.requested)
            }
        }

        @Test(arguments: DateSchedulerKind.allCases)
        func timedActionDisposedBeforeItsDate_neverRuns(kind: DateSchedulerKind) {
            let (scheduler, letTimePass) = kind.make()
            let runs = Locked(0)
            let disposable = scheduler.schedule(after: .milliseconds(20)) { runs.increment() }
            disposable?.dispose()
            letTimePass(0.1)
            #expect(runs.snapshot == 0)
        }

        @Test(arguments: DateSchedulerKind.allCases)
        func repeatingAction_runsRepeatedlyUntilDisposed(kind: DateSchedulerKind) {
            let (scheduler, letTimePass) = kind.make()
            let runs = Locked(0)
            let third = DispatchSemaphore(value: 0)
            let disposable = scheduler.schedule(after: scheduler.currentDate, interval: .milliseconds(10), leeway: .milliseconds(1)) {
                if runs.increment() == 3 { third.signal() }
            }
            letTimePass(0.1)
            #expect(third.waitBounded(), "fewer than three runs")
            disposable?.dispose()
            letTimePass(0.02)
            let afterDisposal = runs.snapshot
            letTimePass(0.1)
            #expect(runs.snapshot == afterDisposal)
        }
    }
}
