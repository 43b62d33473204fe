import Foundation
import Testing
@testable import Mailbox

/// Issue #14, the containment audit (`docs/Robustness.md`): a misused API inside an actor is a
/// failure of that actor (handled by its supervision) or an error thrown to the caller, never a
/// trap that takes the process down. Each test also shows that another actor carries on.
@Suite("Containment: a misbehaving actor never takes the process down")
struct ContainmentTests {
    enum Probe: Sendable {
        case ping(replyTo: ActorRef<String>)
        case fail
        case tick
    }

    /// An actor that answers `ping` with "pong": the bystander whose answer shows that the
    /// rest of the system carries on.
    func bystander() -> Behavior<Probe> {
        .receiveMessage { message in
            if case let .ping(replyTo) = message { replyTo.tell("pong") }
            return .same
        }
    }

    /// Pings `ref` and runs the scheduler; the answer, if one came.
    func ping(_ ref: ActorRef<Probe>, on scheduler: TestScheduler, system: ActorSystem) throws -> String? {
        let answers = Inbox<String>()
        let replyTo = try system.spawnAnonymous(recording(answers))
        ref.tell(.ping(replyTo: replyTo))
        scheduler.runDue()
        return answers.values.first
    }

    /// The `ActorSystemError`s published as failures of the actor at `path`.
    func failures(_ events: Inbox<ActorSystemEvent>, of path: String) -> [ActorSystemError] {
        events.values.compactMap { event in
            guard case let .failed(address, error) = event, address.path == path else { return nil }
            return error as? ActorSystemError
        }
    }

    func stopped(_ events: Inbox<ActorSystemEvent>, _ path: String) -> Bool {
        events.values.contains { event in
            if case let .stopped(address) = event { return address.path == path }
            return false
        }
    }

    // MARK: Behaviors an actor cannot start with

    @Test(arguments: ["same", "unhandled", "supervised same"])
    func spawnWithSameOrUnhandled_throwsInvalidBehavior_namingTheActorAndTheBehavior(_ kind: String) throws {
        let (system, scheduler) = makeTestSystem()
        let other = try system.spawn(bystander(), name: "other")
        func behavior() -> Behavior<Probe> {
            switch kind {
            case "same": .same
            case "unhandled": .unhandled
            default: .supervise(.same).onFailure(.restart)
            }
        }
        let error = #expect(throws: ActorSystemError.self) { try system.spawn(behavior(), name: "x") }
        #expect(error?.code == .invalidBehavior)
        #expect(error?.description.contains("/user/x") == true)
        #expect(error?.description.contains(kind == "unhandled" ? "Behavior.unhandled" : "Behavior.same") == true)
        // Nothing was registered under the name, and everyone else carries on.
        #expect(system.topLevelActors.map(\.path) == ["/user/other"])
        _ = try system.spawn(bystander(), name: "x")
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    @Test func childSpawnedWithSame_throwsInsideTheParent_whichCanCatchIt() throws {
        let (system, scheduler) = makeTestSystem()
        let outcome = Inbox<String>()
        _ = try system.spawn(Behavior<Probe>.setup { context in
            do {
                try context.spawn(Behavior<Int>.same, name: "child")
                outcome.record("spawned")
            } catch let error as ActorSystemError {
                outcome.record("\(error.code): \(error)")
            }
            return .ignore
        }, name: "parent")
        scheduler.runDue()
        #expect(outcome.values == ["invalidBehavior: /user/parent/child was spawned with Behavior.same, which is only valid as the result of handling a message"])
    }

    @Test func setupReturningSame_isAFailureOfThatActor_thatStopsIt_othersCarryOn() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let other = try system.spawn(bystander(), name: "other")
        let broken = try system.spawn(Behavior<Probe>.setup { _ in .same }, name: "x")
        scheduler.runDue()
        let failures = failures(events, of: "/user/x")
        #expect(failures.map(\.code) == [.invalidBehavior])
        #expect(failures.first?.description == "setup of /user/x returned Behavior.same, which is only valid as the result of handling a message")
        #expect(stopped(events, "/user/x"))
        #expect(broken.tell(.tick) == .dropped(.recipientTerminated))
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    /// The case: a `setup` that returns `.unhandled` on one branch of a restart. The
    /// actor's supervision sees the failure (a failing `setup` is not restarted without limit:
    /// it stops), and the process carries on.
    @Test func setupReturningUnhandledOnARestart_isSeenBySupervision() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let other = try system.spawn(bystander(), name: "other")
        let starts = LockedValueBox(0)
        let flaky = try system.spawn(Behavior<Probe>.supervise(.setup { _ in
            let start = starts.withLockedValue { count -> Int in
                count += 1
                return count
            }
            if start == 2 { return .unhandled }
            return .receiveMessage { message in
                if case .fail = message { throw TestFailure() }
                return .same
            }
        }).onFailure(.restart), name: "flaky")
        scheduler.runDue()
        flaky.tell(.fail)
        scheduler.runDue()
        #expect(starts.withLockedValue { $0 } == 2)
        let decisions = events.values.compactMap { event -> SupervisionDecision? in
            if case let .supervised(decision) = event { return decision }
            return nil
        }
        #expect(decisions.map(\.directive) == [.restart, .stop])
        #expect((decisions.last?.error as? ActorSystemError)?.code == .invalidBehavior)
        #expect(stopped(events, "/user/flaky"))
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    // MARK: What a handler switches to

    @Test func handlerReturningSetupThatReturnsSame_isAFailure_notACrash() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let other = try system.spawn(bystander(), name: "other")
        let actor = try system.spawn(Behavior<Probe>.receiveMessage { _ in .setup { _ in .same } }, name: "x")
        actor.tell(.tick)
        scheduler.runDue()
        #expect(failures(events, of: "/user/x").map(\.code) == [.invalidBehavior])
        #expect(stopped(events, "/user/x"))
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    /// A handler that returns `.setup { _ in .stopped }` stops the actor. (It used to install
    /// `.stopped` as the running behavior and trap on the next message.)
    @Test func handlerReturningSetupThatReturnsStopped_stopsTheActor() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let postStops = Inbox<String>()
        let actor = try system.spawn(Behavior<Probe>.receiveMessage { _ in
            .setup { _ in .stopped { postStops.record("post-stop") } }
        }, name: "x")
        actor.tell(.tick)
        actor.tell(.tick)
        scheduler.runDue()
        #expect(stopped(events, "/user/x"))
        #expect(postStops.values == ["post-stop"])
        #expect(failures(events, of: "/user/x").isEmpty)
        #expect(system.deadLetterCount == 1)
    }

    // MARK: receiveLifecycle on a behavior that has no receive

    @Test func receiveLifecycleOnANonReceiveBehavior_failsTheActorAtStart() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let other = try system.spawn(bystander(), name: "other")
        _ = try system.spawn(Behavior<Probe>.ignore.receiveLifecycle { _, _ in .same }, name: "x")
        scheduler.runDue()
        let failures = failures(events, of: "/user/x")
        #expect(failures.map(\.code) == [.invalidBehavior])
        #expect(failures.first?.description == "/user/x: receiveLifecycle(_:) applies to a receive behavior, not Behavior.ignore")
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    @Test func receiveLifecycleOnASetup_appliesToTheBehaviorTheSetupReturns() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let actor = try system.spawn(Behavior<Probe>.setup { _ in
            .receiveMessage { _ in .stopped }
        }.receiveLifecycle { _, event in
            seen.record("\(event)")
            return .same
        }, name: "x")
        actor.tell(.tick)
        scheduler.runDue()
        #expect(seen.values == ["postStop"])
    }

    // MARK: Props

    @Test(arguments: [0, -5])
    func spawnWithABoundedMailboxOfNoCapacity_throwsInvalidProps(_ capacity: Int) throws {
        let (system, scheduler) = makeTestSystem()
        let other = try system.spawn(bystander(), name: "other")
        let error = #expect(throws: ActorSystemError.self) {
            try system.spawn(Behavior<Probe>.ignore, name: "x", props: Props(mailbox: .bounded(capacity: capacity, overflow: .dropNewest)))
        }
        #expect(error?.code == .invalidProps)
        #expect(error?.description == "cannot spawn /user/x: a bounded mailbox needs a positive capacity, not \(capacity)")
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    // MARK: Timers

    /// A repeating timer without a positive interval (in whole nanoseconds, the schedulers'
    /// resolution) would fire without end at one instant (`advance` would never return). It
    /// is refused: the actor fails after the handler returns, and the virtual clock moves on.
    @Test(arguments: [
        ("fixed rate", Duration.zero), ("fixed delay", .seconds(-1)),
        // Half a nanosecond: positive, but zero to the schedulers (the fixed-rate timer trapped
        // in the scheduler's own precondition).
        ("fixed rate", Duration(secondsComponent: 0, attosecondsComponent: 500_000_000)),
        ("fixed delay", Duration(secondsComponent: 0, attosecondsComponent: 500_000_000)),
    ])
    func repeatingTimerWithoutAPositiveInterval_failsTheActor_andTimeMovesOn(_ mode: String, _ interval: Duration) throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let other = try system.spawn(bystander(), name: "other")
        let handled = Inbox<String>()
        let actor = try system.spawn(Behavior<Probe>.receive { context, message in
            handled.record("\(message)")
            if case .fail = message {
                if mode == "fixed rate" {
                    context.timers.startTimerAtFixedRate(key: "t", message: .tick, interval: interval)
                } else {
                    context.timers.startTimerWithFixedDelay(key: "t", message: .tick, delay: interval)
                }
                handled.record("handler went on")
                #expect(!context.timers.isTimerActive(key: "t"))
            }
            return .same
        }, name: "x")
        actor.tell(.fail)
        actor.tell(.tick)
        scheduler.advance(by: .seconds(5))
        // The handler finished; the failure came before the next message (which is a dead
        // letter: the actor stopped).
        #expect(handled.values == ["fail", "handler went on"])
        let failures = failures(events, of: "/user/x")
        #expect(failures.map(\.code) == [.invalidTimer])
        #expect(failures.first?.description.hasPrefix("/user/x: timer t: a fixed-") == true)
        #expect(stopped(events, "/user/x"))
        #expect(try ping(other, on: scheduler, system: system) == "pong")
    }

    /// A failed timer under a restart rule: the actor is restarted, like for a thrown error.
    @Test func invalidTimerUnderARestartRule_restartsTheActor() throws {
        let (system, scheduler) = makeTestSystem()
        let starts = Inbox<String>()
        let actor = try system.spawn(Behavior<Probe>.supervise(.setup { _ in
            starts.record("start")
            return .receive { context, message in
                if case .fail = message {
                    context.timers.startTimerAtFixedRate(key: "t", message: .tick, interval: .zero)
                }
                return .same
            }
        }).onFailure(.restart), name: "x")
        actor.tell(.fail)
        scheduler.advance(by: .seconds(1))
        #expect(starts.values == ["start", "start"])
        #expect(actor.tell(.tick) == .enqueued)
    }

    /// A timer refused in `setup` fails the start as a throw from `setup` does: a limited
    /// restart rule runs `setup` again (an unlimited immediate one would stop the actor, as for
    /// a throwing `setup`), and the message queued behind the start waits for the new
    /// state instead of reaching a half-started actor.
    @Test func invalidTimerInSetup_failsTheStart_beforeAnyMessageIsHandled() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let attempts = Inbox<Int>()
        let actor = try system.spawn(Behavior<Probe>.supervise(.setup { context in
            attempts.record(1)
            if attempts.values.count == 1 {
                context.timers.startTimerAtFixedRate(key: "t", message: .tick, interval: .zero)
                log.record("setup went on")
            }
            let attempt = attempts.values.count
            return .receive { _, message in
                log.record("attempt \(attempt) handled \(message)")
                return .same
            }
        }).onFailure(.restart(limit: 3, within: .seconds(10))), name: "x")
        actor.tell(.tick)
        scheduler.advance(by: .seconds(1))
        #expect(attempts.values.count == 2)
        #expect(log.values == ["setup went on", "attempt 2 handled tick"])
    }

    // MARK: Time-outs too long to represent

    /// An ask whose time-out does not fit the wall clock's deadline (`.seconds(Int64.max)`)
    /// used to trap converting it to a Dispatch deadline on the pool and queue schedulers.
    @Test func askWithAnEnormousTimeout_onThePool_answersInsteadOfTrapping() async throws {
        let system = ActorSystem(name: "enormous", configuration: .init(logHandler: nil))
        let echo = try system.spawn(Behavior<Probe>.receiveMessage { message in
            if case let .ping(replyTo) = message { replyTo.tell("pong") }
            return .same
        }, name: "echo")
        let answer = try await echo.ask(timeout: .seconds(Int64.max)) { Probe.ping(replyTo: $0) }
        #expect(answer == "pong")
        let report = await system.shutdown()
        #expect(report.isClean)
    }

    @Test func timerWithAnEnormousDelay_onAQueueScheduler_isArmedWithoutTrapping() async throws {
        let system = ActorSystem(name: "enormous-timer", configuration: .init(scheduler: QueueScheduler(name: "enormous"), logHandler: nil))
        let armed = AsyncGate()
        let actor = try system.spawn(Behavior<Probe>.setup { context in
            context.timers.startSingleTimer(key: "never", message: .tick, delay: .seconds(Int64.max))
            context.timers.startTimerAtFixedRate(key: "rarely", message: .tick, interval: .seconds(Int64.max / 2))
            armed.open(context.timers.isTimerActive(key: "never") && context.timers.isTimerActive(key: "rarely"))
            return .ignore
        }, name: "x")
        #expect(await armed.wait())
        _ = actor
        let report = await system.shutdown()
        #expect(report.isClean)
    }
}

struct TestFailure: Error, Equatable {}
