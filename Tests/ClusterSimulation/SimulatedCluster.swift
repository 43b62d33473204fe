import Mailbox
import MailboxCluster
import MailboxNATS
import MailboxTestKit

/// One node of a `SimulatedCluster`: an actor system and its cluster on a simulated connection.
package struct SimulatedNode {
    package let name: String
    package let system: ActorSystem
    package let cluster: ClusterSystem
    package let connection: SimulatedConnection

    package var node: ClusterNode { cluster.node }

    /// Whether the others downed this incarnation (it then neither sends nor receives).
    package var wasDowned: Bool { cluster.members.value.first?.status == .down }
}

/// A whole cluster in one process on one virtual clock: nodes (each an `ActorSystem` and a
/// `ClusterSystem`) on a `SimulatedNetwork`, all on `scheduler`, every random choice from
/// `seed`. Nothing runs until `run(for:)` moves the clock.
///
/// Nodes are started with a quick failure detector (see `configuration(for:)`); a node that
/// the network killed or the others downed is *retired* (its connection closed, as its process
/// would exit) and can be started again as a new incarnation with `restart(_:)`.
///
/// Thread-safety: not `Sendable`; it belongs to the task that drives the simulation.
package final class SimulatedCluster {
    package let seed: UInt64
    package let scheduler: TestScheduler
    package let network: SimulatedNetwork
    /// The current node of each name, in the order of `names`.
    package private(set) var nodes: [SimulatedNode] = []
    /// Nodes replaced by a new incarnation, or killed: left and shut down at the end.
    package private(set) var retired: [SimulatedNode] = []
    package var random: SeededRandom
    private let configure: (inout ClusterConfiguration) -> Void

    /// Starts nodes `names` on a network with `plan`'s faults.
    package init(
        seed: UInt64, scheduler: TestScheduler, plan: FaultPlan, names: [String],
        configure: @escaping (inout ClusterConfiguration) -> Void = { _ in }
    ) throws {
        self.seed = seed
        self.scheduler = scheduler
        self.network = SimulatedNetwork(scheduler: scheduler, plan: plan)
        self.random = SeededRandom(seed: SplitMix64.mix(seed ^ 0xC1C1_C1C1_C1C1_C1C1))
        self.configure = configure
        for name in names { nodes.append(try start(name)) }
    }

    /// The quick failure detector every simulated node uses (before `configure`).
    package static func configuration(for name: String) -> ClusterConfiguration {
        var configuration = ClusterConfiguration(nodeName: name)
        configuration.clusterName = "sim"
        // Few heartbeats per virtual second (most of a run's work is theirs), a quick verdict.
        configuration.heartbeatInterval = .milliseconds(400)
        configuration.probeAfter = .milliseconds(600)
        configuration.probeTimeout = .milliseconds(250)
        configuration.goneAfter = .milliseconds(400)
        configuration.settle = .milliseconds(500)
        configuration.downAfter = .seconds(1)
        configuration.callTimeout = .seconds(1)
        return configuration
    }

    private func start(_ name: String) throws -> SimulatedNode {
        let system = ActorSystem(name: "sim", configuration: .init(
            scheduler: scheduler, runLength: 64, logHandler: nil, randomSeed: random.next()))
        var configuration = Self.configuration(for: name)
        configure(&configuration)
        let connection = network.connect(name: name)
        let cluster = try ClusterSystem.start(system, configuration, transport: connection, clock: .virtual(scheduler), incarnation: random.next())
        return SimulatedNode(name: name, system: system, cluster: cluster, connection: connection)
    }

    /// The current node named `name`.
    package subscript(name: String) -> SimulatedNode {
        nodes.first { $0.name == name }!
    }

    /// Moves the virtual clock by `duration`, running everything due.
    package func run(for duration: Duration) {
        scheduler.advance(by: duration)
    }

    /// Replaces node `name` by a new incarnation (a new process under the same name); the old
    /// one's connection closes as its process exits.
    @discardableResult
    package func restart(_ name: String) throws -> SimulatedNode {
        let index = nodes.firstIndex { $0.name == name }!
        let old = nodes[index]
        old.connection.close()
        retired.append(old)
        let new = try start(name)
        nodes[index] = new
        return new
    }

    /// Leaves every node's cluster, closes the connections and shuts every system down on
    /// virtual time.
    ///
    /// - Returns: The systems' reports that are not clean.
    package func shutdown() async -> [ActorSystem.ShutdownReport] {
        let all = nodes + retired
        for node in all {
            await node.cluster.leave()
            node.connection.close()
        }
        for node in all { node.system.beginShutdown() }
        // Whatever is still scheduled (time-outs of requests, deliveries) is one-shot.
        scheduler.advance(by: .seconds(30))
        var unclean: [ActorSystem.ShutdownReport] = []
        for node in all {
            let report = await node.system.shutdown(timeout: .zero)
            if !report.isClean { unclean.append(report) }
        }
        return unclean
    }
}
