import Foundation
import Testing
@testable import Mailbox

/// OTP's dynamic children: `start_child`, `terminate_child`, `restart_child`, `delete_child`,
/// `which_children`, `count_children`, as `SupervisorMessage`s.
@Suite("Supervision: dynamic Supervisor children")
struct DynamicChildrenTests {
    let log = Inbox<String>()
    let events = Inbox<ActorSystemEvent>()

    func start(_ strategy: Supervisor.RestartScope = .oneForOne, intensity: Int = 5) throws
        -> (ActorSystem, TestScheduler, ActorRef<SupervisorMessage>) {
        let (system, scheduler) = makeTestSystem(events: events)
        let supervisor = try system.spawn(Supervisor.behavior(strategy: strategy, intensity: intensity, period: .seconds(60), children: [
            ChildSpec(id: "a", treeWorker("a", log)),
        ]), name: "sup")
        scheduler.runDue()
        return (system, scheduler, supervisor)
    }

    /// Tells `supervisor` the message made with a recording reply ref, runs what is due, and
    /// returns the replies.
    func ask<Reply: Sendable>(
        _ supervisor: ActorRef<SupervisorMessage>, _ system: ActorSystem, _ scheduler: TestScheduler,
        _ message: (ActorRef<Reply>) -> SupervisorMessage
    ) throws -> [Reply] {
        let replies = Inbox<Reply>()
        supervisor.tell(message(try system.spawnAnonymous(recording(replies))))
        scheduler.runDue()
        return replies.values
    }

    func describe(_ result: Result<AnyActorRef, SupervisorError>) -> String {
        switch result {
        case let .success(ref): return "ok \(ref.path)"
        case let .failure(error): return "\(error.code)"
        }
    }

    func describe(_ result: Result<Void, SupervisorError>) -> String {
        switch result {
        case .success: return "ok"
        case let .failure(error): return "\(error.code)"
        }
    }

    func ids(_ supervisor: ActorRef<SupervisorMessage>, _ system: ActorSystem, _ scheduler: TestScheduler) throws -> [String] {
        try children(of: supervisor, system, scheduler).map { "\($0.id)\($0.ref == nil ? " (not running)" : "")" }
    }

    // MARK: start_child

    @Test func startChild_startsAfterTheOthers_andSupervisesItLikeAStaticChild() throws {
        let (system, scheduler, supervisor) = try start()
        let replies = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "b", treeWorker("b", log)), replyTo: $0) }
        #expect(replies.map(describe) == ["ok /user/sup/b"])
        #expect(try ids(supervisor, system, scheduler) == ["a", "b"])
        let b = try child("b", of: supervisor, system, scheduler)
        b.tell(.value(1)); b.tell(.fail); b.tell(.value(2))
        scheduler.runDue()
        #expect(log.values == ["a setup 1", "b setup 1", "b 1:1", "b preRestart 1", "b setup 2", "b 2:2"])
        #expect(try child("b", of: supervisor, system, scheduler) == b)   // restarted in place
    }

    @Test func startChild_withATakenId_isAlreadyStartedOrAlreadyPresent() throws {
        let (system, scheduler, supervisor) = try start()
        _ = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "t", restart: .transient, treeWorker("t", log)), replyTo: $0) }
        try child("t", of: supervisor, system, scheduler).tell(.failOther)   // stops normally: kept, not running
        scheduler.runDue()
        let running = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "a", treeWorker("a", log)), replyTo: $0) }
        let present = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "t", treeWorker("t", log)), replyTo: $0) }
        #expect(running.map(describe) == ["alreadyStarted"])
        if case let .failure(error)? = running.first {
            #expect(error.child?.path == "/user/sup/a")
        }
        #expect(present.map(describe) == ["alreadyPresent"])
        #expect(log.values.filter { $0.hasSuffix("setup 2") }.isEmpty)
    }

    @Test func startChild_whoseSetupFails_isAnErrorAndTheSpecIsDiscarded() throws {
        let (system, scheduler, supervisor) = try start(intensity: 0)
        let replies = try ask(supervisor, system, scheduler) {
            .startChild(ChildSpec(id: "bad") { Behavior<WorkerMessage>.setup { _ in throw Boom(tag: "no db") } }, replyTo: $0)
        }
        #expect(replies.map(describe) == ["startFailed"])
        if case let .failure(error)? = replies.first {
            #expect(error.underlying is Boom)
            #expect("\(error)".contains("no db"))
        }
        #expect(try ids(supervisor, system, scheduler) == ["a"])
        // Not a restart: the supervisor (intensity 0) is still running, and "bad" is free again.
        let again = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "bad", treeWorker("bad", log)), replyTo: $0) }
        #expect(again.map(describe) == ["ok /user/sup/bad"])
    }

    @Test func startChild_whoseSpecCannotSpawn_isAnError_andTheSupervisorRunsOn() throws {
        let (system, scheduler, supervisor) = try start()
        let replies = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "no spaces", treeWorker("x", log)), replyTo: $0) }
        #expect(replies.map(describe) == ["startFailed"])
        #expect(try ids(supervisor, system, scheduler) == ["a"])
    }

    // MARK: terminate_child, restart_child, delete_child

    @Test func terminateChild_stopsItForGood_keepingTheSpec_andRestartChildStartsItAgain() throws {
        let (system, scheduler, supervisor) = try start()
        let a = try child("a", of: supervisor, system, scheduler)
        let terminated = try ask(supervisor, system, scheduler) { .terminateChild(id: "a", replyTo: $0) }
        #expect(terminated.map(describe) == ["ok"])
        #expect(log.values == ["a setup 1", "a postStop 1"])   // permanent, yet not restarted
        #expect(a.tell(.value(1)) == .dropped(.recipientTerminated))
        #expect(try ids(supervisor, system, scheduler) == ["a (not running)"])
        #expect(try ask(supervisor, system, scheduler) { .terminateChild(id: "a", replyTo: $0) }.map(describe) == ["ok"])

        let restarted = try ask(supervisor, system, scheduler) { .restartChild(id: "a", replyTo: $0) }
        #expect(restarted.map(describe) == ["ok /user/sup/a"])
        #expect(log.values.last == "a setup 2")
        let newA = try child("a", of: supervisor, system, scheduler)
        #expect(newA != a)
        #expect(try ask(supervisor, system, scheduler) { .restartChild(id: "a", replyTo: $0) }.map(describe) == ["running"])
    }

    @Test func terminateChild_ofATemporaryChild_deletesItsSpec() throws {
        let (system, scheduler, supervisor) = try start()
        _ = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "tmp", restart: .temporary, treeWorker("tmp", log)), replyTo: $0) }
        #expect(try ask(supervisor, system, scheduler) { .terminateChild(id: "tmp", replyTo: $0) }.map(describe) == ["ok"])
        #expect(try ids(supervisor, system, scheduler) == ["a"])
    }

    @Test func unknownIds_areNotFound() throws {
        let (system, scheduler, supervisor) = try start()
        #expect(try ask(supervisor, system, scheduler) { .terminateChild(id: "x", replyTo: $0) }.map(describe) == ["notFound"])
        #expect(try ask(supervisor, system, scheduler) { .restartChild(id: "x", replyTo: $0) }.map(describe) == ["notFound"])
        #expect(try ask(supervisor, system, scheduler) { .deleteChild(id: "x", replyTo: $0) }.map(describe) == ["notFound"])
    }

    @Test func deleteChild_refusesARunningChild_andForgetsAStoppedOne() throws {
        let (system, scheduler, supervisor) = try start()
        #expect(try ask(supervisor, system, scheduler) { .deleteChild(id: "a", replyTo: $0) }.map(describe) == ["running"])
        _ = try ask(supervisor, system, scheduler) { .terminateChild(id: "a", replyTo: $0) }
        #expect(try ask(supervisor, system, scheduler) { .deleteChild(id: "a", replyTo: $0) }.map(describe) == ["ok"])
        #expect(try ids(supervisor, system, scheduler) == [])
        #expect(try ask(supervisor, system, scheduler) { .restartChild(id: "a", replyTo: $0) }.map(describe) == ["notFound"])
    }

    // MARK: which_children, count_children

    @Test func countChildren_countsSpecsActiveSupervisorsAndWorkers() throws {
        let (system, scheduler, supervisor) = try start()
        _ = try ask(supervisor, system, scheduler) {
            .startChild(ChildSpec(id: "team") { Supervisor.behavior(strategy: .oneForOne, children: [ChildSpec(id: "x", treeWorker("x", log))]) }, replyTo: $0)
        }
        _ = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "b", treeWorker("b", log)), replyTo: $0) }
        _ = try ask(supervisor, system, scheduler) { .terminateChild(id: "b", replyTo: $0) }
        let counts = try #require(try ask(supervisor, system, scheduler) { .countChildren(replyTo: $0) }.first)
        #expect(counts == SupervisorChildCount(specs: 3, active: 2, supervisors: 1, workers: 2))
        #expect(try children(of: supervisor, system, scheduler).map(\.type) == [.worker, .supervisor, .worker])
    }

    @Test func questionsWaitForAStartInProgress() throws {
        let (system, scheduler, supervisor) = try start()
        let starts = Inbox<Result<AnyActorRef, SupervisorError>>()
        let lists = Inbox<[SupervisedChild]>()
        // Both told before the supervisor runs: the list is answered once "b" has started.
        supervisor.tell(.startChild(ChildSpec(id: "b", treeWorker("b", log)), replyTo: try system.spawnAnonymous(recording(starts))))
        supervisor.tell(.whichChildren(replyTo: try system.spawnAnonymous(recording(lists))))
        scheduler.runDue()
        #expect(starts.values.map(describe) == ["ok /user/sup/b"])
        #expect(lists.values.first?.map(\.id) == ["a", "b"])
        #expect(lists.values.first?.allSatisfy { $0.ref != nil } == true)
    }

    // MARK: Supervised like static children, lost on the supervisor's restart

    @Test func dynamicChildren_countAgainstTheIntensity_andStopNewestFirstWithTheSupervisor() throws {
        let (system, scheduler, supervisor) = try start(intensity: 1)
        _ = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "b", treeWorker("b", log)), replyTo: $0) }
        _ = try ask(supervisor, system, scheduler) { .startChild(ChildSpec(id: "c", treeWorker("c", log)), replyTo: $0) }
        let b = try child("b", of: supervisor, system, scheduler)
        b.tell(.fail)
        scheduler.runDue()
        b.tell(.fail)   // the second restart in the period: one too many
        scheduler.runDue()
        #expect(log.values.suffix(3) == ["c postStop 1", "b postStop 2", "a postStop 1"])
        #expect(supervisor.tell(.whichChildren(replyTo: try system.spawnAnonymous(Behavior<[SupervisedChild]>.ignore))) == .dropped(.recipientTerminated))
    }

    @Test func dynamicChildren_areLost_whenTheSupervisorItselfRestarts() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let root = try system.spawn(Supervisor.behavior(strategy: .allForOne, children: [
            ChildSpec(id: "inner") { Supervisor.behavior(strategy: .oneForOne, children: [ChildSpec(id: "x", treeWorker("x", log))]) },
            ChildSpec(id: "z", treeWorker("z", log)),
        ]), name: "root")
        scheduler.runDue()
        let inner = try #require(try children(of: root, system, scheduler).first?.ref?.typed(as: SupervisorMessage.self))
        _ = try ask(inner, system, scheduler) { .startChild(ChildSpec(id: "extra", treeWorker("extra", log)), replyTo: $0) }
        #expect(try ids(inner, system, scheduler) == ["x", "extra"])
        try child("z", of: root, system, scheduler).tell(.fail)   // all-for-one: inner restarts (in place)
        scheduler.runDue()
        #expect(log.values.contains("extra postStop 1"))
        #expect(try ids(inner, system, scheduler) == ["x"])
        #expect(!log.values.contains("extra setup 2"))
    }

    // MARK: The async API

    @Test func asyncHelpers_askTheSupervisor() async throws {
        let system = ActorSystem(name: "dynamic", configuration: .init(logHandler: nil))
        let supervisor = try system.spawn(Supervisor.behavior(strategy: .oneForOne, children: []), name: "sup")
        let timeout = Duration.seconds(20)
        let b = try await supervisor.startChild(ChildSpec(id: "b") { Behavior<Int>.ignore }, timeout: timeout)
        #expect(b.path == "/user/sup/b")
        await #expect(throws: SupervisorError.self) {
            _ = try await supervisor.startChild(ChildSpec(id: "b") { Behavior<Int>.ignore }, timeout: timeout)
        }
        #expect(try await supervisor.countChildren(timeout: timeout) == SupervisorChildCount(specs: 1, active: 1, supervisors: 0, workers: 1))
        try await supervisor.terminateChild(id: "b", timeout: timeout)
        #expect(try await supervisor.whichChildren(timeout: timeout).map { $0.ref == nil } == [true])
        let again = try await supervisor.restartChild(id: "b", timeout: timeout)
        #expect(again != b)
        do {
            try await supervisor.deleteChild(id: "b", timeout: timeout)
            Issue.record("deleting a running child succeeded")
        } catch let error as SupervisorError {
            #expect(error.code == .running)
        }
        _ = await system.shutdown()
    }
}
