import Foundation
import Testing
@testable import Mailbox

struct Boom: Error, Equatable, CustomStringConvertible {
    var tag = "boom"
    var description: String { tag }
}

struct OtherFailure: Error {}

enum WorkerMessage: Sendable, Equatable {
    case value(Int)
    case fail
    case failOther
}

/// A worker whose state (`generation`, how many values it saw) shows whether it restarted:
/// records "setup <gen>", "<gen>:<value>#<seen>", lifecycle events.
func worker(_ log: Inbox<String>, setups: Counter = Counter()) -> Behavior<WorkerMessage> {
    .setup { _ in
        let generation = setups.increment()
        log.record("setup \(generation)")
        var seen = 0
        return Behavior<WorkerMessage>.receiveMessage { message in
            switch message {
            case let .value(value):
                seen += 1
                log.record("\(generation):\(value)#\(seen)")
            case .fail:
                throw Boom()
            case .failOther:
                throw OtherFailure()
            }
            return .same
        }.receiveLifecycle { _, event in
            switch event {
            case .preRestart: log.record("preRestart \(generation)")
            case .postStop: log.record("postStop \(generation)")
            default: return .unhandled
            }
            return .same
        }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = LockedValueBox(0)
    @discardableResult
    func increment() -> Int { value.withLockedValue { $0 += 1; return $0 } }
    var count: Int { value.withLockedValue { $0 } }
}

func decisions(_ events: Inbox<ActorSystemEvent>) -> [String] {
    events.values.compactMap { event in
        guard case let .supervised(decision) = event else { return nil }
        return "\(decision.actor.name) \(decision.directive) by \(decision.decider)"
    }
}

func deadLetters(_ events: Inbox<ActorSystemEvent>) -> [DeadLetter] {
    events.values.compactMap { event in
        if case let .deadLetter(letter) = event { return letter }
        return nil
    }
}

@Suite("Supervision: directives")
struct SupervisionDirectiveTests {
    @Test func restart_rebuildsStateFromSetup_keepsQueuedMessagesInOrder_dropsTheFailingOne() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(.restart), name: "w")
        for message: WorkerMessage in [.value(1), .value(2), .fail, .value(3), .value(4)] {
            ref.tell(message)
        }
        scheduler.runDue()
        #expect(log.values == ["setup 1", "1:1#1", "1:2#2", "preRestart 1", "setup 2", "2:3#1", "2:4#2"])
        #expect(decisions(events) == ["w restart by actor"])
        // The failing message is reported with the decision, never dead-lettered or retried.
        let decision = events.values.compactMap { event -> SupervisionDecision? in
            if case let .supervised(decision) = event { return decision }
            return nil
        }.first
        #expect(decision?.message as? WorkerMessage == .fail)
        #expect(decision?.error as? Boom == Boom())
        #expect(deadLetters(events).isEmpty)
        #expect(ref.tell(.value(5)) == .enqueued)
    }

    @Test func resume_keepsTheState_andDropsTheFailingMessage() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(.resume), name: "w")
        for message: WorkerMessage in [.value(1), .fail, .value(2)] { ref.tell(message) }
        scheduler.runDue()
        #expect(log.values == ["setup 1", "1:1#1", "1:2#2"])
        #expect(decisions(events) == ["w resume by actor"])
    }

    @Test func stop_stopsTheActor_andQueuedMessagesBecomeDeadLetters() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(.stop), name: "w")
        for message: WorkerMessage in [.fail, .value(1)] { ref.tell(message) }
        scheduler.runDue()
        #expect(log.values == ["setup 1", "postStop 1"])
        #expect(deadLetters(events).map { $0.message as? WorkerMessage } == [.value(1)])
        #expect(ref.tell(.value(2)) == .dropped(.recipientTerminated))
    }

    @Test func perErrorType_theInnermostMatchingRuleDecides() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let behavior: Behavior<WorkerMessage> = .supervise(
            .supervise(worker(log)).onFailure(of: Boom.self, .resume)
        ).onFailure(.restart)
        let ref = try system.spawn(behavior, name: "w")
        for message: WorkerMessage in [.value(1), .fail, .value(2), .failOther, .value(3), .fail, .value(4)] {
            ref.tell(message)
        }
        scheduler.runDue()
        // Boom resumes (state kept); OtherFailure restarts, and the inner rule comes back with
        // the rebuilt behavior, so the second Boom resumes again.
        #expect(log.values == ["setup 1", "1:1#1", "1:2#2", "preRestart 1", "setup 2", "2:3#1", "2:4#2"])
        #expect(decisions(events) == ["w resume by actor", "w restart by actor", "w resume by actor"])
    }

    @Test func unmatchedErrorType_fallsBackToTheDefault_stop() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let ref = try system.spawn(.supervise(worker(log)).onFailure(of: Boom.self, .restart), name: "w")
        ref.tell(.failOther)
        scheduler.runDue()
        #expect(log.values == ["setup 1", "postStop 1"])
    }

    @Test func decider_choosesPerError() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(decide: { error in
            error is Boom ? .restart : .stop
        }), name: "w")
        for message: WorkerMessage in [.fail, .value(1), .failOther, .value(2)] { ref.tell(message) }
        scheduler.runDue()
        #expect(log.values == ["setup 1", "preRestart 1", "setup 2", "2:1#1", "postStop 2"])
        #expect(decisions(events) == ["w restart by actor", "w stop by actor"])
    }

    @Test func restart_cancelsTimers_andStopsChildrenBeforeTheNewSetup() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let setups = Counter()
        let ref = try system.spawn(Behavior<WorkerMessage>.supervise(.setup { context in
            let generation = setups.increment()
            try context.spawn(Behavior<Int>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                if case .postStop = event { log.record("child of \(generation) stopped") }
                return .same
            }, name: "child")
            context.timers.startSingleTimer(key: "tick", message: .value(generation * 100), delay: .seconds(1))
            log.record("setup \(generation) children \(context.childRefs.count)")
            return .receiveMessage { message in
                if case .fail = message { throw Boom() }
                if case let .value(value) = message { log.record("\(generation):\(value)") }
                return .same
            }
        }).onFailure(.restart), name: "parent")
        scheduler.runDue()
        ref.tell(.fail)
        scheduler.runDue()
        // The new setup could spawn "child" again: the old one had stopped first.
        #expect(log.values == ["setup 1 children 1", "child of 1 stopped", "setup 2 children 1"])
        scheduler.advance(by: .seconds(1))
        // Only the new incarnation's timer fires.
        #expect(log.values.last == "2:200")
        #expect(log.values.filter { $0 == "1:100" }.isEmpty)
    }

    @Test func restart_keepingChildren_leavesThemRunning() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let setups = Counter()
        let ref = try system.spawn(Behavior<WorkerMessage>.supervise(.setup { context in
            let generation = setups.increment()
            if context.child(named: "child") == nil {
                try context.spawn(Behavior<Int>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                    if case .postStop = event { log.record("child stopped") }
                    return .same
                }, name: "child")
            }
            log.record("setup \(generation) children \(context.childRefs.count)")
            return .receiveMessage { message in
                if case .fail = message { throw Boom() }
                return .same
            }
        }).onFailure(SupervisorStrategy.restart.keepingChildren()), name: "parent")
        ref.tell(.fail)
        scheduler.runDue()
        #expect(log.values == ["setup 1 children 1", "setup 2 children 1"])
    }

    @Test func restart_keepsStashedMessages_handledFirstByTheNewState() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let setups = Counter()
        let ref = try system.spawn(Behavior<WorkerMessage>.supervise(.setup { context in
            let generation = setups.increment()
            return .receiveMessage { message in
                switch message {
                case let .value(value):
                    if generation == 1 {
                        try context.stash(message)
                    } else {
                        log.record("\(generation):\(value)")
                    }
                case .fail: throw Boom()
                case .failOther: break
                }
                return .same
            }
        }).onFailure(.restart), name: "stasher")
        for message: WorkerMessage in [.value(1), .value(2), .fail, .value(3)] { ref.tell(message) }
        scheduler.runDue()
        #expect(log.values == ["2:1", "2:2", "2:3"])
    }

    @Test func escalate_parentReceivesChildFailed_andCanHandleIt() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let childRef = Inbox<ActorRef<WorkerMessage>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            childRef.record(try context.spawn(.supervise(worker(log)).onFailure(.escalate), name: "child"))
            return Behavior<Int>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                if case let .childFailed(ref, error) = event {
                    log.record("parent: \(ref.address.name) failed with \(error)")
                    return .same
                }
                return .unhandled
            }
        }, name: "parent")
        scheduler.runDue()
        childRef.values[0].tell(.fail)
        scheduler.runDue()
        #expect(log.values == ["setup 1", "postStop 1", "parent: child failed with boom"])
    }

    @Test func escalate_unhandled_failsTheParentWithChildFailedError() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let childRef = Inbox<ActorRef<WorkerMessage>>()
        let parentSetups = Counter()
        _ = try system.spawn(Behavior<Int>.supervise(.setup { context in
            parentSetups.increment()
            childRef.record(try context.spawn(.supervise(worker(log)).onFailure(.escalate), name: "child"))
            return .receiveMessage { _ in .same }
        }).onFailure(of: ChildFailedError.self, .restart), name: "parent")
        scheduler.runDue()
        childRef.values[0].tell(.fail)
        scheduler.runDue()
        // The parent fails with a `ChildFailedError` (naming the child, carrying the Boom):
        // its rule for those restarts it, and so its subtree.
        #expect(parentSetups.count == 2)
        #expect(decisions(events) == ["child escalate by actor", "parent restart by actor"])
        #expect(childRef.values.count == 2)
        #expect(childRef.values[1].tell(.value(1)) == .enqueued)
    }

    @Test func failureInSetupDuringRestart_countsAgainstTheLimit() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let setups = Counter()
        let ref = try system.spawn(Behavior<WorkerMessage>.supervise(.setup { _ in
            if setups.increment() > 1 { throw Boom(tag: "setup") }
            return .receiveMessage { _ in throw Boom() }
        }).onFailure(.restart(limit: 3, within: .seconds(10))), name: "w")
        ref.tell(.fail)
        scheduler.runDue()
        // 1 failure in a handler, then 3 failing restarts are allowed; the 4th restart is not.
        #expect(setups.count == 4)
        #expect(decisions(events) == ["w restart by actor", "w restart by actor", "w restart by actor", "w stop by actor"])
        #expect(ref.tell(.value(1)) == .dropped(.recipientTerminated))
    }

    @Test func failureInSetupDuringUnlimitedRestart_stopsInsteadOfLooping() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let setups = Counter()
        let ref = try system.spawn(Behavior<WorkerMessage>.supervise(.setup { _ in
            if setups.increment() > 1 { throw Boom(tag: "setup") }
            return .receiveMessage { _ in throw Boom() }
        }).onFailure(.restart), name: "w")
        ref.tell(.fail)
        scheduler.runDue()
        #expect(setups.count == 2)
        #expect(decisions(events) == ["w restart by actor", "w stop by actor"])
    }

    @Test func watchedActorTerminatingDuringARestart_isDeliveredToTheNewState() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let other = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "other")
        let setups = Counter()
        let ref = try system.spawn(Behavior<WorkerMessage>.supervise(.setup { context in
            let generation = setups.increment()
            if generation == 1 { context.watch(other) }
            // A child, so the restart waits for it to stop.
            try context.spawn(Behavior<Int>.ignore, name: "child")
            return Behavior<WorkerMessage>.receiveMessage { message in
                if case .fail = message { throw Boom() }
                return .same
            }.receiveLifecycle { _, event in
                if case let .terminated(ref) = event { log.record("\(generation) saw \(ref.address.name) terminate") }
                return .same
            }
        }).onFailure(.restart), name: "watcher")
        scheduler.runDue()
        ref.tell(.fail)
        other.tell(1)
        scheduler.runDue()
        #expect(log.values == ["2 saw other terminate"])
    }
}

@Suite("Supervision: limits and back-off")
struct SupervisionLimitTests {
    @Test func restartLimit_isASlidingWindow() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(.restart(limit: 2, within: .seconds(10))), name: "w")
        // t=0 and t=1: restarts 1 and 2.
        ref.tell(.fail)
        scheduler.runDue()
        scheduler.advance(by: .seconds(1))
        ref.tell(.fail)
        scheduler.runDue()
        // t=11: the restart at t=0 left the window [1, 11]; t=1 is still in it: 2 restarts.
        scheduler.advance(by: .seconds(10))
        ref.tell(.fail)
        scheduler.runDue()
        #expect(decisions(events) == ["w restart by actor", "w restart by actor", "w restart by actor"])
        // t=11 again: the window [1, 11] holds t=1, t=11 and this one: 3 > 2.
        ref.tell(.fail)
        scheduler.runDue()
        #expect(decisions(events).last == "w stop by actor")
        #expect(ref.tell(.value(1)) == .dropped(.recipientTerminated))
    }

    @Test func restartLimit_boundaryIsInclusive_likeOTP() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(Inbox())).onFailure(.restart(limit: 1, within: .seconds(5))), name: "w")
        ref.tell(.fail)
        scheduler.runDue()
        // Exactly `within` later the first restart still counts (t >= now - 5).
        scheduler.advance(by: .seconds(5))
        ref.tell(.fail)
        scheduler.runDue()
        #expect(decisions(events) == ["w restart by actor", "w stop by actor"])
    }

    @Test func limitExceeded_canEscalate() throws {
        let log = Inbox<String>()
        let (system, scheduler) = makeTestSystem()
        let childRef = Inbox<ActorRef<WorkerMessage>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            childRef.record(try context.spawn(
                .supervise(worker(log)).onFailure(.restart(limit: 1, within: .seconds(60), whenExceeded: .escalate)),
                name: "child"))
            return Behavior<Int>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                if case let .childFailed(ref, _) = event { log.record("escalated by \(ref.address.name)") }
                return .same
            }
        }, name: "parent")
        scheduler.runDue()
        childRef.values[0].tell(.fail)
        childRef.values[0].tell(.fail)
        scheduler.runDue()
        #expect(log.values == ["setup 1", "preRestart 1", "setup 2", "postStop 2", "escalated by child"])
    }

    @Test func backoff_delaysDoubleUpToTheMaximum_andMessagesWaitInOrder() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let strategy = SupervisorStrategy.restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .milliseconds(300), randomFactor: 0)
            .withResetBackoffAfter(.seconds(60))
        let ref = try system.spawn(.supervise(worker(log)).onFailure(strategy), name: "w")
        var delays: [Duration] = []
        for round in 1...4 {
            ref.tell(.fail)
            ref.tell(.value(round))
            scheduler.runDue()
            let backoff = events.values.compactMap { event -> Duration? in
                if case let .supervised(decision) = event { return decision.backoff }
                return nil
            }.last!
            delays.append(backoff)
            // Not restarted before the delay; the message waits.
            scheduler.advance(by: backoff - .milliseconds(1))
            #expect(log.values.last != "\(round + 1):\(round)#1")
            scheduler.advance(by: .milliseconds(1))
            #expect(log.values.last == "\(round + 1):\(round)#1")
        }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(300), .milliseconds(300)])
    }

    @Test func backoff_resetsAfterAStablePeriod() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let strategy = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(8), randomFactor: 0)
            .withResetBackoffAfter(.seconds(30))
        let ref = try system.spawn(.supervise(worker(Inbox())).onFailure(strategy), name: "w")
        func failAndWait() -> Duration {
            ref.tell(.fail)
            scheduler.runDue()
            let delay = events.values.compactMap { event -> Duration? in
                if case let .supervised(decision) = event { return decision.backoff }
                return nil
            }.last!
            scheduler.advance(by: delay)
            return delay
        }
        #expect(failAndWait() == .seconds(1))
        #expect(failAndWait() == .seconds(2))
        scheduler.advance(by: .seconds(30))
        #expect(failAndWait() == .seconds(1))
    }

    @Test func backoff_randomFactorStaysWithinBounds_andReplaysFromTheSeed() throws {
        func delays(seed: UInt64) throws -> [Duration] {
            let scheduler = TestScheduler()
            let system = ActorSystem(name: "jitter", configuration: .init(scheduler: scheduler, logHandler: nil, randomSeed: seed))
            let events = Inbox<ActorSystemEvent>()
            system.events.observeValues { events.record($0) }
            let strategy = SupervisorStrategy.restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .seconds(1), randomFactor: 0.5)
                .withResetBackoffAfter(.seconds(60))
            let ref = try system.spawn(.supervise(worker(Inbox())).onFailure(strategy), name: "w")
            for _ in 0..<6 {
                ref.tell(.fail)
                scheduler.advance(by: .seconds(2))
            }
            return events.values.compactMap { event -> Duration? in
                if case let .supervised(decision) = event { return decision.backoff }
                return nil
            }
        }
        let first = try delays(seed: 42)
        #expect(first.count == 6)
        #expect(try delays(seed: 42) == first)
        #expect(try delays(seed: 43) != first)
        for (index, delay) in first.enumerated() {
            let base = min(0.1 * pow(2, Double(index)), 1.0)
            #expect(delay.timeInterval >= base - 1e-9 && delay.timeInterval <= base * 1.5 + 1e-9, "delay \(index): \(delay)")
        }
    }

    @Test func backoff_stashIsBounded_overflowIsDropped() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let strategy = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(1), randomFactor: 0)
            .withStashCapacity(2)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(strategy), name: "w")
        ref.tell(.fail)
        for value in 1...4 { ref.tell(.value(value)) }
        scheduler.runDue()
        let dropped = events.values.compactMap { event -> Dropped? in
            if case let .dropped(drop) = event { return drop }
            return nil
        }
        #expect(dropped.map { $0.message as? WorkerMessage } == [.value(3), .value(4)])
        #expect(dropped.allSatisfy { $0.reason == .backoffStashFull })
        #expect(deadLetters(events).isEmpty)
        #expect(system.droppedCount == 2)
        scheduler.advance(by: .seconds(1))
        #expect(log.values == ["setup 1", "preRestart 1", "setup 2", "2:1#1", "2:2#2"])
    }

    @Test func backoff_withMaxRestarts_givesUp() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let strategy = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(1), randomFactor: 0)
            .withMaxRestarts(2)
        let ref = try system.spawn(.supervise(worker(Inbox())).onFailure(strategy), name: "w")
        for _ in 0..<3 {
            ref.tell(.fail)
            scheduler.advance(by: .seconds(1))
        }
        #expect(decisions(events) == ["w restart by actor", "w restart by actor", "w stop by actor"])
    }

    @Test func stopDuringBackoff_cancelsTheRestart_andKeptMessagesBecomeDeadLetters() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let strategy = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(1), randomFactor: 0)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(strategy), name: "w")
        ref.tell(.fail)
        ref.tell(.value(1))
        scheduler.runDue()
        system.beginShutdown()
        scheduler.runDue()
        #expect(deadLetters(events).map { $0.message as? WorkerMessage } == [.value(1)])
        scheduler.advance(by: .seconds(5))
        #expect(!log.values.contains("setup 2"))
        #expect(scheduler.pendingActionCount == 0)
    }
}

@Suite("Supervision: guardian strategy")
struct GuardianStrategyTests {
    @Test func defaultGuardian_stopsAFailingTopLevelActor_andTheSystemGoesOn() async throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let failing = try system.spawn(worker(Inbox()), name: "failing")
        let healthy = try system.spawn(worker(Inbox()), name: "healthy")
        failing.tell(.fail)
        scheduler.runDue()
        #expect(decisions(events) == ["failing stop by guardian"])
        #expect(healthy.tell(.value(1)) == .enqueued)
        #expect(!system.isShuttingDown)
    }

    @Test func guardianRestart_restartsTopLevelActorsWithoutRules() throws {
        let log = Inbox<String>()
        let events = Inbox<ActorSystemEvent>()
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "g", configuration: .init(
            scheduler: scheduler, logHandler: nil, guardianStrategy: .restart(limit: 1, within: .seconds(60))))
        system.events.observeValues { events.record($0) }
        let ref = try system.spawn(worker(log), name: "w")
        for message: WorkerMessage in [.fail, .value(1), .fail, .value(2)] { ref.tell(message) }
        scheduler.runDue()
        #expect(log.values == ["setup 1", "preRestart 1", "setup 2", "2:1#1", "postStop 2"])
        #expect(decisions(events) == ["w restart by guardian", "w stop by guardian"])
    }

    @Test func guardianEscalate_shutsTheSystemDown() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "g", configuration: .init(scheduler: scheduler, logHandler: nil, guardianStrategy: .escalate))
        let other = try system.spawn(worker(Inbox()), name: "other")
        let ref = try system.spawn(worker(Inbox()), name: "w")
        ref.tell(.fail)
        scheduler.runDue()
        #expect(system.isShuttingDown)
        #expect(other.tell(.value(1)) == .dropped(.recipientTerminated))
    }

    @Test func topLevelEscalate_goesToTheGuardianStrategy() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(Inbox())).onFailure(.escalate), name: "w")
        ref.tell(.fail)
        scheduler.runDue()
        #expect(decisions(events) == ["w stop by guardian"])
    }
}
