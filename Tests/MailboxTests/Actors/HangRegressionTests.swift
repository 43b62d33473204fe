import Foundation
import Synchronization
import Testing
@testable import Mailbox

/// Issue #14, hang hunting: the hangs found, each kept as a test that fails (after a bounded
/// wait) instead of hanging if the cause comes back. See `docs/Robustness.md`, "Hangs".
@Suite("Hang regressions")
struct HangRegressionTests {
    enum Message: Sendable {
        case tick
        case get(replyTo: ActorRef<Int>)
    }

    /// Runs `body` on a thread of its own and waits for it for at most `realTimeTimeout`:
    /// whether it returned. (If it did not, the thread is abandoned, still spinning: the test
    /// fails instead of hanging the run.)
    func returnsInTime(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            done.signal()
        }
        return done.waitBounded()
    }

    /// Cause 1 (a CPU spin): a fixed-delay timer with a zero delay re-armed itself at the same
    /// virtual instant each time its message was taken, so `TestScheduler.advance` never
    /// returned, spinning a core for as long as the process lived. Now the timer is refused
    /// and the actor fails.
    @Test func zeroDelayTimer_doesNotSpinTheVirtualClockForever() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        _ = try system.spawn(Behavior<Message>.setup { context in
            context.timers.startTimerWithFixedDelay(key: "spin", message: .tick, delay: .zero)
            return .ignore
        }, name: "spinner")
        #expect(returnsInTime { scheduler.advance(by: .seconds(1)) }, "advance(by:) did not return: the timer spins")
        #expect(events.values.contains { event in
            if case let .failed(address, error) = event {
                return address.path == "/user/spinner" && (error as? ActorSystemError)?.code == .invalidTimer
            }
            return false
        })
    }

    /// Cause 3 (a job stranded with workers asleep): publishers skip their wake-up while a pool
    /// worker searches for work, trusting it to find theirs. A searcher that found nothing, then
    /// found *two* jobs as it went to sleep, took one and woke nobody: the other waited in the
    /// shared queue, with a worker asleep, until something unrelated woke one — for an actor, a
    /// message never handled. Replayed exactly: the pool's test hook holds the searcher in that
    /// window while the test queues the two jobs. (Seen before as a 20 s stall of
    /// `workers_runAsManyActionsInParallelAsThereAreWorkers` in about 1 of 300 runs under load.)
    @Test func poolWorkerFindingSeveralJobsAsItParks_wakesAnotherForTheRest() {
        final class Flag: Sendable { let isArmed = Atomic<Bool>(false) }
        let flag = Flag()
        let inWindow = DispatchSemaphore(value: 0)
        let queued = DispatchSemaphore(value: 0)
        let pool = PoolScheduler(workerCount: 2, name: "strand", runNextLimit: 32, searchEndedEmpty: {
            guard flag.isArmed.exchange(false, ordering: .acquiringAndReleasing) else { return }
            inWindow.signal()
            _ = queued.waitBounded()
        })
        defer { pool.shutdown() }
        #expect(spinUntil { pool.sleepingWorkerCount == 2 })
        flag.isArmed.store(true, ordering: .releasing)
        // Wakes one worker; after this job its search comes back empty, into the hook.
        pool.schedule {}
        #expect(inWindow.waitBounded())
        // Both publishers skip their wake-up: a worker is searching.
        let gate = Gate()
        pool.schedule(gate.hold)
        pool.schedule(gate.hold)
        queued.signal()
        #expect(gate.waitUntilHeld(count: 2, timeout: .seconds(10)), "a queued job waited while a worker slept")
        gate.open(count: 2)
    }

    /// Cause 3, the rest of it (found by `Tests/stress.sh` after the fix above, as the same 20 s
    /// stall in 1 run of 125): the worker woken for the rest woke nobody in turn. With three
    /// jobs whose publishers all skipped their wake-up, the parking searcher took one and woke a
    /// second worker, which took another from the shared queue and went on without waking the
    /// third: the last job waited with a worker asleep. A worker back from parking that finds
    /// more work queued now wakes another, so the chain reaches every job. Replayed exactly as
    /// above, with three workers and three jobs.
    @Test func workerWokenForQueuedJobs_wakesAnotherWhileMoreAreQueued() {
        final class Flag: Sendable { let isArmed = Atomic<Bool>(false) }
        let flag = Flag()
        let inWindow = DispatchSemaphore(value: 0)
        let queued = DispatchSemaphore(value: 0)
        let pool = PoolScheduler(workerCount: 3, name: "chain", runNextLimit: 32, searchEndedEmpty: {
            guard flag.isArmed.exchange(false, ordering: .acquiringAndReleasing) else { return }
            inWindow.signal()
            _ = queued.waitBounded()
        })
        defer { pool.shutdown() }
        #expect(spinUntil { pool.sleepingWorkerCount == 3 })
        flag.isArmed.store(true, ordering: .releasing)
        // Wakes one worker; after this job its search comes back empty, into the hook.
        pool.schedule {}
        #expect(inWindow.waitBounded())
        // All three publishers skip their wake-up: a worker is searching.
        let gate = Gate()
        for _ in 0..<3 { pool.schedule(gate.hold) }
        queued.signal()
        #expect(gate.waitUntilHeld(count: 3, timeout: .seconds(10)), "a queued job waited while a worker slept")
        gate.open(count: 3)
    }

    /// Cause 2 (a task suspended for ever): an ask in flight when the system shut down waited
    /// for its time-out, but a shut-down pool drops the time-out's timer, so the awaiting task
    /// was never resumed. Now `shutdown()` fails every pending ask.
    @Test func askInFlightAtShutdown_onThePool_completes() async throws {
        let system = ActorSystem(name: "hang-ask", configuration: .init(logHandler: nil))
        let silent = try system.spawn(Behavior<Message>.ignore, name: "silent")
        let ask = Task { try await silent.ask(timeout: .seconds(2)) { Message.get(replyTo: $0) } }
        let deadline = ContinuousClock.now + .seconds(60)
        while system.pendingAsks.count == 0, ContinuousClock.now < deadline { await Task.yield() }
        _ = await system.shutdown()
        let finished = AsyncGate()
        Task {
            _ = try? await ask.value
            finished.open(true)
        }
        #expect(await finished.wait(timeout: 60), "the ask never completed after shutdown")
    }
}
