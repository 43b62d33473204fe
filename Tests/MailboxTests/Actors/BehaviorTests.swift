import Testing
@testable import Mailbox

@Suite("Behaviors")
struct BehaviorTests {
    enum CounterMessage: Sendable {
        case increment
        case get(replyTo: ActorRef<Int>)
    }

    func counter(setups: Inbox<String>? = nil) -> Behavior<CounterMessage> {
        .setup { context in
            setups?.record(context.name)
            var count = 0
            return .receiveMessage { message in
                switch message {
                case .increment: count += 1
                case let .get(replyTo): replyTo.tell(count)
                }
                return .same
            }
        }
    }

    @Test func setupRunsOnceOnStart_andStateLivesAcrossMessages() throws {
        let (system, scheduler) = makeTestSystem()
        let setups = Inbox<String>()
        let replies = Inbox<Int>()
        let counter = try system.spawn(counter(setups: setups), name: "counter")
        let probe = try system.spawn(recording(replies), name: "probe")
        #expect(setups.values.isEmpty, "setup must not run before the scheduler runs the actor")
        for _ in 0..<5 { counter.tell(.increment) }
        counter.tell(.get(replyTo: probe))
        scheduler.advance()
        #expect(setups.values == ["counter"])
        #expect(replies.values == [5])
    }

    @Test func returningNewBehavior_switchesForTheNextMessage() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        func waiting() -> Behavior<String> {
            .receiveMessage { message in
                seen.record("waiting:\(message)")
                return message == "open" ? open() : .same
            }
        }
        func open() -> Behavior<String> {
            .receiveMessage { message in
                seen.record("open:\(message)")
                return message == "close" ? waiting() : .same
            }
        }
        let door = try system.spawn(waiting(), name: "door")
        for message in ["knock", "open", "walk", "close", "knock"] { door.tell(message) }
        scheduler.advance()
        #expect(seen.values == ["waiting:knock", "waiting:open", "open:walk", "open:close", "waiting:knock"])
    }

    @Test func stoppedBehavior_terminatesAndLaterMessagesAreDeadLetters() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let handled = Inbox<Int>()
        let ref = try system.spawn(Behavior<Int>.receiveMessage { value in
            handled.record(value)
            return value == 2 ? .stopped : .same
        }, name: "stopper")
        for value in 1...4 { ref.tell(value) }
        scheduler.advance()
        #expect(handled.values == [1, 2])
        let deadLetters = events.values.compactMap { event -> Int? in
            if case let .deadLetter(letter) = event { return letter.message as? Int }
            return nil
        }
        #expect(deadLetters == [3, 4])
        #expect(ref.tell(5) == .dropped(.recipientTerminated))
        #expect(system.deadLetterCount == 3)
        #expect(system.topLevelActors.isEmpty)
    }

    @Test func unhandledMessage_isPublishedAndBehaviorStays() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let handled = Inbox<String>()
        let ref = try system.spawn(Behavior<String>.receiveMessage { message in
            if message == "?" { return .unhandled }
            handled.record(message)
            return .same
        }, name: "picky")
        ref.tell("a"); ref.tell("?"); ref.tell("b")
        scheduler.advance()
        #expect(handled.values == ["a", "b"])
        let unhandled = events.values.compactMap { event -> String? in
            if case let .unhandled(address, message) = event { return "\(address.path) \(message)" }
            return nil
        }
        #expect(unhandled == ["/user/picky ?"])
    }

    @Test func ignoreAndEmpty() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ignoring = try system.spawn(Behavior<Int>.ignore, name: "ignoring")
        let empty = try system.spawn(Behavior<Int>.empty, name: "empty")
        ignoring.tell(1)
        empty.tell(2)
        scheduler.advance()
        let unhandled = events.values.compactMap { event -> String? in
            if case let .unhandled(address, _) = event { return address.path }
            return nil
        }
        #expect(unhandled == ["/user/empty"])
    }

    final class Counter: AbstractBehavior<CounterMessage> {
        private var count = 0
        override func receive(_ message: CounterMessage) throws -> Behavior<CounterMessage> {
            switch message {
            case .increment: count += 1
            case let .get(replyTo): replyTo.tell(count)
            }
            return .same
        }
    }

    @Test func objectBehavior_keepsStateInTheObject() throws {
        let (system, scheduler) = makeTestSystem()
        let replies = Inbox<Int>()
        let counter = try system.spawn(.object { Counter(context: $0) }, name: "counter")
        let probe = try system.spawn(recording(replies), name: "probe")
        counter.tell(.increment)
        counter.tell(.increment)
        counter.tell(.get(replyTo: probe))
        scheduler.advance()
        #expect(replies.values == [2])
    }

    struct Boom: Error {}

    @Test func throwingHandler_isAFailure_actorStopsAndFailureIsPublished() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let postStops = Inbox<String>()
        let ref = try system.spawn(Behavior<Int>.receive { _, value in
            if value == 2 { throw Boom() }
            return .same
        }.receiveLifecycle { _, event in
            if case .postStop = event { postStops.record("postStop") }
            return .same
        }, name: "fragile")
        ref.tell(1); ref.tell(2); ref.tell(3)
        scheduler.advance()
        let kinds = events.values.map { event -> String in
            switch event {
            case .spawned: return "spawned"
            case .failed: return "failed"
            case let .supervised(decision): return "\(decision.directive) by \(decision.decider)"
            case .stopped: return "stopped"
            case let .deadLetter(letter): return "dead:\(letter.message)"
            case let .dropped(drop): return "dropped:\(drop.message)"
            case .unhandled: return "unhandled"
            case .poolResized: return "resized"
            }
        }
        #expect(kinds == ["spawned", "failed", "stop by guardian", "stopped", "dead:3"])
        #expect(postStops.values == ["postStop"])
    }

    @Test func setupThrowing_failsTheActor() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(Behavior<Int>.setup { _ in throw Boom() }, name: "bad-start")
        scheduler.advance()
        #expect(events.values.contains { if case .failed = $0 { return true } else { return false } })
        #expect(ref.tell(1) == .dropped(.recipientTerminated))
    }
}
