import Foundation
import Mailbox
@testable import MailboxCluster
import MailboxNATS
import NATSTestSupport
import NetTestSupport
import Testing

/// A node of a test cluster: its own actor system and NATS connection, on the test server,
/// in a cluster name no other test uses, with a quick failure detector.
struct TestNode {
    let system: ActorSystem
    let cluster: ClusterSystem

    var node: ClusterNode { cluster.node }

    static func start(
        _ name: String, cluster clusterName: String, server: String? = nil,
        configure: (inout ClusterConfiguration) -> Void = { _ in }
    ) async throws -> TestNode {
        let system = ActorSystem(name: "test")
        // The quick failure detector of the guide's examples (ClusterDocTests).
        var configuration = docConfiguration(name, cluster: clusterName, nats: NATSConfiguration(url: server ?? NATSEnvironment.url!))
        configure(&configuration)
        let cluster = try await ClusterSystem.join(system, configuration)
        return TestNode(system: system, cluster: cluster)
    }

    func stop() async {
        await cluster.leave()
        _ = await system.shutdown()
    }

    /// Waits until this node sees every one of `nodes` with `status`.
    func waitToSee(_ nodes: [TestNode], as status: MemberStatus = .up) async -> Bool {
        let wanted = Set(nodes.map(\.node))
        return await waitFor(cluster.members) { members in
            wanted.isSubset(of: Set(members.filter { $0.status == status }.map(\.node)))
        }
    }
}

/// A cluster name no other test uses.
func uniqueCluster() -> String {
    "t\(UInt32.random(in: 0...UInt32.max))"
}

/// Waits (generous deadline) until `property`'s value satisfies `predicate`.
func waitFor<Value: Sendable>(_ property: Property<Value>, timeout: TimeInterval = 30, _ predicate: @escaping @Sendable (Value) -> Bool) async -> Bool {
    let seen = Collector<Value>()
    let disposable = property.producer.startWithValues { seen.append($0) }
    defer { disposable.dispose() }
    return await seen.wait(timeout: timeout) { values in values.last.map(predicate) ?? false }
}

/// Starts `count` nodes named n0, n1, … in one new cluster and waits until all see all.
func startCluster(_ count: Int, configure: @escaping (inout ClusterConfiguration) -> Void = { _ in }) async throws -> [TestNode] {
    let name = uniqueCluster()
    var nodes: [TestNode] = []
    for index in 0..<count {
        nodes.append(try await TestNode.start("n\(index)", cluster: name, configure: configure))
    }
    for node in nodes {
        let others = nodes.filter { $0.node != node.node }
        guard await node.waitToSee(others) else { throw TestFailure("\(node.node) did not see the others up: \(node.cluster.members.value)") }
    }
    return nodes
}

/// A message with a reply ref inside: the ref travels as an address.
enum Counter: Codable, Sendable {
    case add(Int)
    case get(replyTo: ActorRef<Int>)
}

func counter(_ total: Int = 0) -> Behavior<Counter> {
    .receiveMessage { message in
        switch message {
        case let .add(amount): return counter(total + amount)
        case let .get(replyTo):
            replyTo.tell(total)
            return .same
        }
    }
}

/// An actor that records every message it is told.
func recorder<Message: Sendable>(_ log: Collector<Message>) -> Behavior<Message> {
    .receiveMessage { message in
        log.append(message)
        return .same
    }
}
