import Testing
@testable import Mailbox

@Suite("Ask, timers, stash, adapters, pipeToSelf")
struct AskAndTimerTests {
    enum CounterMessage: Sendable {
        case increment
        case get(replyTo: ActorRef<Int>)
        case ignoreQuestion(replyTo: ActorRef<Int>)
    }

    func counter() -> Behavior<CounterMessage> {
        .setup { _ in
            var count = 0
            return .receiveMessage { message in
                switch message {
                case .increment: count += 1
                case let .get(replyTo): replyTo.tell(count)
                case .ignoreQuestion: break
                }
                return .same
            }
        }
    }

    @Test func ask_returnsTheReply() async throws {
        let system = ActorSystem(name: "ask", configuration: .init(logHandler: nil))
        let counter = try system.spawn(counter(), name: "counter")
        counter.tell(.increment)
        counter.tell(.increment)
        let count = try await counter.ask(timeout: .seconds(10)) { .get(replyTo: $0) }
        #expect(count == 2)
        _ = await system.shutdown()
    }

    @Test func askTimeout_onVirtualTime_namesTargetTypeAndTimeout_lateReplyIsDeadLetter() async throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let stash = LockedValueBox<ActorRef<Int>?>(nil)
        let silent = try system.spawn(Behavior<CounterMessage>.receiveMessage { message in
            if case let .ignoreQuestion(replyTo) = message { stash.withLockedValue { $0 = replyTo } }
            return .same
        }, name: "silent")
        let task = Task { try await silent.ask(timeout: .seconds(3)) { CounterMessage.ignoreQuestion(replyTo: $0) } }
        // Explicit synchronisation, bounded (generously: the asking task may wait for a thread
        // of the cooperative pool): run what is due until the question has arrived (the task
        // sends it at a moment of its own, after arming the time-out).
        let deadline = ContinuousClock.now + .seconds(60)
        while stash.withLockedValue({ $0 }) == nil, ContinuousClock.now < deadline {
            scheduler.runDue()
            await Task.yield()
        }
        try #require(stash.withLockedValue { $0 } != nil)
        scheduler.advance(by: .seconds(2))
        scheduler.advance(by: .seconds(1))
        let error = await #expect(throws: AskError.self) { try await task.value }
        #expect(error?.code == .timedOut)
        #expect(error?.description.contains("/user/silent") == true)
        #expect(error?.description.contains("CounterMessage") == true)
        #expect(error?.description.contains("3.0 seconds") == true)
        let late = try #require(stash.withLockedValue { $0 })
        #expect(late.tell(42) == .dropped(.lateReply))
        #expect(events.values.contains { event in
            if case let .deadLetter(letter) = event { return letter.reason == .lateReply && letter.message as? Int == 42 }
            return false
        })
    }

    @Test func askToTerminatedActor_failsAtOnceAsNotDelivered() async throws {
        let (system, scheduler) = makeTestSystem()
        let target = try system.spawn(Behavior<CounterMessage>.receiveMessage { _ in .stopped }, name: "gone")
        target.tell(.increment)
        scheduler.runDue()
        let error = await #expect(throws: AskError.self) {
            try await target.ask(timeout: .seconds(1)) { CounterMessage.get(replyTo: $0) }
        }
        #expect(error?.code == .notDelivered)
    }

    enum AskerMessage: Sendable {
        case start(ActorRef<CounterMessage>)
        case answer(Result<Int, any Error>)
    }

    @Test func contextAsk_deliversReplyOrTimeoutAsAMessage() throws {
        let (system, scheduler) = makeTestSystem()
        let outcomes = Inbox<String>()
        let counter = try system.spawn(counter(), name: "counter")
        let silent = try system.spawn(Behavior<CounterMessage>.ignore, name: "silent")
        let asker = try system.spawn(Behavior<AskerMessage>.receive { context, message in
            switch message {
            case let .start(target):
                context.ask(target, timeout: .seconds(1), { CounterMessage.get(replyTo: $0) }, map: AskerMessage.answer)
            case let .answer(.success(value)):
                outcomes.record("reply \(value)")
            case let .answer(.failure(error)):
                outcomes.record("failure \((error as? AskError)?.code.description ?? "?")")
            }
            return .same
        }, name: "asker")
        counter.tell(.increment)
        asker.tell(.start(counter))
        asker.tell(.start(silent))
        scheduler.runDue()
        #expect(outcomes.values == ["reply 1"])
        scheduler.advance(by: .seconds(1))
        #expect(outcomes.values == ["reply 1", "failure timedOut"])
    }

    enum TimerMessage: Sendable, Equatable {
        case single, tick, cancel(String), stop
    }

    func timerActor(_ seen: Inbox<String>, setup: @escaping (TimerScheduler<TimerMessage>) -> Void) -> Behavior<TimerMessage> {
        .setup { context in
            setup(context.timers)
            return .receive { context, message in
                seen.record("\(message)@\(context.scheduler.currentDate.timeIntervalSinceReferenceDate)")
                switch message {
                case let .cancel(key): context.timers.cancel(key: TimerKey(key))
                case .stop: return .stopped
                default: break
                }
                return .same
            }
        }
    }

    @Test func singleTimer_firesOnceAfterTheDelay() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        _ = try system.spawn(timerActor(seen) { $0.startSingleTimer(key: "once", message: .single, delay: .seconds(5)) }, name: "t")
        scheduler.runDue()
        scheduler.advance(by: .seconds(4))
        #expect(seen.values.isEmpty)
        scheduler.advance(by: .seconds(1))
        scheduler.advance(by: .seconds(100))
        #expect(seen.values == ["single@5.0"])
    }

    @Test func fixedRateAndFixedDelayTimers_onVirtualTime() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        _ = try system.spawn(timerActor(seen) { $0.startTimerAtFixedRate(key: "rate", message: .tick, interval: .seconds(2)) }, name: "rate")
        let delayed = Inbox<String>()
        _ = try system.spawn(timerActor(delayed) { $0.startTimerWithFixedDelay(key: "delay", message: .tick, delay: .seconds(3)) }, name: "delay")
        scheduler.runDue()
        scheduler.advance(by: .seconds(10))
        #expect(seen.values == ["tick@2.0", "tick@4.0", "tick@6.0", "tick@8.0", "tick@10.0"])
        #expect(delayed.values == ["tick@3.0", "tick@6.0", "tick@9.0"])
    }

    @Test func cancelledTimer_neverDelivers_evenIfItsMessageIsQueued() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let ref = try system.spawn(timerActor(seen) { timers in
            timers.startSingleTimer(key: "a", message: .single, delay: .seconds(1))
            timers.startTimerAtFixedRate(key: "b", message: .tick, interval: .seconds(1))
        }, name: "t")
        scheduler.runDue()
        // Both timers fire at t=1; the cancel arrives first in the mailbox.
        ref.tell(.cancel("a"))
        ref.tell(.cancel("b"))
        scheduler.advance(by: .seconds(5))
        #expect(seen.values == ["cancel(\"a\")@0.0", "cancel(\"b\")@0.0"])
    }

    @Test func timersAreCancelledOnStop() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let ref = try system.spawn(timerActor(seen) { $0.startTimerAtFixedRate(key: "rate", message: .tick, interval: .seconds(1)) }, name: "t")
        scheduler.runDue()
        scheduler.advance(by: .seconds(2))
        ref.tell(.stop)
        scheduler.runDue()
        scheduler.advance(by: .seconds(10))
        #expect(seen.values == ["tick@1.0", "tick@2.0", "stop@2.0"])
    }

    enum StashMessage: Sendable {
        case open
        case item(Int)
    }

    @Test func stashAndUnstashAll_keepOrder() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<Int>()
        func closed() -> Behavior<StashMessage> {
            .receive { context, message in
                switch message {
                case .open:
                    return context.unstashAll(open())
                case .item:
                    try context.stash(message)
                    return .same
                }
            }
        }
        func open() -> Behavior<StashMessage> {
            .receiveMessage { message in
                if case let .item(value) = message { seen.record(value) }
                return .same
            }
        }
        let ref = try system.spawn(closed(), name: "gate")
        for value in 1...3 { ref.tell(.item(value)) }
        ref.tell(.open)
        ref.tell(.item(4))
        scheduler.runDue()
        #expect(seen.values == [1, 2, 3, 4])
    }

    @Test func stashOverflow_isAFailure() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(Behavior<Int>.receive { context, message in
            try context.stash(message)
            return .same
        }, name: "hoarder", props: Props(stashCapacity: 2))
        for value in 1...3 { ref.tell(value) }
        scheduler.runDue()
        let failures = events.values.compactMap { event -> StashOverflowError? in
            if case let .failed(_, error) = event { return error as? StashOverflowError }
            return nil
        }
        #expect(failures.count == 1)
        #expect(failures.first?.capacity == 2)
    }

    @Test func messageAdapter_convertsAndForwards() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let adapters = LockedValueBox<ActorRef<Int>?>(nil)
        _ = try system.spawn(Behavior<String>.setup { context in
            adapters.withLockedValue { $0 = context.messageAdapter { (value: Int) in "number \(value)" } }
            return recording(seen)
        }, name: "owner")
        scheduler.runDue()
        let adapter = adapters.withLockedValue { $0 }!
        adapter.tell(7)
        scheduler.runDue()
        #expect(seen.values == ["number 7"])
        #expect(adapter.path.hasPrefix("/user/owner/$adapter"))
    }

    @Test func pipeToSelf_returnsTheResultAsAMessage() async throws {
        let system = ActorSystem(name: "pipe", configuration: .init(logHandler: nil))
        let seen = Inbox<String>()
        let ref = try system.spawn(Behavior<String>.receive { context, message in
            if message == "go" {
                context.pipeToSelf({ 21 * 2 }, map: { result in "result \((try? result.get()) ?? -1)" })
            } else {
                seen.record(message)
            }
            return .same
        }, name: "piper")
        ref.tell("go")
        #expect(await seen.waitForCount(1))
        #expect(seen.values == ["result 42"])
    }
}
