import Foundation
import Testing
@testable import Mailbox

/// An escalated failure names the child it came from; every supervision decision says how many
/// restarts its window holds.
@Suite("Supervision: escalation and restart counts")
struct EscalationAndRestartCountTests {
    let log = Inbox<String>()
    let events = Inbox<ActorSystemEvent>()

    func failures(of name: String) -> [any Error] {
        events.values.compactMap { event in
            if case let .failed(address, error) = event, address.name == name { return error }
            return nil
        }
    }

    func decided(_ name: String) -> [SupervisionDecision] {
        events.values.compactMap { event in
            if case let .supervised(decision) = event, decision.actor.name == name { return decision }
            return nil
        }
    }

    // MARK: Escalation names the child

    @Test func unhandledEscalation_failsTheParentWithAnErrorNamingTheChildAndTheCause() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let childRefs = Inbox<ActorRef<WorkerMessage>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            childRefs.record(try context.spawn(.supervise(worker(log)).onFailure(.escalate), name: "child"))
            return .ignore
        }, name: "parent")
        scheduler.runDue()
        childRefs.values[0].tell(.fail)
        scheduler.runDue()
        let failure = try #require(failures(of: "parent").first as? ChildFailedError)
        #expect(failure.child == AnyActorRef(childRefs.values[0].target))
        #expect(failure.child.path == "/user/parent/child")
        #expect(failure.cause as? Boom == Boom())
        #expect("\(failure)".contains("/user/parent/child"))
        #expect("\(failure)".contains("boom"))
    }

    @Test func escalationThroughTwoLevels_nestsTheChildren() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let grandchildren = Inbox<ActorRef<WorkerMessage>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            try context.spawn(Behavior<Int>.supervise(.setup { context in
                grandchildren.record(try context.spawn(.supervise(worker(log)).onFailure(.escalate), name: "grandchild"))
                return .ignore
            }).onFailure(.escalate), name: "child")
            return .ignore
        }, name: "parent")
        scheduler.runDue()
        grandchildren.values[0].tell(.fail)
        scheduler.runDue()
        let outer = try #require(failures(of: "parent").first as? ChildFailedError)
        #expect(outer.child.path == "/user/parent/child")
        let inner = try #require(outer.cause as? ChildFailedError)
        #expect(inner.child.path == "/user/parent/child/grandchild")
        #expect(inner.cause is Boom)
    }

    // MARK: Restart counts

    @Test func decisions_carryTheRestartsInTheCurrentWindow() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(.restart(limit: 2, within: .seconds(10))), name: "w")
        ref.tell(.fail)                          // t = 0: restart 1
        scheduler.advance(by: .seconds(1))
        ref.tell(.fail)                          // t = 1: restart 2
        scheduler.advance(by: .seconds(10))
        ref.tell(.fail)                          // t = 11: the first left the window: restart 2
        scheduler.runDue()
        ref.tell(.fail)                          // t = 11: 3 > 2, refused: stop, 2 in the window
        scheduler.runDue()
        #expect(decided("w").map { "\($0.directive) \($0.restartCount)" } == ["restart 1", "restart 2", "restart 2", "stop 2"])
    }

    @Test func decisionsWithoutRestarts_reportZero_andResumeKeepsTheCount() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(
            SupervisorStrategy.restart(limit: 5, within: .seconds(10)).deciding { $0 is Boom ? .restart : .resume }), name: "w")
        ref.tell(.failOther)
        ref.tell(.fail)
        ref.tell(.failOther)
        scheduler.runDue()
        #expect(decided("w").map { "\($0.directive) \($0.restartCount)" } == ["resume 0", "restart 1", "resume 1"])
        let plain = try system.spawn(worker(log), name: "plain")
        plain.tell(.fail)
        scheduler.runDue()
        #expect(decided("plain").map { "\($0.directive) \($0.restartCount)" } == ["stop 0"])
    }

    @Test func backoffDecisions_countConsecutiveRestartsUntilTheReset() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let ref = try system.spawn(.supervise(worker(log)).onFailure(
            SupervisorStrategy.restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .seconds(1), randomFactor: 0)
                .withResetBackoffAfter(.seconds(5))), name: "w")
        for _ in 0..<3 {
            ref.tell(.fail)
            scheduler.advance(by: .seconds(2))
        }
        scheduler.advance(by: .seconds(5))
        ref.tell(.fail)
        scheduler.advance(by: .seconds(2))
        #expect(decided("w").map(\.restartCount) == [1, 2, 3, 1])
    }

    @Test func oneForOneSupervisorChildren_reportTheSupervisorsWindow() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let supervisor = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: 3, period: .seconds(60), children: [
            ChildSpec(id: "a", treeWorker("a", log)),
            ChildSpec(id: "b", treeWorker("b", log)),
        ]), name: "sup")
        scheduler.runDue()
        try child("a", of: supervisor, system, scheduler).tell(.fail)
        scheduler.runDue()
        try child("b", of: supervisor, system, scheduler).tell(.fail)
        scheduler.runDue()
        #expect((decided("a") + decided("b")).map { "\($0.actor.name) \($0.directive) \($0.restartCount)" } == ["a restart 1", "b restart 2"])
    }

    @Test func logRecords_sayTheRestartCount() throws {
        let lines = Inbox<String>()
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "logged", configuration: .init(scheduler: scheduler, logHandler: { lines.record($0) }))
        let ref = try system.spawn(.supervise(worker(log)).onFailure(.restart(limit: 3, within: .seconds(10))), name: "w")
        ref.tell(.fail)
        ref.tell(.fail)
        scheduler.runDue()
        #expect(lines.values.count == 2)
        #expect(lines.values.last?.contains("restart 2 of 3 in 10.0 seconds") == true)
        #expect(SupervisionDecision(
            actor: ref.address, error: Boom(), message: nil, directive: .restart, decider: .actor, backoff: nil, restartCount: 2
        ).description.contains("restart 2"))
    }
}
