import Foundation
import Testing
@testable import Mailbox

/// Issue #14, ask edge cases, on virtual time: a time-out that cannot be honoured is refused
/// before anything is sent; a reply that nobody awaits any more (after the time-out, a second
/// one, after cancellation) is a dead letter; an ask no actor is left to answer fails.
@Suite("Ask edge cases")
struct AskEdgeCaseTests {
    enum Question: Sendable {
        case get(replyTo: ActorRef<Int>)
        case twice(replyTo: ActorRef<Int>)
        case keep(replyTo: ActorRef<Int>)
    }

    /// Answers `get` with 42, `twice` with 1 then 2, and keeps the reply ref of `keep` in
    /// `kept` without answering. Records every question it handles.
    func answerer(handled: Inbox<String>, kept: LockedValueBox<ActorRef<Int>?> = LockedValueBox(nil)) -> Behavior<Question> {
        .receiveMessage { message in
            switch message {
            case let .get(replyTo):
                handled.record("get")
                replyTo.tell(42)
            case let .twice(replyTo):
                handled.record("twice")
                replyTo.tell(1)
                replyTo.tell(2)
            case let .keep(replyTo):
                handled.record("keep")
                kept.withLockedValue { $0 = replyTo }
            }
            return .same
        }
    }

    /// Suspends (yielding, never blocking a thread) until `condition` holds, for at most 60
    /// seconds of real time (generous: ThreadSanitizer and a shared machine slow everything).
    func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            if Date() > deadline { return false }
            await Task.yield()
        }
        return true
    }

    /// Runs what is due on `scheduler` until the answerer has handled `expected` (the asking
    /// task sends its question on its own thread, at a moment the test does not control).
    func deliver(_ expected: [String], to handled: Inbox<String>, on scheduler: TestScheduler) async -> Bool {
        await eventually {
            scheduler.runDue()
            return handled.values == expected
        }
    }

    func lateReplies(_ events: Inbox<ActorSystemEvent>) -> [Int] {
        events.values.compactMap { event in
            guard case let .deadLetter(letter) = event, letter.reason == .lateReply else { return nil }
            return letter.message as? Int
        }
    }

    // MARK: Time-outs that cannot be honoured

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-5)])
    func askWithANonPositiveTimeout_isRejectedBeforeAnythingIsSent(_ timeout: Duration) async throws {
        let (system, scheduler) = makeTestSystem()
        let handled = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        scheduler.runDue()
        let pendingBefore = scheduler.pendingActionCount
        let made = LockedValueBox(false)
        let error = await #expect(throws: AskError.self) {
            try await target.ask(timeout: timeout) { replyTo -> Question in
                made.withLockedValue { $0 = true }
                return .get(replyTo: replyTo)
            }
        }
        #expect(error?.code == .invalidTimeout)
        #expect(error?.description == "ask to /user/target with Question not sent: its time-out (\(timeout)) must be positive")
        // Nothing was made, sent, scheduled or registered: no work for an answer nobody reads.
        #expect(made.withLockedValue { $0 } == false)
        #expect(scheduler.pendingActionCount == pendingBefore)
        #expect(system.pendingAsks.count == 0)
        scheduler.advance(by: .seconds(10))
        #expect(handled.values.isEmpty)
    }

    @Test func contextAskWithAZeroTimeout_deliversInvalidTimeoutAsAMessage_withoutSending() throws {
        enum Asker: Sendable {
            case start
            case answer(Result<Int, any Error>)
        }
        let (system, scheduler) = makeTestSystem()
        let handled = Inbox<String>()
        let outcomes = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        let asker = try system.spawn(Behavior<Asker>.receive { context, message in
            switch message {
            case .start:
                context.ask(target, timeout: .zero, { Question.get(replyTo: $0) }, map: Asker.answer)
            case let .answer(.success(value)):
                outcomes.record("reply \(value)")
            case let .answer(.failure(error)):
                outcomes.record("\((error as? AskError)?.code.description ?? "\(error)")")
            }
            return .same
        }, name: "asker")
        asker.tell(.start)
        scheduler.runDue()
        #expect(outcomes.values == ["invalidTimeout"])
        #expect(handled.values.isEmpty)
    }

    @Test func askProducerWithANegativeTimeout_failsTheRunWithoutSending() throws {
        let (system, scheduler) = makeTestSystem()
        let handled = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        let results = Inbox<String>()
        target.askProducer(timeout: .seconds(-1)) { Question.get(replyTo: $0) }.startWithResult { result in
            switch result {
            case let .success(value): results.record("value \(value)")
            case let .failure(error): results.record(error.code.description)
            }
        }
        scheduler.advance(by: .seconds(5))
        #expect(results.values == ["invalidTimeout"])
        #expect(handled.values.isEmpty)
    }

    @Test func storeDispatchAndWaitWithAZeroTimeout_doesNotReduceTheInput() async throws {
        let (system, scheduler) = makeTestSystem()
        let store = try Store<Int, Int>(system: system, name: "store", initialState: 0) { state, input in state + input }
        scheduler.runDue()
        let error = await #expect(throws: AskError.self) { try await store.dispatchAndWait(5, timeout: .zero) }
        #expect(error?.code == .invalidTimeout)
        scheduler.runDue()
        #expect(store.state.value == 0)
    }

    // MARK: Replies nobody awaits

    /// Kept from before this work: an ask to a terminated actor fails at once, without waiting
    /// for its time-out on the virtual clock.
    @Test func askToATerminatedActor_failsAtOnce_withoutWaitingForTheTimeout() async throws {
        let (system, scheduler) = makeTestSystem()
        let target = try system.spawn(Behavior<Question>.stopped, name: "gone")
        scheduler.runDue()
        let error = await #expect(throws: AskError.self) {
            try await target.ask(timeout: .seconds(3600)) { Question.get(replyTo: $0) }
        }
        #expect(error?.code == .notDelivered)
        #expect(error?.deliveryFailure == .recipientTerminated)
        #expect(system.pendingAsks.count == 0)
    }

    @Test func replyAfterTheTimeout_isADeadLetter_onVirtualTime() async throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let handled = Inbox<String>()
        let kept = LockedValueBox<ActorRef<Int>?>(nil)
        let target = try system.spawn(answerer(handled: handled, kept: kept), name: "target")
        let task = Task { try await target.ask(timeout: .seconds(3)) { Question.keep(replyTo: $0) } }
        #expect(await deliver(["keep"], to: handled, on: scheduler))
        scheduler.advance(by: .milliseconds(2_999))
        #expect(system.pendingAsks.count == 1)
        scheduler.advance(by: .milliseconds(1))
        let error = await #expect(throws: AskError.self) { try await task.value }
        #expect(error?.code == .timedOut)
        let late = try #require(kept.withLockedValue { $0 })
        #expect(late.tell(7) == .dropped(.lateReply))
        #expect(lateReplies(events) == [7])
        #expect(system.pendingAsks.count == 0)
    }

    @Test func secondReply_isADeadLetter_theFirstIsTheAnswer() async throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let handled = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        let task = Task { try await target.ask(timeout: .seconds(3)) { Question.twice(replyTo: $0) } }
        #expect(await deliver(["twice"], to: handled, on: scheduler))
        #expect(try await task.value == 1)
        #expect(lateReplies(events) == [2])
        // The time-out was cancelled with the answer: nothing fires later.
        scheduler.advance(by: .seconds(10))
        #expect(system.deadLetterCount == 1)
    }

    @Test func cancellingTheAwaitingTask_throwsCancellationError_andTheLateReplyIsADeadLetter() async throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let handled = Inbox<String>()
        let kept = LockedValueBox<ActorRef<Int>?>(nil)
        let target = try system.spawn(answerer(handled: handled, kept: kept), name: "target")
        let task = Task { try await target.ask(timeout: .seconds(3)) { Question.keep(replyTo: $0) } }
        #expect(await deliver(["keep"], to: handled, on: scheduler))
        #expect(system.pendingAsks.count == 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(system.pendingAsks.count == 0)
        let late = try #require(kept.withLockedValue { $0 })
        #expect(late.tell(9) == .dropped(.lateReply))
        #expect(lateReplies(events) == [9])
        // The time-out was cancelled: it reports nothing later.
        scheduler.advance(by: .seconds(10))
        #expect(system.deadLetterCount == 1)
    }

    @Test func askFromAnAlreadyCancelledTask_sendsNothing() async throws {
        let (system, scheduler) = makeTestSystem()
        let handled = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await target.ask(timeout: .seconds(3)) { Question.get(replyTo: $0) }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        scheduler.advance(by: .seconds(10))
        #expect(handled.values.isEmpty)
    }

    // MARK: No actor left to answer

    @Test func askInFlightAtShutdown_failsWithSystemShutDown_onVirtualTime() async throws {
        let (system, scheduler) = makeTestSystem()
        let handled = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        let task = Task { try await target.ask(timeout: .seconds(3600)) { Question.keep(replyTo: $0) } }
        #expect(await deliver(["keep"], to: handled, on: scheduler))
        system.beginShutdown()
        scheduler.runDue()
        let report = await system.shutdown()
        #expect(report.isClean)
        #expect(report.asksFailed == 1)
        let error = await #expect(throws: AskError.self) { try await task.value }
        #expect(error?.code == .systemShutDown)
        #expect(error?.description == "ask to /user/target with Question failed: the actor system shut down before a reply came")
    }

    @Test func askAfterShutdown_failsAtOnce() async throws {
        let (system, scheduler) = makeTestSystem()
        let handled = Inbox<String>()
        let target = try system.spawn(answerer(handled: handled), name: "target")
        system.beginShutdown()
        scheduler.runDue()
        _ = await system.shutdown()
        let error = await #expect(throws: AskError.self) {
            try await target.ask(timeout: .seconds(3600)) { Question.get(replyTo: $0) }
        }
        #expect(error?.code == .systemShutDown)
        #expect(handled.values.isEmpty)
    }
}
