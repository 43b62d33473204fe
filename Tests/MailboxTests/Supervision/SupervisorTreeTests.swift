import Foundation
import Testing
@testable import Mailbox

/// A supervised child that logs "<id> setup <gen>", "<id> <gen>:<value>", "<id> preRestart
/// <gen>", "<id> postStop <gen>".
func treeWorker(_ id: String, _ log: Inbox<String>) -> @Sendable () -> Behavior<WorkerMessage> {
    let setups = Counter()
    return {
        .setup { _ in
            let generation = setups.increment()
            log.record("\(id) setup \(generation)")
            return Behavior<WorkerMessage>.receiveMessage { message in
                switch message {
                case let .value(value): log.record("\(id) \(generation):\(value)")
                case .fail: throw Boom(tag: "\(id) failed")
                case .failOther: return .stopped
                }
                return .same
            }.receiveLifecycle { _, event in
                switch event {
                case .preRestart: log.record("\(id) preRestart \(generation)")
                case .postStop: log.record("\(id) postStop \(generation)")
                default: return .unhandled
                }
                return .same
            }
        }
    }
}

/// The supervisor's children, asked through a recording actor on the test scheduler.
func children(of supervisor: ActorRef<SupervisorMessage>, _ system: ActorSystem, _ scheduler: TestScheduler) throws -> [SupervisedChild] {
    let inbox = Inbox<[SupervisedChild]>()
    let recorder = try system.spawnAnonymous(recording(inbox))
    supervisor.tell(.whichChildren(replyTo: recorder))
    scheduler.runDue()
    return inbox.values.last ?? []
}

func child(_ id: String, of supervisor: ActorRef<SupervisorMessage>, _ system: ActorSystem, _ scheduler: TestScheduler) throws -> ActorRef<WorkerMessage> {
    try #require(try children(of: supervisor, system, scheduler).first { $0.id == id }?.ref?.typed(as: WorkerMessage.self))
}

@Suite("Supervision: Supervisor trees")
struct SupervisorTreeTests {
    let log = Inbox<String>()
    let events = Inbox<ActorSystemEvent>()

    func start(_ strategy: Supervisor.RestartScope, intensity: Int = 10, period: Duration = .seconds(5),
               restart: [ChildSpec.Restart] = [.permanent, .permanent, .permanent]) throws
        -> (ActorSystem, TestScheduler, ActorRef<SupervisorMessage>) {
        let (system, scheduler) = makeTestSystem(events: events)
        let specs = zip(["a", "b", "c"], restart).map { id, restart in
            ChildSpec(id: id, restart: restart, treeWorker(id, log))
        }
        let supervisor = try system.spawn(
            Supervisor.behavior(strategy: strategy, intensity: intensity, period: period, children: specs), name: "sup")
        scheduler.runDue()
        #expect(log.values == ["a setup 1", "b setup 1", "c setup 1"])
        return (system, scheduler, supervisor)
    }

    /// Log lines after the start.
    var logAfterStart: [String] { Array(log.values.dropFirst(3)) }

    @Test func oneForOne_restartsOnlyTheFailedChild_inPlace_keepingItsQueuedMessages() throws {
        let (system, scheduler, supervisor) = try start(.oneForOne)
        let b = try child("b", of: supervisor, system, scheduler)
        let a = try child("a", of: supervisor, system, scheduler)
        b.tell(.value(1)); b.tell(.fail); b.tell(.value(2)); b.tell(.value(3))
        a.tell(.value(10))
        scheduler.runDue()
        #expect(logAfterStart.filter { $0.hasPrefix("b") } == ["b 1:1", "b preRestart 1", "b setup 2", "b 2:2", "b 2:3"])
        #expect(logAfterStart.filter { $0.hasPrefix("a") } == ["a 1:10"])
        #expect(!logAfterStart.contains { $0.hasPrefix("c") })
        // Same ref after the restart.
        #expect(try child("b", of: supervisor, system, scheduler) == b)
    }

    @Test func allForOne_stopsInReverseStartOrder_thenStartsInStartOrder() throws {
        let (system, scheduler, supervisor) = try start(.allForOne)
        let b = try child("b", of: supervisor, system, scheduler)
        let c = try child("c", of: supervisor, system, scheduler)
        b.tell(.fail)
        c.tell(.value(7))
        scheduler.runDue()
        #expect(logAfterStart == [
            "c 1:7",
            "c preRestart 1", "b preRestart 1", "a preRestart 1",
            "a setup 2", "b setup 2", "c setup 2",
        ])
    }

    @Test func allForOne_keepsTheSiblingsQueuedMessages_forTheirNewState() throws {
        let (system, scheduler, supervisor) = try start(.allForOne)
        let a = try child("a", of: supervisor, system, scheduler)
        let b = try child("b", of: supervisor, system, scheduler)
        b.tell(.fail)
        scheduler.runDue()
        // Sent after the failure, before a's restart completes on the scheduler.
        a.tell(.value(1))
        a.tell(.value(2))
        scheduler.runDue()
        #expect(logAfterStart.filter { $0.hasPrefix("a") }.suffix(2) == ["a 2:1", "a 2:2"])
    }

    @Test func restForOne_restartsTheFailedChildAndThoseStartedAfterIt() throws {
        let (system, scheduler, supervisor) = try start(.restForOne)
        let b = try child("b", of: supervisor, system, scheduler)
        b.tell(.fail)
        scheduler.runDue()
        #expect(logAfterStart == ["c preRestart 1", "b preRestart 1", "b setup 2", "c setup 2"])
    }

    @Test func intensityExceeded_shutsTheSupervisorDown_childrenStopNewestFirst() throws {
        let (system, scheduler, supervisor) = try start(.oneForOne, intensity: 1, period: .seconds(5))
        let a = try child("a", of: supervisor, system, scheduler)
        a.tell(.fail)
        scheduler.runDue()
        a.tell(.fail)
        scheduler.runDue()
        #expect(logAfterStart == ["a preRestart 1", "a setup 2", "c postStop 1", "b postStop 1", "a postStop 2"])
        let failures = events.values.compactMap { event -> (any Error)? in
            if case let .failed(address, error) = event, address.name == "sup" { return error }
            return nil
        }
        #expect(failures.first is SupervisorIntensityError)
        let nobody = try system.spawnAnonymous(Behavior<[SupervisedChild]>.ignore)
        #expect(supervisor.tell(.whichChildren(replyTo: nobody)) == .dropped(.recipientTerminated))
    }

    @Test func intensityWindowSlides() throws {
        let (system, scheduler, supervisor) = try start(.oneForOne, intensity: 1, period: .seconds(5))
        let a = try child("a", of: supervisor, system, scheduler)
        a.tell(.fail)
        scheduler.runDue()
        scheduler.advance(by: .seconds(6))
        a.tell(.fail)
        scheduler.runDue()
        #expect(logAfterStart == ["a preRestart 1", "a setup 2", "a preRestart 2", "a setup 3"])
    }

    @Test func transient_isRestartedAfterAFailure_butNotAfterStoppingNormally() throws {
        let (system, scheduler, supervisor) = try start(.oneForOne, restart: [.transient, .permanent, .permanent])
        let a = try child("a", of: supervisor, system, scheduler)
        a.tell(.fail)
        scheduler.runDue()
        #expect(logAfterStart == ["a preRestart 1", "a setup 2"])
        a.tell(.failOther)   // stops normally
        scheduler.runDue()
        #expect(logAfterStart.last == "a postStop 2")
        let entry = try children(of: supervisor, system, scheduler).first { $0.id == "a" }
        #expect(entry != nil && entry?.ref == nil)
    }

    @Test func temporary_isNeverRestarted_andForgotten() throws {
        let (system, scheduler, supervisor) = try start(.allForOne, restart: [.permanent, .temporary, .permanent])
        let b = try child("b", of: supervisor, system, scheduler)
        b.tell(.fail)
        scheduler.runDue()
        #expect(logAfterStart == ["b postStop 1"])
        #expect(try children(of: supervisor, system, scheduler).map(\.id) == ["a", "c"])
    }

    @Test func allForOne_stopsATemporarySiblingForGood() throws {
        let (system, scheduler, supervisor) = try start(.allForOne, restart: [.permanent, .temporary, .permanent])
        let c = try child("c", of: supervisor, system, scheduler)
        c.tell(.fail)
        scheduler.runDue()
        #expect(logAfterStart == ["c preRestart 1", "b postStop 1", "a preRestart 1", "a setup 2", "c setup 2"])
        #expect(try children(of: supervisor, system, scheduler).map(\.id) == ["a", "c"])
    }

    @Test func permanentChildThatStops_isSpawnedAgainUnderItsName() throws {
        let (system, scheduler, supervisor) = try start(.oneForOne)
        let a = try child("a", of: supervisor, system, scheduler)
        a.tell(.failOther)   // stops normally
        scheduler.runDue()
        #expect(logAfterStart == ["a postStop 1", "a setup 2"])
        let newA = try child("a", of: supervisor, system, scheduler)
        #expect(newA != a)
        #expect(newA.path == a.path)
        #expect(newA.tell(.value(1)) == .enqueued)
    }

    @Test func childStoppedFromOutside_isRestartedWhenPermanent() throws {
        let (system, scheduler, supervisor) = try start(.oneForOne)
        let c = try child("c", of: supervisor, system, scheduler)
        c.target.sendSystem(.stop)
        scheduler.runDue()
        #expect(logAfterStart == ["c postStop 1", "c setup 2"])
    }

    @Test func childsOwnRule_decidesFirst() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let make = treeWorker("a", log)
        let supervisor = try system.spawn(Supervisor.behavior(strategy: .allForOne, children: [
            ChildSpec(id: "a") { .supervise(make()).onFailure(.resume) },
            ChildSpec(id: "b", treeWorker("b", log)),
        ]), name: "sup")
        scheduler.runDue()
        let a = try child("a", of: supervisor, system, scheduler)
        a.tell(.fail)
        a.tell(.value(1))
        scheduler.runDue()
        #expect(Array(log.values.dropFirst(2)) == ["a 1:1"])
    }

    @Test func nestedSupervisor_restartedByItsParent_restartsItsSubtreeInStartOrder() throws {
        let (system, scheduler) = makeTestSystem(events: events)
        let innerChildren = [
            ChildSpec(id: "x", treeWorker("x", log)),
            ChildSpec(id: "y", treeWorker("y", log)),
        ]
        let root = try system.spawn(Supervisor.behavior(strategy: .allForOne, children: [
            ChildSpec(id: "inner") { Supervisor.behavior(strategy: .oneForOne, children: innerChildren) },
            ChildSpec(id: "z", treeWorker("z", log)),
        ]), name: "root")
        scheduler.runDue()
        #expect(log.values == ["x setup 1", "y setup 1", "z setup 1"])
        let z = try child("z", of: root, system, scheduler)
        z.tell(.fail)
        scheduler.runDue()
        let after = Array(log.values.dropFirst(3))
        // z and inner stop (reverse order): inner's children stop with it; then inner starts
        // its children again in order, then z.
        #expect(after.filter { $0.contains("setup") } == ["x setup 2", "y setup 2", "z setup 2"])
        #expect(after.firstIndex(of: "z preRestart 1")! < after.firstIndex(of: "y postStop 1")!)
        #expect(after.firstIndex(of: "y postStop 1")! < after.firstIndex(of: "x postStop 1")!)
        _ = system
    }
}
