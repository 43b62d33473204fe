import Testing
@testable import Mailbox

/// Replies to each question with how many it has been asked so far; or holds the reply ref
/// until `.release`.
private enum Counting: Sendable {
    case next(replyTo: ActorRef<Int>)
    case hold(replyTo: ActorRef<Int>)
    case release
}

private func counting() -> Behavior<Counting> {
    .setup { _ in
        var asked = 0
        var held: [ActorRef<Int>] = []
        return .receiveMessage { message in
            switch message {
            case let .next(replyTo):
                asked += 1
                replyTo.tell(asked)
            case let .hold(replyTo):
                asked += 1
                held.append(replyTo)
            case .release:
                for ref in held { ref.tell(asked) }
                held = []
            }
            return .same
        }
    }
}

@Suite("Bridges: ask as a producer, and Action(asking:)")
struct AskProducerAndActionTests {
    @Test func eachStartAsksAgain() throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(counting(), name: "counter")
        let producer = ref.askProducer(timeout: .seconds(1)) { Counting.next(replyTo: $0) }
        scheduler.runDue()                     // nothing is asked before a start
        let first = EventRecorder<Int, AskError>()
        let second = EventRecorder<Int, AskError>()
        producer.start { first.record($0) }
        producer.start { second.record($0) }
        scheduler.runDue()
        #expect(first.values == [1])
        #expect(second.values == [2])
        #expect(first.events.last?.isCompleted == true)
        #expect(second.events.last?.isCompleted == true)
    }

    @Test func timeOut_failsTheRun_onVirtualTime() throws {
        let (system, scheduler) = makeTestSystem()
        let silent = try system.spawn(Behavior<Counting>.ignore, name: "silent")
        let events = EventRecorder<Int, AskError>()
        silent.askProducer(timeout: .seconds(2)) { Counting.next(replyTo: $0) }.start { events.record($0) }
        scheduler.advance(by: .milliseconds(1_999))
        #expect(events.events.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        guard case let .failed(error)? = events.events.last else {
            Issue.record("expected a failure, got \(events.events)")
            return
        }
        #expect(error.code == .timedOut)
        #expect(error.target == silent.address)
        #expect("\(error)" == "ask to /user/silent with Counting timed out after 2.0 seconds")
    }

    @Test func disposing_stopsWaiting_andTheLateReplyIsADeadLetter() throws {
        let (system, scheduler) = makeTestSystem()
        let letters = Inbox<DeadLetter.Reason>()
        system.deadLetters.observeValues { letters.record($0.reason) }
        let ref = try system.spawn(counting(), name: "counter")
        let events = EventRecorder<Int, AskError>()
        let run = ref.askProducer(timeout: .seconds(5)) { Counting.hold(replyTo: $0) }.start { events.record($0) }
        scheduler.runDue()
        run.dispose()
        #expect(events.events.count == 1)
        #expect(events.events.last?.isInterruption == true)
        ref.tell(.release)
        scheduler.advance(by: .seconds(10))    // and the cancelled time-out never fires
        #expect(events.events.count == 1)
        #expect(letters.values == [.lateReply])
    }

    @Test func askingATerminatedActor_failsAtOnceAsNotDelivered() throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(Behavior<Counting>.receiveMessage { _ in .stopped }, name: "gone")
        ref.tell(.release)
        scheduler.runDue()
        let events = EventRecorder<Int, AskError>()
        ref.askProducer(timeout: .seconds(1)) { Counting.next(replyTo: $0) }.start { events.record($0) }
        guard case let .failed(error)? = events.events.last else {
            Issue.record("expected a failure, got \(events.events)")
            return
        }
        #expect(error.code == .notDelivered)
    }

    @Test func action_asksTheActor_andIsDisabledWhileExecuting() throws {
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(counting(), name: "counter")
        let action = Action<Int, Int, AskError>(asking: ref, timeout: .seconds(1)) { _, replyTo in .hold(replyTo: replyTo) }
        let values = Inbox<Int>()
        action.values.observeValues { values.record($0) }
        let first = EventRecorder<Int, ActionError<AskError>>()
        action.apply(1).start { first.record($0) }
        #expect(action.isExecuting.value)
        #expect(!action.isEnabled.value)
        let second = EventRecorder<Int, ActionError<AskError>>()
        action.apply(2).start { second.record($0) }
        #expect(second.events.first.map { "\($0)" } == "\(Event<Int, ActionError<AskError>>.failed(.disabled))")
        scheduler.runDue()
        ref.tell(.release)
        scheduler.runDue()
        #expect(first.values == [1])
        #expect(values.values == [1])
        #expect(!action.isExecuting.value)
        #expect(action.isEnabled.value)
    }

    @Test func action_isDisabledWhileEnabledIfIsFalse_andFailsWithTheAskError() throws {
        let (system, scheduler) = makeTestSystem()
        let silent = try system.spawn(Behavior<Counting>.ignore, name: "silent")
        let online = MutableProperty(false)
        let action = Action<Int, Int, AskError>(asking: silent, timeout: .seconds(1), enabledIf: online) { _, replyTo in .next(replyTo: replyTo) }
        #expect(!action.isEnabled.value)
        let refused = EventRecorder<Int, ActionError<AskError>>()
        action.apply(1).start { refused.record($0) }
        guard case .failed(.disabled)? = refused.events.last else {
            Issue.record("expected .disabled, got \(refused.events)")
            return
        }
        online.value = true
        let timedOut = EventRecorder<Int, ActionError<AskError>>()
        action.apply(1).start { timedOut.record($0) }
        scheduler.advance(by: .seconds(1))
        guard case let .failed(.producerFailed(error))? = timedOut.events.last else {
            Issue.record("expected a time-out, got \(timedOut.events)")
            return
        }
        #expect(error.code == .timedOut)
        #expect(action.isEnabled.value)
    }

    @Test func asyncAsk_andAskProducer_agree() async throws {
        let system = ActorSystem(name: "asks", configuration: .init(logHandler: nil))
        let ref = try system.spawn(counting(), name: "counter")
        let viaAsync = try await ref.ask(timeout: .seconds(10)) { Counting.next(replyTo: $0) }
        let viaProducer = try await ref.askProducer(timeout: .seconds(10)) { Counting.next(replyTo: $0) }.first()
        #expect(viaAsync == 1)
        #expect(viaProducer == 2)
        await system.shutdown()
    }
}
