import Testing
@testable import Mailbox

/// Stash and unstash as Akka Typed's `StashBuffer` behaves: replayed one message at a time, a
/// failure stops the replay (under resume the rest stay stashed), partial unstash, and messages
/// stashed while unstashing wait for the next call.
@Suite("Stash")
struct StashTests {
    enum Message: Sendable, Equatable {
        case work(Int)
        case open(count: Int?)
        case size
    }

    struct Boom: Error {}

    /// Stashes `work` until `open`; when open, `work(3)` throws and `work(5)` is stashed again.
    func stasher(seen: Inbox<String>) -> Behavior<Message> {
        Behavior<Message>.supervise(.setup { context in
            func open() -> Behavior<Message> {
                .receiveMessage { message in
                    switch message {
                    case let .work(n):
                        if n == 3 { throw Boom() }
                        if n == 5, context.stashSize < 100 {
                            try context.stash(message)
                            seen.record("restash 5")
                            return .same
                        }
                        seen.record("work \(n)")
                    case .size:
                        seen.record("size \(context.stashSize)")
                    case .open:
                        break
                    }
                    return .same
                }
            }
            return .receiveMessage { message in
                switch message {
                case .work:
                    try context.stash(message)
                case let .open(count):
                    if let count { return context.unstash(open(), count: count) }
                    return context.unstashAll(open())
                case .size:
                    seen.record("size \(context.stashSize) full \(context.isStashFull)")
                }
                return .same
            }
        }).onFailure(.resume)
    }

    @Test func aFailingReplayedMessage_underResume_stopsTheReplay_theRestStayStashed() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let ref = try system.spawn(stasher(seen: seen), name: "stasher")
        for n in 1...4 { ref.tell(.work(n)) }
        ref.tell(.size)
        ref.tell(.open(count: nil))
        ref.tell(.size)
        scheduler.runDue()
        // 1 and 2 replayed, 3 failed (resumed: gone), 4 still stashed.
        #expect(seen.values == ["size 4 full false", "work 1", "work 2", "size 1"])
    }

    @Test func partialUnstash_replaysTheOldestCount() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let ref = try system.spawn(stasher(seen: seen), name: "stasher")
        ref.tell(.work(1))
        ref.tell(.work(2))
        ref.tell(.work(4))
        ref.tell(.open(count: 2))
        ref.tell(.size)
        scheduler.runDue()
        #expect(seen.values == ["work 1", "work 2", "size 1"])
    }

    @Test func messagesStashedDuringAnUnstash_areNotReplayedByThatCall() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let ref = try system.spawn(stasher(seen: seen), name: "stasher")
        ref.tell(.work(5))
        ref.tell(.work(6))
        ref.tell(.open(count: nil))
        ref.tell(.size)
        scheduler.runDue()
        // 5 is stashed again during the unstash and not replayed at once (no endless loop).
        #expect(seen.values == ["restash 5", "work 6", "size 1"])
    }

    @Test func isStashFull_atTheCapacity() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let ref = try system.spawn(stasher(seen: seen), name: "stasher", props: Props(stashCapacity: 2))
        ref.tell(.work(1))
        ref.tell(.work(2))
        ref.tell(.size)
        scheduler.runDue()
        #expect(seen.values == ["size 2 full true"])
    }

    @Test func whatIsStillStashed_whenTheActorStops_becomesDeadLetters() throws {
        let (system, scheduler) = makeTestSystem()
        let letters = Inbox<String>()
        system.deadLetters.observeValues { letters.record("\($0.message)") }
        let ref = try system.spawn(Behavior<Message>.receive { context, message in
            if case .open = message { return .stopped }
            try context.stash(message)
            return .same
        }, name: "dropper")
        ref.tell(.work(1))
        ref.tell(.work(2))
        ref.tell(.open(count: nil))
        scheduler.runDue()
        #expect(letters.values == ["work(1)", "work(2)"])
    }
}
