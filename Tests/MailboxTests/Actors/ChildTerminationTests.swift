import Foundation
import Testing
@testable import Mailbox

/// A child's failure is a kind of termination (Akka Typed: `ChildFailed` extends `Terminated`),
/// its cause is never lost to timing, and stopping a child twice is harmless.
@Suite("Actors: child termination semantics")
struct ChildTerminationTests {
    struct Boom: Error {}

    /// What a parent's lifecycle handler may match.
    struct Handles: OptionSet {
        let rawValue: Int
        static let terminated = Handles(rawValue: 1)
        static let childFailed = Handles(rawValue: 2)
    }

    /// A parent that spawns (and watches, with `watches`) a child failing on its first message,
    /// forwards every `Int` to it, and records the lifecycle events it handles.
    func parent(
        _ seen: Inbox<String>, handles: Handles, watches: Bool = true,
        child: @escaping @Sendable () -> Behavior<Int> = { .receiveMessage { _ in throw Boom() } }
    ) -> Behavior<Int> {
        .setup { context in
            let child = try context.spawn(child(), name: "child")
            if watches { context.watch(child) }
            return Behavior<Int>.receiveMessage { value in
                child.tell(value)
                return .same
            }.receiveLifecycle { _, event in
                switch event {
                case let .terminated(ref) where handles.contains(.terminated):
                    seen.record("terminated \(ref.address.name)")
                case let .childFailed(ref, error) where handles.contains(.childFailed):
                    seen.record("childFailed \(ref.address.name) \(error is Boom)")
                default:
                    return .unhandled
                }
                return .same
            }
        }
    }

    func failures(_ events: Inbox<ActorSystemEvent>, of name: String) -> [any Error] {
        events.values.compactMap { event in
            if case let .failed(address, error) = event, address.name == name { return error }
            return nil
        }
    }

    // MARK: A failed child is a terminated child

    @Test func failedWatchedChild_isDeliveredAsTerminated_toAHandlerOfTerminatedOnly() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let seen = Inbox<String>()
        let parentRef = try system.spawn(parent(seen, handles: .terminated), name: "parent")
        parentRef.tell(1)
        scheduler.runDue()
        #expect(seen.values == ["terminated child"])
        #expect(failures(events, of: "parent").isEmpty)   // no death pact
        #expect(parentRef.tell(2) == .enqueued)
    }

    @Test func failedWatchedChild_isDeliveredOnceAsChildFailed_toAHandlerOfBoth() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let parentRef = try system.spawn(parent(seen, handles: [.terminated, .childFailed]), name: "parent")
        parentRef.tell(1)
        scheduler.runDue()
        #expect(seen.values == ["childFailed child true"])
    }

    @Test func failedWatchedChild_unhandledEitherWay_isADeathPact() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let seen = Inbox<String>()
        let parentRef = try system.spawn(parent(seen, handles: []), name: "parent")
        parentRef.tell(1)
        scheduler.runDue()
        let failure = try #require(failures(events, of: "parent").first as? DeathPactError)
        #expect(failure.terminated.address.name == "child")
    }

    @Test func stoppedWatchedChild_isStillPlainTerminated_evenToAHandlerOfChildFailed() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let parentRef = try system.spawn(parent(seen, handles: [.terminated, .childFailed], child: {
            .receiveMessage { _ in .stopped }
        }), name: "parent")
        parentRef.tell(1)
        scheduler.runDue()
        #expect(seen.values == ["terminated child"])
    }

    @Test func escalatingWatchedChild_isAbsorbedByAHandlerOfTerminatedOnly() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let seen = Inbox<String>()
        let parentRef = try system.spawn(parent(seen, handles: .terminated, child: {
            .supervise(.receiveMessage { _ in throw Boom() }).onFailure(.escalate)
        }), name: "parent")
        parentRef.tell(1)
        scheduler.runDue()
        #expect(seen.values == ["terminated child"])
        #expect(failures(events, of: "parent").isEmpty)
    }

    // MARK: The cause is never lost by timing

    @Test func childFailingInItsFirstRun_afterASameTurnWatch_isReportedWithItsError() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        // The child's `setup` throws: it fails (and terminates) in the same run that handles
        // the parent's watch.
        _ = try system.spawn(parent(seen, handles: [.terminated, .childFailed], child: {
            .setup { _ in throw Boom() }
        }), name: "parent")
        scheduler.runDue()
        #expect(seen.values == ["childFailed child true"])
    }

    @Test func watchingAChildThatAlreadyFailed_reportsChildFailed_withItsError() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let children = Inbox<ActorRef<Int>>()
        let parentRef = try system.spawn(Behavior<Int>.setup { context in
            let child = try context.spawn(Behavior<Int>.receiveMessage { _ in throw Boom() }, name: "child")
            children.record(child)
            return Behavior<Int>.receive { context, _ in
                context.watch(child)           // long after the child failed and terminated
                return .same
            }.receiveLifecycle { _, event in
                if case let .childFailed(ref, error) = event {
                    seen.record("childFailed \(ref.address.name) \(error is Boom)")
                    return .same
                }
                return .unhandled
            }
        }, name: "parent")
        scheduler.runDue()
        children.values[0].tell(1)
        scheduler.runDue()
        parentRef.tell(0)
        scheduler.runDue()
        #expect(seen.values == ["childFailed child true"])
    }

    @Test func watchingAnotherParentsFailedChildLate_reportsPlainTerminated() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let victims = Inbox<ActorRef<Int>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            victims.record(try context.spawn(Behavior<Int>.receiveMessage { _ in throw Boom() }, name: "victim"))
            return .ignore
        }, name: "owner")
        scheduler.runDue()
        victims.values[0].tell(1)
        scheduler.runDue()
        let stranger = try system.spawn(Behavior<ActorRef<Int>>.receive { context, victim in
            context.watch(victim)
            return .same
        }.receiveLifecycle { _, event in
            switch event {
            case let .terminated(ref): seen.record("terminated \(ref.address.name)")
            case let .childFailed(ref, _): seen.record("childFailed \(ref.address.name)")
            default: return .unhandled
            }
            return .same
        }, name: "stranger")
        stranger.tell(victims.values[0])
        scheduler.runDue()
        #expect(seen.values == ["terminated victim"])
    }

    // MARK: context.stop is idempotent

    @Test func stoppingAChildThatAlreadyStopped_doesNothing() throws {
        let (system, scheduler) = makeTestSystem()
        let outcomes = Inbox<String>()
        let parentRef = try system.spawn(Behavior<Int>.setup { context in
            let child = try context.spawn(Behavior<Int>.ignore, name: "child")
            return Behavior<Int>.receive { context, _ in
                do {
                    try context.stop(child)
                    outcomes.record("stopped, children=\(context.childRefs.count)")
                } catch {
                    outcomes.record("threw \(error)")
                }
                return .same
            }
        }, name: "parent")
        parentRef.tell(0)
        scheduler.runDue()
        parentRef.tell(0)   // the child has terminated by now
        scheduler.runDue()
        parentRef.tell(0)
        scheduler.runDue()
        #expect(outcomes.values == ["stopped, children=1", "stopped, children=0", "stopped, children=0"])
    }

    @Test func stoppingAnActorThatNeverWasAChild_throwsNotAChild() throws {
        let (system, scheduler) = makeTestSystem()
        let outcomes = Inbox<String>()
        let stranger = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "stranger")
        let sibling = Inbox<ActorRef<Int>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            sibling.record(try context.spawn(Behavior<Int>.ignore, name: "nephew"))
            return .ignore
        }, name: "uncle")
        scheduler.runDue()
        stranger.tell(0)
        scheduler.runDue()
        let parentRef = try system.spawn(Behavior<Int>.receive { context, _ in
            for (name, ref) in [("stranger", stranger), ("nephew", sibling.values[0]), ("itself", context.myself)] {
                do {
                    try context.stop(ref)
                    outcomes.record("\(name): stopped")
                } catch let error as ActorSystemError {
                    outcomes.record("\(name): \(error.code)")
                }
            }
            return .same
        }, name: "parent")
        parentRef.tell(0)
        scheduler.runDue()
        #expect(outcomes.values == ["stranger: notAChild", "nephew: notAChild", "itself: notAChild"])
    }
}
