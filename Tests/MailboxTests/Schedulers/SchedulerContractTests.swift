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
    case pool
    case test

    static let wideWidth = 4

    /// Worker threads of the pool under test: more than one, so that its parallelism is
    /// exercised even on a machine with one core.
    static let poolWorkers = 2

    var testDescription: String { rawValue }

    /// Whether actions can be cancelled before they start (not on `ImmediateScheduler`, which
    /// runs them before `schedule` returns).
    var canCancel: Bool { self != .immediate }

    /// Whether the scheduler promises one action at a time (and so FIFO order). Not the wide
    /// operation queue, and not the pool: it runs one action per worker thread in parallel, and
    /// jobs taken from its shared queue in order may still finish, or even visibly start, out
    /// of order on different workers (its documented exception to rules 2 and 3).
    var isSerial: Bool { self != .operationQueueWide && self != .pool }

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
        case .pool:
            return Self.poolHarness(PoolScheduler(workerCount: Self.poolWorkers, name: "MailboxTests.contract-pool"))
        case .test:
            // Nothing runs on a TestScheduler before it is advanced: no need to hold it.
            let scheduler = TestScheduler()
            return SchedulerHarness(scheduler: scheduler, hold: {}, open: {}, settle: {
                scheduler.run()
                return true
            })
        }
    }

    /// A pool has no switch to suspend it, so holding occupies every worker with a gated action
    /// (its own threads, not Dispatch's: blocking them starves nothing else). Settling does the
    /// same with markers that meet at a rendezvous: jobs from outside the pool are taken from
    /// one FIFO queue, so once every worker runs a marker, every action scheduled before the
    /// markers has been taken and (its worker having moved on) has finished.
    static func poolHarness(_ pool: PoolScheduler) -> SchedulerHarness {
        let gate = Gate()
        let occupy: (Gate) -> Bool = { gate in
            for _ in 0..<pool.workerCount { pool.schedule(gate.hold) }
            return gate.waitUntilHeld(count: pool.workerCount)
        }
        return SchedulerHarness(
            scheduler: pool,
            hold: { _ = occupy(gate) },
            open: { gate.open(count: pool.workerCount) },
            settle: {
                let markers = Gate()
                defer { markers.open(count: pool.workerCount) }
                return occupy(markers)
            },
            tearDown: { pool.shutdown() }
        )
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
    /// Releases what the scheduler holds (a pool's threads); call it once the test is done.
    var tearDown: () -> Void = {}
}

extension RealTimeSchedulers {
    @Suite("Scheduler contract")
    struct SchedulerContractTests {
        @Test(arguments: SchedulerKind.allCases)
        func everyScheduledAction_runsExactlyOnce(kind: SchedulerKind) {
            let harness = kind.makeHarness()
            defer { harness.tearDown() }
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
            defer { harness.tearDown() }
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
            defer { harness.tearDown() }
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
    case pool
    case test

    var testDescription: String { rawValue }

    /// A scheduler, how to let `seconds` of its time pass and wait for what is due, and how to
    /// release it once the test is done (a pool's threads).
    func make() -> (scheduler: any DateScheduler, letTimePass: (TimeInterval) -> Void, tearDown: () -> Void) {
        switch self {
        case .queue, .operationQueue, .pool:
            let scheduler: any DateScheduler
            var tearDown: () -> Void = {}
            switch self {
            case .queue: scheduler = QueueScheduler()
            case .operationQueue: scheduler = OperationQueueScheduler()
            default:
                let pool = PoolScheduler(workerCount: SchedulerKind.poolWorkers, name: "MailboxTests.date-pool")
                scheduler = pool
                tearDown = { pool.shutdown() }
            }
            return (scheduler, { seconds in
                let passed = DispatchSemaphore(value: 0)
                scheduler.schedule(after: Date().addingTimeInterval(seconds)) { passed.signal() }
                _ = passed.waitBounded()
            }, tearDown)
        case .test:
            let scheduler = TestScheduler()
            return (scheduler, { scheduler.advance(by: $0) }, {})
        }
    }
}

extension RealTimeSchedulers {
    @Suite("DateScheduler contract")
    struct DateSchedulerContractTests {
        @Test(arguments: DateSchedulerKind.allCases)
        func timedActions_runOnceAndNeverBeforeTheirDateOnTheSchedulersClock(kind: DateSchedulerKind) {
            let (scheduler, letTimePass, tearDown) = kind.make()
            defer { tearDown() }
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
            let (scheduler, letTimePass, tearDown) = kind.make()
            defer { tearDown() }
            let runs = Locked(0)
            let date = scheduler.currentDate.addingTimeInterval(0.02)
            let disposable = scheduler.schedule(after: .milliseconds(20)) { runs.increment() }
            disposable?.dispose()
            // On a loaded machine this thread may be descheduled past the date (on a wall
            // clock) before it disposes: then the action may rightly have run, and this run
            // cannot judge. (Virtual time never passes by itself.)
            let disposedInTime = scheduler.currentDate < date
            letTimePass(0.1)
            if disposedInTime { #expect(runs.snapshot == 0) }
        }

        @Test(arguments: DateSchedulerKind.allCases)
        func repeatingAction_firstRunNeverBeforeItsStartDate(kind: DateSchedulerKind) {
            let (scheduler, letTimePass, tearDown) = kind.make()
            defer { tearDown() }
            let firstRuns = Locked([(start: Date, ran: Date)]())
            let started = DispatchSemaphore(value: 0)
            var timers: [(any Disposable)?] = []
            // Start dates at odd fractions of a millisecond, so that rounding to Dispatch's
            // nanoseconds or to a `Date`'s resolution has its chances to wake a timer early.
            let count = 8
            for index in 0..<count {
                let start = scheduler.currentDate.addingTimeInterval(0.002 + Double(index) * 0.001_37 + 0.000_000_123)
                let ticked = Locked(false)
                timers.append(scheduler.schedule(after: start, interval: .milliseconds(500), leeway: .nanoseconds(0)) {
                    let isFirst = ticked.withLock { ticked in
                        defer { ticked = true }
                        return !ticked
                    }
                    guard isFirst else { return }
                    firstRuns.append((start, scheduler.currentDate))
                    started.signal()
                })
            }
            letTimePass(0.05)
            #expect(started.waitBounded(count: count), "not every timer ticked")
            for timer in timers { timer?.dispose() }
            #expect(firstRuns.snapshot.count == count)
            for run in firstRuns.snapshot {
                #expect(run.ran >= run.start, "the first run came \(run.start.timeIntervalSince(run.ran)) s before its start date")
            }
        }

        @Test(arguments: DateSchedulerKind.allCases)
        func repeatingAction_runsRepeatedlyUntilDisposed(kind: DateSchedulerKind) {
            let (scheduler, letTimePass, tearDown) = kind.make()
            defer { tearDown() }
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
