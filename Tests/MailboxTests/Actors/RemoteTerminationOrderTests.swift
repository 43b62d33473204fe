import Testing
@testable import Mailbox

/// A remote actor's termination reaches its watcher after the messages that arrived before it
/// (Erlang's order): `RemoteWatcher.terminated` queues behind the user messages already in the
/// watcher's mailbox instead of overtaking them as a system message would.
@Suite("Remote termination order")
struct RemoteTerminationOrderTests {
    /// An endpoint standing for the cluster layer: it keeps the watchers it is given.
    final class FakeEndpoint: RemoteEndpoint, Sendable {
        typealias Message = Int
        let watchers = LockedValueBox<[RemoteWatcher]>([])
        func tell(_ message: Int) -> TellResult { .enqueued }
        func send(_ message: Int) async throws {}
        func watch(_ watcher: RemoteWatcher) { watchers.withLockedValue { $0.append(watcher) } }
        func unwatch(_ watcher: RemoteWatcher) {}
    }

    func remoteRef(_ system: ActorSystem, _ endpoint: FakeEndpoint) -> ActorRef<Int> {
        let node = ClusterNode(name: "far", incarnation: 1)
        return ActorRef(remote: ActorAddress(node: node, system: "far", path: "/user/source", incarnation: 1), system: system, endpoint: endpoint)
    }

    func spawnSink(_ system: ActorSystem, watching remote: ActorRef<Int>, log: Inbox<String>) throws -> ActorRef<Int> {
        try system.spawn(Behavior<Int>.setup { context in
            context.watch(remote)
            return Behavior<Int>.receiveMessage { number in
                log.record("\(number)")
                return .same
            }.receiveLifecycle { _, event in
                if case .terminated = event { log.record("terminated") }
                return .same
            }
        }, name: "sink")
    }

    @Test func terminationWaitsForTheMessagesQueuedBeforeIt() async throws {
        let (system, scheduler) = makeTestSystem()
        let endpoint = FakeEndpoint()
        let remote = remoteRef(system, endpoint)
        let log = Inbox<String>()
        let sink = try spawnSink(system, watching: remote, log: log)
        scheduler.run()
        let watcher = try #require(endpoint.watchers.withLockedValue { $0.first })
        // What the cluster layer does when a link brings 200 messages, then the termination:
        // all are in the mailbox before the sink runs (more than one run's length of them).
        for number in 0..<200 { sink.tell(number) }
        watcher.terminated(failure: nil)
        sink.tell(200)  // arrived after the termination: may be handled before or after it
        scheduler.run()
        #expect(await log.waitForCount(202))
        let lines = log.values
        let terminated = try #require(lines.firstIndex(of: "terminated"))
        #expect(lines[..<terminated].filter { $0 != "200" } == (0..<200).map(String.init), "\(lines.prefix(5))…")
        #expect(lines.filter { $0 == "terminated" }.count == 1)
    }

    @Test func terminationOfAnEmptyMailboxIsHandledAtOnce() async throws {
        let (system, scheduler) = makeTestSystem()
        let endpoint = FakeEndpoint()
        let log = Inbox<String>()
        _ = try spawnSink(system, watching: remoteRef(system, endpoint), log: log)
        scheduler.run()
        let watcher = try #require(endpoint.watchers.withLockedValue { $0.first })
        watcher.terminated(failure: nil)
        scheduler.run()
        #expect(await log.waitForCount(1))
        #expect(log.values == ["terminated"])
    }
}
