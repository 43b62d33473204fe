import Testing
@testable import Mailbox

/// DEBUG builds check that an actor's consumer-only state is touched only inside its mailbox run
/// (as swift-nio's `assertInEventLoop`): a context used after its handler returned crashes.
@Suite("Mailbox run assertions")
struct MailboxRunAssertionTests {
    #if DEBUG
    /// Escapes the actor's context from its `setup` (which the docs forbid).
    final class Escaped: @unchecked Sendable {
        // Written once inside the actor's setup, read after `scheduler.advance()` returned on
        // the same thread: the TestScheduler runs the setup synchronously there.
        var context: ActorContext<Int>?
    }

    static func spawnEscaping() throws -> (ActorContext<Int>, ActorSystem) {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "escape", configuration: .init(scheduler: scheduler, logHandler: nil))
        let escaped = Escaped()
        try system.spawn(Behavior<Int>.setup { context in
            escaped.context = context
            return .receiveMessage { _ in .same }
        }, name: "leaky")
        scheduler.advance()
        return (escaped.context!, system)
    }

    @Test func contextUsedOutsideItsMailboxRun_crashes() async {
        await #expect(processExitsWith: .failure) {
            let (context, system) = try! Self.spawnEscaping()
            try? context.stash(1)
            _ = system
        }
    }

    @Test func timersStartedOutsideTheMailboxRun_crash() async {
        await #expect(processExitsWith: .failure) {
            let (context, system) = try! Self.spawnEscaping()
            context.timers.startSingleTimer(key: "t", message: 1, delay: .seconds(1))
            _ = system
        }
    }

    @Test func theSameCallsInsideTheRun_areFine() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "inside", configuration: .init(scheduler: scheduler, logHandler: nil))
        let seen = LockedValueBox<[Int]>([])
        let ref = try system.spawn(Behavior<Int>.setup { context in
            context.timers.startSingleTimer(key: "t", message: 99, delay: .seconds(1))
            return .receiveMessage { message in
                seen.withLockedValue { $0.append(message) }
                if message == 1 { try context.stash(2) }
                if message == 3 { return context.unstashAll(.same) }
                return .same
            }
        }, name: "fine")
        ref.tell(1)
        ref.tell(3)
        scheduler.advance(by: .seconds(1))
        #expect(seen.withLockedValue { $0 } == [1, 3, 2, 99])
    }
    #endif
}
