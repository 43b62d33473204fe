import Dispatch
import Foundation
import Mailbox
import MailboxTestKit
import Synchronization
import Testing

/// The soak run: `MAILBOX_SOAK=1 swift test --filter Soak` (off in the default run). At least
/// 1,000,000 injected failures across a supervision tree on the real default pool; reports the
/// failures survived, the messages processed and the messages lost, which must be 0.
/// `MAILBOX_SOAK_MESSAGES` sets the number of messages (default 2,200,000, half of which fail).
@Suite("Soak")
struct SoakTests {
    static let isEnabled = ProcessInfo.processInfo.environment["MAILBOX_SOAK"] == "1"

    /// Counts outcomes; `wait` returns once `expected` have been counted (or the time-out).
    final class Tally: Sendable {
        let processed = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        let dead = Atomic<Int>(0)
        private let done = DispatchSemaphore(value: 0)
        private let remaining: Atomic<Int>

        init(expected: Int) { remaining = Atomic(expected) }

        func count(_ counter: borrowing Atomic<Int>) {
            counter.wrappingAdd(1, ordering: .relaxed)
            if remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.signal() }
        }

        func wait(seconds: Int) -> Bool { done.wait(timeout: .now() + .seconds(seconds)) == .success }
    }

    /// Whether `value` fails under the seed: half of the messages, by a seeded hash.
    static func fails(_ value: Int, seed: UInt64) -> Bool {
        var generator = SeededRandom(seed: seed &+ UInt64(value) &* 0x9E37_79B9_7F4A_7C15)
        return generator.next() & 1 == 0
    }

    static func worker(_ tally: Tally, seed: UInt64) -> Behavior<Int> {
        .setup { _ in
            .receiveMessage { value in
                if fails(value, seed: seed) {
                    tally.count(tally.failed)
                    throw InjectedFault(point: "soak", hit: value, seed: seed)
                }
                tally.count(tally.processed)
                return .same
            }
        }
    }

    @Test(.enabled(if: SoakTests.isEnabled)) func millionFailures_noMessageLost() throws {
        let environment = ProcessInfo.processInfo.environment
        let total = environment["MAILBOX_SOAK_MESSAGES"].flatMap(Int.init) ?? 2_200_000
        let seed = environment["MAILBOX_SEED"].flatMap(UInt64.init) ?? 2026
        let tally = Tally(expected: total)
        let system = ActorSystem(name: "soak", configuration: .init(logHandler: nil))
        defer { _ = blockingShutdown(system) }
        system.deadLetters.observeValues { letter in
            if letter.message is Int { tally.count(tally.dead) }
        }
        // A tree: 4 workers decided by the root (one-for-one), 4 with their own restart rule,
        // and a nested all-for-one supervisor of 2.
        var specs = (0..<4).map { index in ChildSpec(id: "decided\(index)") { SoakTests.worker(tally, seed: seed) } }
        specs += (0..<4).map { index in
            ChildSpec(id: "ruled\(index)") { .supervise(SoakTests.worker(tally, seed: seed)).onFailure(SupervisorStrategy.restart.withLogging(false)) }
        }
        let nested = (0..<2).map { index in ChildSpec(id: "nested\(index)") { SoakTests.worker(tally, seed: seed) } }
        specs.append(ChildSpec(id: "team") { Supervisor.behavior(strategy: .allForOne, intensity: Int.max, period: .seconds(1), children: nested) })
        let root = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: Int.max, period: .seconds(1), children: specs), name: "root")

        let top = try children(of: root)
        var workers = top.filter { $0.id != "team" }.compactMap { $0.ref?.typed(as: Int.self) }
        let team = try #require(top.first { $0.id == "team" }?.ref?.typed(as: SupervisorMessage.self))
        workers += try children(of: team).compactMap { $0.ref?.typed(as: Int.self) }
        #expect(workers.count == 10)

        let start = Date()
        var enqueued = 0
        for value in 0..<total where workers[value % workers.count].tell(value) == .enqueued {
            enqueued += 1
        }
        let finished = tally.wait(seconds: 600)
        let seconds = Date().timeIntervalSince(start)
        let processed = tally.processed.load(ordering: .relaxed)
        let failed = tally.failed.load(ordering: .relaxed)
        let dead = tally.dead.load(ordering: .relaxed)
        let lost = total - processed - failed - dead
        print("soak: \(failed) failures survived, \(processed) messages processed, \(dead) dead letters, \(lost) lost, \(total) sent (\(enqueued) accepted) in \(String(format: "%.1f", seconds)) s on \(ProcessInfo.processInfo.activeProcessorCount) cores, seed \(seed)")
        #expect(finished)
        #expect(lost == 0)
        #expect(dead == 0)
        #expect(failed >= total / 2 - total / 50)
        if total >= 2_200_000 { #expect(failed >= 1_000_000) }
    }

    func children(of supervisor: ActorRef<SupervisorMessage>) throws -> [SupervisedChild] {
        let reply = blocking {
            try? await supervisor.ask(timeout: .seconds(10)) { (replyTo: ActorRef<[SupervisedChild]>) in
                SupervisorMessage.whichChildren(replyTo: replyTo)
            }
        }
        return try #require(reply)
    }
}

/// Runs `body` on the concurrency pool and blocks until it returns (set-up of a real-pool test).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

func blockingShutdown(_ system: ActorSystem) -> ActorSystem.ShutdownReport {
    blocking { await system.shutdown() }
}
