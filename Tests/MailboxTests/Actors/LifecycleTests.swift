import Testing
@testable import Mailbox

@Suite("Actor lifecycle: children, death watch, stopping, names, shutdown")
struct LifecycleTests {
    /// A node that spawns `children` children named c0…, and records its post-stop.
    func node(_ label: String, children: Int, depth: Int, postStops: Inbox<String>) -> Behavior<String> {
        .setup { context in
            if depth > 0 {
                for index in 0..<children {
                    try context.spawn(node("\(label)/c\(index)", children: children, depth: depth - 1, postStops: postStops), name: "c\(index)")
                }
            }
            return Behavior<String>.receive { context, message in
                if message == "stop" { return .stopped }
                if message == "stop-child", let first = context.childRefs.first {
                    _ = first
                }
                return .same
            }.receiveLifecycle { _, event in
                if case .postStop = event { postStops.record(label) }
                return .same
            }
        }
    }

    @Test func stoppingAParent_stopsChildrenFirst_postOrder() throws {
        let (system, scheduler) = makeTestSystem()
        let postStops = Inbox<String>()
        let root = try system.spawn(node("r", children: 2, depth: 2, postStops: postStops), name: "root")
        scheduler.advance()
        root.tell("stop")
        scheduler.advance()
        let order = postStops.values
        #expect(order.count == 7)
        #expect(order.last == "r")
        for label in order {
            // Every actor's post-stop comes after all of its descendants' post-stops.
            let index = order.firstIndex(of: label)!
            let descendants = order.filter { $0.hasPrefix(label + "/") }
            #expect(descendants.allSatisfy { order.firstIndex(of: $0)! < index }, "\(label) stopped before a descendant: \(order)")
        }
    }

    @Test func childPathsAndNames() throws {
        let (system, scheduler) = makeTestSystem()
        let paths = Inbox<String>()
        _ = try system.spawn(Behavior<Int>.setup { context in
            let child = try context.spawn(Behavior<Int>.ignore, name: "alice")
            paths.record(child.path)
            paths.record(context.myself.path)
            let anonymous = try context.spawnAnonymous(Behavior<Int>.ignore)
            paths.record(anonymous.path)
            return .ignore
        }, name: "lobby")
        scheduler.advance()
        #expect(paths.values[0] == "/user/lobby/alice")
        #expect(paths.values[1] == "/user/lobby")
        #expect(paths.values[2].hasPrefix("/user/lobby/$"))
    }

    @Test func invalidAndDuplicateNames_throwErrorsThatSayWhich() throws {
        let (system, _) = makeTestSystem()
        _ = try system.spawn(Behavior<Int>.ignore, name: "lobby")
        let duplicate = #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<Int>.ignore, name: "lobby") }
        #expect(duplicate?.code == .duplicateName)
        #expect(duplicate?.description.contains("'lobby'") == true)
        let invalid = #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<Int>.ignore, name: "a b") }
        #expect(invalid?.code == .invalidName)
        #expect(invalid?.description.contains("' '") == true)
        let reserved = #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<Int>.ignore, name: "$x") }
        #expect(reserved?.code == .invalidName)
        let empty = #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<Int>.ignore, name: "") }
        #expect(empty?.code == .invalidName)
    }

    @Test func nameIsFreeAgainAfterTheActorTerminated() throws {
        let (system, scheduler) = makeTestSystem()
        let first = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "reused")
        first.tell(1)
        scheduler.advance()
        let second = try system.spawn(Behavior<Int>.ignore, name: "reused")
        #expect(first != second)
        #expect(first.address.path == second.address.path)
        #expect(first.address != second.address)
    }

    enum WatcherMessage: Sendable {
        case watch(ActorRef<Int>)
        case unwatch(ActorRef<Int>)
    }

    func watcher(_ seen: Inbox<String>) -> Behavior<WatcherMessage> {
        Behavior<WatcherMessage>.receive { context, message in
            switch message {
            case let .watch(ref): context.watch(ref)
            case let .unwatch(ref): context.unwatch(ref)
            }
            return .same
        }.receiveLifecycle { _, event in
            switch event {
            case let .terminated(ref): seen.record("terminated \(ref.path)")
            case let .childFailed(ref, _): seen.record("childFailed \(ref.path)")
            default: break
            }
            return .same
        }
    }

    @Test func watcher_receivesTerminatedExactlyOnce() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let watcherRef = try system.spawn(watcher(seen), name: "watcher")
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "target")
        watcherRef.tell(.watch(target))
        watcherRef.tell(.watch(target))
        scheduler.advance()
        target.tell(1)
        target.tell(2)
        scheduler.advance()
        #expect(seen.values == ["terminated /user/target"])
    }

    @Test func watchingAnAlreadyTerminatedActor_deliversTerminatedAtOnce() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "target")
        target.tell(1)
        scheduler.advance()
        let watcherRef = try system.spawn(watcher(seen), name: "watcher")
        watcherRef.tell(.watch(target))
        scheduler.advance()
        #expect(seen.values == ["terminated /user/target"])
    }

    @Test func unwatch_preventsTerminated() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let watcherRef = try system.spawn(watcher(seen), name: "watcher")
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "target")
        watcherRef.tell(.watch(target))
        watcherRef.tell(.unwatch(target))
        scheduler.advance()
        target.tell(1)
        scheduler.advance()
        #expect(seen.values.isEmpty)
    }

    @Test func unhandledTerminated_isADeathPact() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "target")
        let pact = try system.spawn(Behavior<Int>.setup { context in
            context.watch(target)
            return .ignore
        }, name: "pact")
        scheduler.advance()
        target.tell(1)
        scheduler.advance()
        let failure = events.values.compactMap { event -> String? in
            if case let .failed(address, error) = event, error is DeathPactError { return address.path }
            return nil
        }
        #expect(failure == ["/user/pact"])
        #expect(pact.tell(1) == .dropped(.recipientTerminated))
    }

    struct Boom: Error {}

    @Test func parentWatchingAFailedChild_receivesChildFailed() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let parent = try system.spawn(Behavior<Int>.setup { context in
            let child = try context.spawn(Behavior<Int>.receiveMessage { _ in throw Boom() }, name: "child")
            context.watch(child)
            return Behavior<Int>.receiveMessage { value in
                child.tell(value)
                return .same
            }.receiveLifecycle { context, event in
                if case let .childFailed(ref, error) = event {
                    seen.record("\(ref.path) \(error is Boom) children=\(context.childRefs.count)")
                }
                return .same
            }
        }, name: "parent")
        parent.tell(1)
        scheduler.advance()
        #expect(seen.values == ["/user/parent/child true children=0"])
    }

    @Test func watchWithCustomMessage() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let target = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "target")
        _ = try system.spawn(Behavior<String>.setup { context in
            context.watch(target, with: "target is gone")
            return recording(seen)
        }, name: "watcher")
        scheduler.advance()
        target.tell(0)
        scheduler.advance()
        #expect(seen.values == ["target is gone"])
    }

    @Test func contextStop_stopsAChild_andRefusesNonChildren() throws {
        let (system, scheduler) = makeTestSystem()
        let outcomes = Inbox<String>()
        let stranger = try system.spawn(Behavior<Int>.ignore, name: "stranger")
        let parent = try system.spawn(Behavior<Int>.setup { context in
            let child = try context.spawn(Behavior<Int>.ignore, name: "child")
            try context.stop(child)
            do {
                try context.stop(stranger)
            } catch let error as ActorSystemError {
                outcomes.record("\(error.code)")
            }
            return Behavior<Int>.receive { context, _ in
                outcomes.record("children=\(context.childRefs.count)")
                return .same
            }
        }, name: "parent")
        scheduler.advance()
        parent.tell(0)
        scheduler.advance()
        #expect(outcomes.values == ["notAChild", "children=0"])
    }

    @Test func shutdown_stopsEverything_runsPostStop_andReleasesState() async throws {
        let tracker = LifetimeTracker()
        let postStops = Inbox<String>()
        let system = ActorSystem(name: "shutdown", configuration: .init(logHandler: nil))
        for index in 0..<20 {
            _ = try system.spawn(Behavior<Int>.setup { context in
                let state = tracker.instance()
                for child in 0..<3 {
                    try context.spawn(Behavior<Int>.setup { _ in
                        let childState = tracker.instance()
                        return Behavior<Int>.receiveMessage { _ in _ = childState; return .same }
                    }, name: "c\(child)")
                }
                return Behavior<Int>.receiveMessage { _ in _ = state; return .same }
                    .receiveLifecycle { _, event in
                        if case .postStop = event { postStops.record("a\(index)") }
                        return .same
                    }
            }, name: "a\(index)").tell(1)
        }
        let report = await system.shutdown()
        #expect(report.isClean)
        #expect(postStops.values.count == 20, "\(postStops.values)")
        #expect(system.topLevelActors.isEmpty)
        #expect(tracker.liveCount == 0, "actor state still alive after shutdown")
        #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<Int>.ignore, name: "late") }
    }

    @Test func shutdownOnTestScheduler_beginAdvanceAwait() async throws {
        let (system, scheduler) = makeTestSystem()
        let postStops = Inbox<String>()
        _ = try system.spawn(Behavior<Int>.receiveLifecycle { _, event in
            if case .postStop = event { postStops.record("stopped") }
            return .same
        }, name: "a")
        scheduler.advance()
        system.beginShutdown()
        scheduler.advance()
        let report = await system.shutdown(timeout: .seconds(5))
        #expect(report.isClean)
        #expect(postStops.values == ["stopped"])
    }

    @Test func shutdown_reportsActorsThatDidNotStop() async throws {
        // An actor on a scheduler nobody advances cannot stop.
        let stalled = TestScheduler()
        let system = ActorSystem(name: "stall", configuration: .init(logHandler: nil))
        _ = try system.spawn(Behavior<Int>.ignore, name: "stuck", props: Props(scheduler: stalled))
        let report = await system.shutdown(timeout: .milliseconds(50))
        #expect(!report.isClean)
        #expect(report.actorsNotStopped.map(\.path) == ["/user/stuck"])
    }
}
