import Testing
@testable import Mailbox

/// Timers keep mailbox order (Akka Typed's timers do): a timer's message is queued when the
/// timer fires, behind the messages already queued, and a message of a timer cancelled or
/// restarted after it fired is never delivered, even though it is already in the mailbox.
///
/// The actor runs on the `ImmediateScheduler` (its mailbox run happens on the sending thread)
/// and its timers on a `TestScheduler`, so a handler can make a timer fire while it runs.
@Suite("Timers keep mailbox order")
struct TimerOrderingTests {
    enum Message: Sendable, Equatable {
        case start
        case reply
        case timeout
        case restartTimer
        case cancelTimer
    }

    func makeSystem() -> (ActorSystem, TestScheduler) {
        let timers = TestScheduler()
        let system = ActorSystem(
            name: "timers",
            configuration: .init(scheduler: ImmediateScheduler(), timerScheduler: timers, logHandler: nil))
        return (system, timers)
    }

    /// Handles `.start` by queueing `.reply` to itself, then making the one-second timer fire
    /// (its message is queued behind `.reply`), then running `afterFiring` (inside the same
    /// handler, before either queued message is handled).
    func spawnActor(
        _ system: ActorSystem, _ timers: TestScheduler, seen: Inbox<Message>,
        afterFiring: @escaping @Sendable (ActorContext<Message>) -> Void = { _ in }
    ) throws -> ActorRef<Message> {
        try system.spawn(Behavior<Message>.setup { context in
            context.timers.startSingleTimer(key: "timeout", message: .timeout, delay: .seconds(1))
            return .receiveMessage { message in
                seen.record(message)
                if message == .start {
                    context.myself.tell(.reply)
                    timers.advance(by: .seconds(1))
                    afterFiring(context)
                }
                return .same
            }
        }, name: "client")
    }

    @Test func aTimeoutDoesNotOvertakeTheReplyQueuedBeforeItFired() throws {
        let (system, timers) = makeSystem()
        let seen = Inbox<Message>()
        let ref = try spawnActor(system, timers, seen: seen)
        ref.tell(.start)
        #expect(seen.values == [.start, .reply, .timeout])
    }

    @Test func aMessageOfACancelledTimer_alreadyQueued_isNeverDelivered() throws {
        let (system, timers) = makeSystem()
        let seen = Inbox<Message>()
        let ref = try spawnActor(system, timers, seen: seen) { context in
            context.timers.cancel(key: "timeout")
        }
        ref.tell(.start)
        ref.tell(.cancelTimer)
        #expect(seen.values == [.start, .reply, .cancelTimer])
    }

    @Test func aMessageOfARestartedTimer_alreadyQueued_isNeverDelivered_theNewOneIs() throws {
        let (system, timers) = makeSystem()
        let seen = Inbox<Message>()
        let ref = try spawnActor(system, timers, seen: seen) { context in
            // Same key, new timer: the queued message belongs to the old one.
            context.timers.startSingleTimer(key: "timeout", message: .restartTimer, delay: .seconds(5))
        }
        ref.tell(.start)
        #expect(seen.values == [.start, .reply])
        timers.advance(by: .seconds(5))
        #expect(seen.values == [.start, .reply, .restartTimer])
    }

    @Test func aTimerMessageIsNeverRefusedByAFullBoundedMailbox_andIsCountedAgainstIt() throws {
        let (system, timers) = makeSystem()
        let seen = Inbox<Message>()
        let dropped = Inbox<String>()
        system.drops.observeValues { dropped.record("\($0.message)") }
        let ref = try system.spawn(Behavior<Message>.setup { context in
            context.timers.startSingleTimer(key: "timeout", message: .timeout, delay: .seconds(1))
            return .receiveMessage { message in
                seen.record(message)
                if message == .start {
                    // Fills the mailbox (capacity 1), then the timer fires: it is queued anyway.
                    context.myself.tell(.reply)
                    timers.advance(by: .seconds(1))
                    // Now two are queued against a capacity of 1: this one is refused.
                    context.myself.tell(.cancelTimer)
                }
                return .same
            }
        }, name: "bounded", props: Props(mailbox: .bounded(capacity: 1, overflow: .dropNewest)))
        ref.tell(.start)
        #expect(seen.values == [.start, .reply, .timeout])
        #expect(dropped.values == ["cancelTimer"])
    }

    @Test func aFixedRateTimer_keepsTicking_inOrderWithOtherMessages() throws {
        let (system, timers) = makeSystem()
        let seen = Inbox<Message>()
        let ref = try system.spawn(Behavior<Message>.setup { context in
            context.timers.startTimerAtFixedRate(key: "tick", message: .timeout, interval: .seconds(1))
            return .receiveMessage { message in
                seen.record(message)
                if message == .start {
                    timers.advance(by: .seconds(1))
                    context.myself.tell(.reply)
                    timers.advance(by: .seconds(1))
                }
                return .same
            }
        }, name: "ticker")
        ref.tell(.start)
        #expect(seen.values == [.start, .timeout, .reply, .timeout])
    }
}
