import Foundation
import Synchronization
import Testing
@testable import Mailbox

/// Issue #14, shutdown under load, on the real pool: with a million messages queued, senders
/// waiting on a back-pressured mailbox, asks in flight, supervisors in the middle of restarts.
/// `shutdown()` completes within its time-out, its report counts what was dropped, every
/// pending ask fails with a clear error, and the pool's threads are gone (joined).
///
/// Load tests on real time and the real pool: behind `MAILBOX_LOAD_TESTS=1`, so that they run
/// alone (`.ci/run` runs them in a step of their own) rather than alongside the whole suite under
/// ThreadSanitizer, where a million messages and blocked pool workers starved the other suites'
/// real-time waits on a two-core machine.
@Suite(
    "Shutdown under load", .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["MAILBOX_LOAD_TESTS"] == "1"))
struct ShutdownUnderLoadTests {
    /// Holds pool workers (blocking them) until opened, while the test awaits the holds without
    /// blocking a thread of the cooperative pool (which has one thread per core, shared with
    /// every test running in parallel: a blocking wait there starves the others' tasks).
    final class WorkerGate: Sendable {
        private let held = Inbox<Int>()
        private let opened = DispatchSemaphore(value: 0)

        /// Run by a worker: counts as held, then blocks until `open` (or 60 s).
        func hold() {
            held.record(1)
            _ = opened.waitBounded(.seconds(60))
        }

        /// Suspends until `hold()` has been entered `count` times; `false` after 60 s.
        func waitUntilHeld(count: Int = 1) async -> Bool {
            await held.waitForCount(count, timeout: 60)
        }

        func open(count: Int = 1) {
            for _ in 0..<count { opened.signal() }
        }
    }

    enum Question: Sendable {
        case get(replyTo: ActorRef<Int>)
    }

    /// The names of this process's threads (`/proc/self/task/*/comm`; empty where there is no
    /// `/proc`).
    static func threadNames() -> [String] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [] }
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The threads of `system`'s pool that are still alive, found by their kernel ids (a name
    /// is not enough: a thread a worker creates starts with the worker's name).
    static func livePoolThreads(of system: ActorSystem) -> [Int32] {
        guard let pool = system.pool else { return [] }
        return pool.workers.map { $0.kernelThreadID.load(ordering: .acquiring) }
            .filter { $0 != 0 && FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") }
    }

    /// Whether `/proc` shows threads at all (Linux): the thread checks are skipped elsewhere.
    static var canSeeThreads: Bool { !threadNames().isEmpty }

    /// Suspends (yielding, never blocking a thread) until `condition` holds, for at most 60
    /// seconds of real time.
    func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            if Date() > deadline { return false }
            await Task.yield()
        }
        return true
    }

    /// Shuts `system` down (beginning it first, then `beforeWaiting`), and returns the report
    /// and how long `shutdown(timeout:)` took.
    func shutDown(_ system: ActorSystem, timeout: Duration = .seconds(60), beforeWaiting: () -> Void = {}) async -> (ActorSystem.ShutdownReport, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        system.beginShutdown()
        beforeWaiting()
        let report = await system.shutdown(timeout: timeout)
        return (report, clock.now - start)
    }

    @Test func aMillionMessagesQueued_shutdownCompletesInTime_countsThemAsDeadLetters_andJoinsThePool() async throws {
        let system = ActorSystem(name: "sdm", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let gate = WorkerGate()
        let handled = LockedValueBox(0)
        let busy = try system.spawn(Behavior<Int>.receiveMessage { value in
            if value == 0 { gate.hold() }
            handled.withLockedValue { $0 += 1 }
            return .same
        }, name: "busy")
        busy.tell(0)
        #expect(await gate.waitUntilHeld())
        let queued = 1_000_000
        // Told from a thread of its own: a million tells (slow under ThreadSanitizer) would
        // hold a thread of the cooperative pool for that long.
        let told = AsyncGate()
        Thread.detachNewThread {
            for value in 1...queued { busy.tell(value) }
            told.open(true)
        }
        #expect(await told.wait(timeout: 120))
        if Self.canSeeThreads { #expect(Self.livePoolThreads(of: system).count == 2) }   // the check sees them while they run

        // The stop comes before the queued messages (system messages first), once the handler
        // in progress returns.
        let (report, elapsed) = await shutDown(system) { gate.open() }
        #expect(report.isClean)
        #expect(elapsed < .seconds(60))
        #expect(report.deadLetters == queued)
        #expect(report.asksFailed == 0)
        #expect(report.description == "shutdown complete; 1000000 dead letters")
        #expect(handled.withLockedValue { $0 } == 1)
        #expect(busy.tell(-1) == .dropped(.recipientTerminated))
        #expect(Self.livePoolThreads(of: system).isEmpty, "pool threads still running after shutdown")
    }

    @Test func sendersWaitingOnABackPressuredMailbox_throwSendError_andTheirMessagesAreCounted() async throws {
        let system = ActorSystem(name: "sdb", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let gate = WorkerGate()
        let slow = try system.spawn(Behavior<Int>.receiveMessage { value in
            if value == 0 { gate.hold() }
            return .same
        }, name: "slow", props: Props(mailbox: .bounded(capacity: 4, overflow: .backpressure)))
        slow.tell(0)
        #expect(await gate.waitUntilHeld())
        for value in 1...4 { #expect(slow.tell(value) == .enqueued) }
        let senders = (5..<13).map { value in Task { try await slow.send(value) } }
        let cell = unsafeDowncast(slow.target, to: ActorCell<Int>.self)
        #expect(await eventually { cell.roomWaiters?.waitingCount == senders.count })

        let (report, elapsed) = await shutDown(system) { gate.open() }
        #expect(report.isClean)
        #expect(elapsed < .seconds(60))
        for sender in senders {
            let error = await #expect(throws: SendError.self) { try await sender.value }
            #expect(error?.reason == .recipientTerminated)
        }
        // 4 queued, 8 waiting to be: each a dead letter, counted before the report was made.
        #expect(report.deadLetters == 12)
        #expect(Self.livePoolThreads(of: system).isEmpty)
    }

    @Test func asksInFlight_eachFailsWithSystemShutDown_longBeforeTheirTimeouts() async throws {
        let system = ActorSystem(name: "sda", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let gate = WorkerGate()
        // Questions it handles but never answers.
        let ignored = Inbox<String>()
        let silent = try system.spawn(Behavior<Question>.receiveMessage { _ in
            ignored.record("ignored")
            return .same
        }, name: "silent")
        // Questions that wait behind a handler that does not return until the shutdown began.
        // Bounded (far beyond what it gets) only so that `userCount` tells how many questions
        // are queued.
        let busy = try system.spawn(Behavior<Question>.receiveMessage { _ in
            gate.hold()
            return .same
        }, name: "busy", props: Props(mailbox: .bounded(capacity: 1_000, overflow: .dropNewest)))
        let blocker = Task { try await busy.ask(timeout: .seconds(3_600)) { Question.get(replyTo: $0) } }
        #expect(await gate.waitUntilHeld())
        let asks = (0..<40).map { index in
            Task {
                let target = index.isMultiple(of: 2) ? silent : busy
                return try await target.ask(timeout: .seconds(3_600)) { Question.get(replyTo: $0) }
            }
        }
        // Every question delivered (the asking tasks send them at moments of their own):
        // 20 handled by `silent`, 20 queued behind the one `busy` is handling.
        let busyCell = unsafeDowncast(busy.target, to: ActorCell<Question>.self)
        #expect(await eventually {
            ignored.values.count == 20 && busyCell.bounded?.userCount.load(ordering: .acquiring) == 20
        })
        #expect(system.pendingAsks.count == asks.count + 1)

        let (report, elapsed) = await shutDown(system) { gate.open() }
        #expect(report.isClean)
        #expect(elapsed < .seconds(60))
        #expect(report.asksFailed == asks.count + 1)
        // The 20 questions still queued behind the blocked handler.
        #expect(report.deadLetters == 20)
        for ask in asks + [blocker] {
            let error = await #expect(throws: AskError.self) { try await ask.value }
            #expect(error?.code == .systemShutDown)
        }
        #expect(system.pendingAsks.count == 0)
        #expect(Self.livePoolThreads(of: system).isEmpty)
    }

    enum Work: Sendable {
        case fail
        case value(Int)
    }

    /// A child that fails on `.fail`; its `setup` records each start, and blocks on `gate` in
    /// its second start when one is given (a restart caught in the middle).
    static func restartingChild(_ id: String, starts: Inbox<String>, blockSecondStartOn gate: WorkerGate? = nil) -> @Sendable () -> Behavior<Work> {
        let count = LockedValueBox(0)
        return {
            .setup { _ in
                let start = count.withLockedValue { count -> Int in
                    count += 1
                    return count
                }
                starts.record("\(id) \(start)")
                if start == 2, let gate { gate.hold() }
                return .receiveMessage { message in
                    if case .fail = message { throw TestFailure() }
                    return .same
                }
            }
        }
    }

    @Test func supervisorsInTheMiddleOfRestarts_shutdownCompletesInTime() async throws {
        let system = ActorSystem(name: "sds", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let starts = Inbox<String>()
        let gate = WorkerGate()
        // An all-for-one tree whose restart is caught with b's new `setup` in progress.
        let tree = try system.spawn(Supervisor.behavior(strategy: .allForOne, intensity: 5, period: .seconds(60), children: [
            ChildSpec(id: "a", Self.restartingChild("a", starts: starts)),
            ChildSpec(id: "b", Self.restartingChild("b", starts: starts, blockSecondStartOn: gate)),
            ChildSpec(id: "c", Self.restartingChild("c", starts: starts)),
        ]), name: "tree")
        #expect(await starts.waitForCount(3))
        // An actor waiting out a minute-long back-off, with messages stashed for its new state.
        let backingOff = try system.spawn(
            Behavior<Work>.supervise(Self.restartingChild("d", starts: starts)())
                .onFailure(.restartWithBackoff(minBackoff: .seconds(60), maxBackoff: .seconds(60), randomFactor: 0)),
            name: "backing-off")
        #expect(await starts.waitForCount(4))
        backingOff.tell(.fail)
        for value in 0..<10 { backingOff.tell(.value(value)) }
        let children = try await tree.ask(timeout: .seconds(60)) { SupervisorMessage.whichChildren(replyTo: $0) }
        let a = try #require(children.first { $0.id == "a" }?.ref?.typed(as: Work.self))
        a.tell(.fail)
        #expect(await gate.waitUntilHeld())

        let (report, elapsed) = await shutDown(system) { gate.open() }
        #expect(report.isClean)
        #expect(elapsed < .seconds(60))
        #expect(system.topLevelActors.isEmpty)
        // The back-off's stash, at least, was dropped and counted.
        #expect(report.deadLetters >= 10)
        #expect(Self.livePoolThreads(of: system).isEmpty)
    }

    /// An actor that cannot stop (its scheduler never runs) is abandoned after the time-out;
    /// the ask waiting on it still fails, and the pool is still joined.
    @Test func timedOutShutdown_stillFailsThePendingAsks_andJoinsThePool() async throws {
        let system = ActorSystem(name: "sdt", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let stalled = TestScheduler()
        let stuck = try system.spawn(Behavior<Question>.ignore, name: "stuck", props: Props(scheduler: stalled))
        let ask = Task { try await stuck.ask(timeout: .seconds(3_600)) { Question.get(replyTo: $0) } }
        #expect(await eventually { system.pendingAsks.count == 1 })

        let (report, elapsed) = await shutDown(system, timeout: .milliseconds(200))
        #expect(!report.isClean)
        #expect(report.actorsNotStopped.map(\.path) == ["/user/stuck"])
        #expect(elapsed < .seconds(20))
        #expect(report.asksFailed == 1)
        let error = await #expect(throws: AskError.self) { try await ask.value }
        #expect(error?.code == .systemShutDown)
        #expect(Self.livePoolThreads(of: system).isEmpty)
    }
}
