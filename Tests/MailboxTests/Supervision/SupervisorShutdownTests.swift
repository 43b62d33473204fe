import Foundation
import Testing
@testable import Mailbox

/// OTP: a supervisor that exceeds its restart intensity stops its children and terminates with
/// a *shutdown* exit, which its parent supervisor handles by the child's restart type.
@Suite("Supervision: intensity shutdown")
struct SupervisorShutdownTests {
    let log = Inbox<String>()
    let events = Inbox<ActorSystemEvent>()

    /// A root supervisor (`rootIntensity` in 60 s) over `inner`, a one-for-one supervisor of
    /// intensity `innerIntensity` (in 60 s) over the worker `w`, and a sibling worker `s`.
    func tree(inner restart: ChildSpec.Restart, rootIntensity: Int = 5, innerIntensity: Int = 0) throws
        -> (ActorSystem, TestScheduler, ActorRef<SupervisorMessage>) {
        let (system, scheduler) = makeTestSystem(events: events)
        let w = treeWorker("w", log)
        let root = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: rootIntensity, period: .seconds(60), children: [
            ChildSpec(id: "inner", restart: restart) {
                Supervisor.behavior(strategy: .oneForOne, intensity: innerIntensity, period: .seconds(60), children: [
                    ChildSpec(id: "w", w),
                ])
            },
            ChildSpec(id: "s", treeWorker("s", log)),
        ]), name: "root")
        scheduler.runDue()
        #expect(log.values == ["w setup 1", "s setup 1"])
        return (system, scheduler, root)
    }

    func innerRef(_ root: ActorRef<SupervisorMessage>, _ system: ActorSystem, _ scheduler: TestScheduler) throws -> ActorRef<SupervisorMessage>? {
        try children(of: root, system, scheduler).first { $0.id == "inner" }?.ref?.typed(as: SupervisorMessage.self)
    }

    func failW(_ root: ActorRef<SupervisorMessage>, _ system: ActorSystem, _ scheduler: TestScheduler) throws {
        let inner = try #require(try innerRef(root, system, scheduler))
        let w = try child("w", of: inner, system, scheduler)
        w.tell(.fail)
        scheduler.runDue()
    }

    func failures(of name: String) -> [any Error] {
        events.values.compactMap { event in
            if case let .failed(address, error) = event, address.name == name { return error }
            return nil
        }
    }

    @Test func transientSupervisorExceedingItsIntensity_isNotRestartedByItsParent() throws {
        let (system, scheduler, root) = try tree(inner: .transient)
        try failW(root, system, scheduler)
        // inner stopped w and terminated with a shutdown exit: normal for a transient child.
        #expect(Array(log.values.dropFirst(2)) == ["w postStop 1"])
        let entry = try #require(try children(of: root, system, scheduler).first { $0.id == "inner" })
        #expect(entry.ref == nil)
        #expect(try child("s", of: root, system, scheduler).tell(.value(1)) == .enqueued)
        #expect(failures(of: "root").isEmpty)
    }

    @Test func permanentSupervisorExceedingItsIntensity_isSpawnedAgainByItsParent() throws {
        let (system, scheduler, root) = try tree(inner: .permanent)
        let before = try #require(try innerRef(root, system, scheduler))
        try failW(root, system, scheduler)
        #expect(Array(log.values.dropFirst(2)) == ["w postStop 1", "w setup 2"])
        let after = try #require(try innerRef(root, system, scheduler))
        // Terminated and spawned again: a new actor under the same name.
        #expect(after != before)
        #expect(after.path == before.path)
        #expect(before.tell(.whichChildren(replyTo: try system.spawnAnonymous(Behavior<[SupervisedChild]>.ignore))) == .dropped(.recipientTerminated))
    }

    @Test func intensityShutdown_stillPublishesTheMaxIntensityReport() throws {
        let (system, scheduler, root) = try tree(inner: .transient)
        try failW(root, system, scheduler)
        let report = try #require(failures(of: "inner").first as? SupervisorIntensityError)
        #expect(report.supervisor.name == "inner")
        #expect(report.intensity == 0)
        #expect(report.lastFailure is Boom)
    }

    @Test func restartsOfAShutDownSupervisor_countAgainstItsParentsIntensity_multiplyingUpTheLevels() throws {
        let (system, scheduler, root) = try tree(inner: .permanent, rootIntensity: 1, innerIntensity: 1)
        // inner allows 1 restart of w, root allows 1 restart of inner: 4 failures in all.
        try failW(root, system, scheduler)   // inner restarts w
        try failW(root, system, scheduler)   // inner exceeds: shutdown; root spawns inner again
        try failW(root, system, scheduler)   // the new inner restarts w
        #expect(try innerRef(root, system, scheduler) != nil)
        #expect(failures(of: "root").isEmpty)
        try failW(root, system, scheduler)   // inner exceeds again; root exceeds in turn
        #expect(log.values.filter { $0.hasPrefix("w setup") } == ["w setup 1", "w setup 2", "w setup 3", "w setup 4"])
        #expect(failures(of: "inner").count == 2)
        #expect(failures(of: "root").first is SupervisorIntensityError)
        #expect(log.values.suffix(2) == ["w postStop 4", "s postStop 1"])
        #expect(root.tell(.whichChildren(replyTo: try system.spawnAnonymous(Behavior<[SupervisedChild]>.ignore))) == .dropped(.recipientTerminated))
    }

    @Test func supervisorsOwnRestartRule_doesNotRestartItAfterAnIntensityShutdown() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let root = try system.spawn(.supervise(Supervisor.behavior(strategy: .oneForOne, intensity: 0, children: [
            ChildSpec(id: "w", treeWorker("w", log)),
        ])).onFailure(.restart), name: "root")
        scheduler.runDue()
        try child("w", of: root, system, scheduler).tell(.fail)
        scheduler.runDue()
        #expect(log.values == ["w setup 1", "w postStop 1"])
        #expect(root.tell(.whichChildren(replyTo: try system.spawnAnonymous(Behavior<[SupervisedChild]>.ignore))) == .dropped(.recipientTerminated))
        #expect(decisions(events).last == "root stop by actor")
    }

    @Test func topLevelSupervisorShutdown_underAnEscalatingGuardian_shutsTheSystemDown() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "strict", configuration: .init(scheduler: scheduler, logHandler: nil, guardianStrategy: .escalate))
        system.events.observeValues { events.record($0) }
        let root = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: 0, children: [
            ChildSpec(id: "w", treeWorker("w", log)),
        ]), name: "root")
        scheduler.runDue()
        try child("w", of: root, system, scheduler).tell(.fail)
        scheduler.runDue()
        #expect(system.isShuttingDown)
        #expect(decisions(events).last == "root escalate by guardian")
    }

    @Test func topLevelSupervisorShutdown_underARestartingGuardian_isNotRestarted() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "lenient", configuration: .init(
            scheduler: scheduler, logHandler: nil, guardianStrategy: .restart(limit: 5, within: .seconds(60))))
        let root = try system.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: 0, children: [
            ChildSpec(id: "w", treeWorker("w", log)),
        ]), name: "root")
        scheduler.runDue()
        try child("w", of: root, system, scheduler).tell(.fail)
        scheduler.runDue()
        #expect(log.values == ["w setup 1", "w postStop 1"])
        #expect(!system.isShuttingDown)
        #expect(!system.topLevelActors.contains { $0.path == "/user/root" })
    }

    @Test func plainParentWatchingASupervisor_seesItsShutdownAsAFailedChild() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let supervisors = Inbox<ActorRef<SupervisorMessage>>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            let sup = try context.spawn(Supervisor.behavior(strategy: .oneForOne, intensity: 0, children: [
                ChildSpec(id: "w", treeWorker("w", log)),
            ]), name: "sup")
            supervisors.record(sup)
            context.watch(sup)
            return Behavior<Int>.receiveLifecycle { _, event in
                if case let .childFailed(ref, error) = event {
                    log.record("\(ref.address.name) exited: \(type(of: error))")
                    return .same
                }
                return .unhandled
            }
        }, name: "owner")
        scheduler.runDue()
        try child("w", of: supervisors.values[0], system, scheduler).tell(.fail)
        scheduler.runDue()
        #expect(log.values == ["w setup 1", "w postStop 1", "sup exited: SupervisorIntensityError"])
    }
}
