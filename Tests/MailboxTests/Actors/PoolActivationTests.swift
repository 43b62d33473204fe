import Dispatch
import Foundation
import Testing
@testable import Mailbox

/// On the pool, an actor's mailbox run is queued without a retain while the actor has not
/// terminated (its parent keeps it alive), and with one after. These tests hold the runtime to
/// what that must not break: terminated actors are freed (nothing leaks a retain), nothing is
/// freed while a run of it is queued or running (ThreadSanitizer and the address sanitizer
/// report a use after free), and late messages still become dead letters.
@Suite("Pool activation without a retain per run")
struct PoolActivationTests {
    /// Weak references to cells, read after the system has shut down.
    final class WeakCells: @unchecked Sendable {  // `cells` is protected by `lock` (NSLock).
        private let lock = NSLock()
        private var cells: [() -> AnyObject?] = []

        func add(_ cell: AnyObject) {
            lock.lock()
            defer { lock.unlock() }
            cells.append { [weak cell] in cell }
        }

        var liveCount: Int {
            lock.lock()
            defer { lock.unlock() }
            return cells.filter { $0() != nil }.count
        }
    }

    @Test func actorsThatStopThemselves_areFreed_andLateMessagesBecomeDeadLetters() async throws {
        let system = ActorSystem(name: "selfstop", configuration: .init(logHandler: nil))
        let cells = WeakCells()
        let actors = 2_000
        let stopped = LockedValueBox(0)
        system.events.observeValues { event in
            if case .stopped = event { stopped.withLockedValue { $0 += 1 } }
        }
        do {
            for _ in 0..<actors {
                let ref = try system.spawnAnonymous(Behavior<Int>.receiveMessage { _ in .stopped })
                cells.add(ref.target)
                ref.tell(1)   // stops it
                ref.tell(2)   // handled while stopping or after: a dead letter either way
            }
        }
        // Each stops by itself (shutdown would stop some before their first message).
        #expect(spinUntil { stopped.withLockedValue { $0 } == actors })
        let report = await system.shutdown()
        #expect(report.isClean)
        #expect(system.deadLetterCount == actors)
        #expect(cells.liveCount == 0, "terminated actors were not freed")
    }

    /// Children on both workers terminate while their parents watch them, strangers keep
    /// telling them, and the parents then stop: every run that outlives its actor's
    /// termination must still find the cell alive, and everything is freed at the end.
    @Test func childrenTerminatingUnderLoad_areNeitherFreedEarlyNorLeaked() async throws {
        let system = ActorSystem(name: "churn", configuration: .init(logHandler: nil))
        let cells = WeakCells()
        let parents = 50, childrenPerParent = 20
        let terminations = LockedValueBox(0)
        let childRefs = LockedValueBox([ActorRef<Int>]())
        for index in 0..<parents {
            let parent = try system.spawn(Behavior<Int>.setup { context in
                for _ in 0..<childrenPerParent {
                    let child = try context.spawnAnonymous(Behavior<Int>.receiveMessage { message in
                        message == 0 ? .stopped : .same
                    })
                    context.watch(child)
                    cells.add(child.target)
                    childRefs.withLockedValue { $0.append(child) }
                }
                return Behavior<Int>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                    if case .terminated = event { terminations.withLockedValue { $0 += 1 } }
                    return .same
                }
            }, name: "p\(index)")
            cells.add(parent.target)
        }
        // Wait until every child exists.
        #expect(spinUntil { childRefs.withLockedValue { $0.count } == parents * childrenPerParent })
        do {
            let snapshot = childRefs.withLockedValue { refs in
                defer { refs = [] }
                return refs
            }
            // Each sender thread takes its refs out of a box and drops them before it leaves the
            // group: a thread's closure is released some time after it returns, and refs it
            // captured would keep children alive past the check below (seen under load: the
            // closure's array was still being destroyed, 247 cells alive).
            let slices = (0..<3).map { sender in
                LockedValueBox(snapshot.enumerated().filter { $0.offset % 3 == sender }.map(\.element))
            }
            let group = DispatchGroup()
            for slice in slices {
                group.enter()
                Thread {
                    var refs = slice.withLockedValue { refs in
                        defer { refs = [] }
                        return refs
                    }
                    for child in refs {
                        for value in 1...5 { child.tell(value) }
                        child.tell(0)
                        for value in 1...5 { child.tell(value) }   // after the stop: dead letters
                    }
                    refs = []
                    group.leave()
                }.start()
            }
            #expect(group.waitBounded())
        }
        #expect(spinUntil { terminations.withLockedValue { $0 } == parents * childrenPerParent })
        let report = await system.shutdown()
        #expect(report.isClean)
        #expect(system.deadLetterCount >= parents * childrenPerParent * 5)
        #expect(cells.liveCount == 0, "actors outlived shutdown: a retain was leaked")
    }
}
