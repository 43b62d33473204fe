import Testing
@testable import Mailbox

/// A watch is either a lifecycle event (`watch(_:)`) or a message (`watch(_:with:)`), as in Akka
/// Typed: switching a watch of the same actor from one to the other is a usage error, a failure
/// of the watcher, not a silent change of what it will receive.
@Suite("Watch usage")
struct WatchUsageTests {
    enum Message: Sendable, Equatable {
        case watchPlain
        case watchWithMessage
        case watchWithOtherMessage
        case targetGone(String)
    }

    func spawnWatcher(
        _ system: ActorSystem, target: ActorRef<Int>, seen: Inbox<String>
    ) throws -> ActorRef<Message> {
        try system.spawn(Behavior<Message>.receive { context, message in
            switch message {
            case .watchPlain: context.watch(target)
            case .watchWithMessage: context.watch(target, with: .targetGone("first"))
            case .watchWithOtherMessage: context.watch(target, with: .targetGone("second"))
            case let .targetGone(tag): seen.record("message \(tag)")
            }
            seen.record("handled \(message)")
            return .same
        }.receiveLifecycle { _, event in
            if case .terminated = event { seen.record("terminated event") }
            return .same
        }, name: "watcher")
    }

    @Test func watchAfterWatchWith_failsTheWatcher_namingBothActors() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .same }, name: "target")
        let seen = Inbox<String>()
        let watcher = try spawnWatcher(system, target: target, seen: seen)
        watcher.tell(.watchWithMessage)
        watcher.tell(.watchPlain)
        scheduler.runDue()
        let failures = events.values.compactMap { event -> ActorSystemError? in
            if case let .failed(address, error) = event, address == watcher.address { return error as? ActorSystemError }
            return nil
        }
        #expect(failures.count == 1)
        #expect(failures.first?.code == .conflictingWatch)
        #expect(failures.first?.description.contains("/user/watcher") == true)
        #expect(failures.first?.description.contains("/user/target") == true)
        // `watch` cannot throw: the handler runs to its end, then fails as if it had thrown.
        #expect(seen.values == ["handled watchWithMessage", "handled watchPlain"])
    }

    @Test func watchWithAfterWatch_failsTheWatcherToo() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .same }, name: "target")
        let seen = Inbox<String>()
        let watcher = try spawnWatcher(system, target: target, seen: seen)
        watcher.tell(.watchPlain)
        watcher.tell(.watchWithMessage)
        scheduler.runDue()
        #expect(events.values.contains { event in
            if case let .failed(address, error) = event, address == watcher.address {
                return (error as? ActorSystemError)?.code == .conflictingWatch
            }
            return false
        })
    }

    @Test func watchingTwiceTheSameWay_isFine_andDeliversOnce() throws {
        let (system, scheduler) = makeTestSystem()
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "target")
        let seen = Inbox<String>()
        let watcher = try spawnWatcher(system, target: target, seen: seen)
        watcher.tell(.watchWithMessage)
        watcher.tell(.watchWithOtherMessage)  // replaces the message
        scheduler.runDue()
        target.tell(1)
        scheduler.runDue()
        #expect(seen.values == ["handled watchWithMessage", "handled watchWithOtherMessage", "message second", "handled targetGone(\"second\")"])
    }
}
