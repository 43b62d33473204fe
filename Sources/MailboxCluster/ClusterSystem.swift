import Distributed
import Mailbox
import MailboxNATS

/// An `ActorSystem` joined to a cluster of processes over NATS: refs to actors on other nodes
/// are told, asked, watched and listed like local ones.
///
/// ```swift
/// let system = ActorSystem(name: "shop")
/// let cluster = try await ClusterSystem.join(system, ClusterConfiguration(nodeName: "node-a"))
/// let workers = ServiceKey<Job>("workers")
/// cluster.receptionist.register(try system.spawn(worker, name: "w1"), with: workers)
/// // on any node: cluster.receptionist.listing(for: workers) lists w1 (a remote ref there)
/// ```
///
/// - Nodes: each start is a `ClusterNode` (name + random incarnation). Other nodes are found
///   by their heartbeats; `members` and `memberEvents` follow them (see `MemberStatus`).
/// - Remote refs: a ref to an actor on another node (its message type `Codable`) comes from
///   the receptionist, from inside a message, or from `resolve(_:as:)`. `tell` serializes and
///   sends; `send` suspends while the node's outbound window is full; `ask` fails at once when
///   the node is gone (NATS "no responders"). See docs/Cluster.md for the guarantees:
///   at-most-once, FIFO per sender–receiver pair while both incarnations live.
/// - Death watch: `context.watch(remoteRef)` delivers `terminated` once, when the remote
///   actor stops or its node is downed.
///
/// Thread-safety: every member may be called from any thread. Failure modes: `join` throws
/// `ClusterError` (bad name, NATS unreachable); what cannot be delivered becomes a dead letter
/// on the node that found out (`DeadLetter.Reason.recipientTerminated`, `.notUnderstood`), or
/// a drop (`.outboundQueueFull`, on the sending node).
public final class ClusterSystem: Sendable {
    let core: _ClusterCore

    /// The local actor system.
    public var system: ActorSystem { core.system }
    /// This node: its name and this start's incarnation.
    public var node: ClusterNode { core.me }
    /// The settings it joined with.
    public var configuration: ClusterConfiguration { core.configuration }
    /// The NATS connection the cluster runs on.
    public var connection: NATSConnection { core.connection }
    /// The cluster-wide receptionist.
    public let receptionist: ClusterReceptionist
    /// The claims buckets opened on this node, by name (`claims(_:replicas:)`).
    let claimsByName = LockedValueBox<[String: ClusterClaims]>([:])

    /// The members, this node first, as this node sees them.
    public var members: Property<[Member]> { Property(capturing: core.membersProperty) }
    /// Every change of a member's status, in order.
    public var memberEvents: Signal<MemberEvent, Never> { core.memberEvents }

    /// Counters of the node's traffic.
    public var statistics: ClusterStatistics {
        var statistics = core.state.withLockedValue { $0.statistics }
        statistics.sentMessages = core.sentMessages.load(ordering: .relaxed)
        return statistics
    }

    init(core: _ClusterCore) {
        self.core = core
        self.receptionist = ClusterReceptionist(core: core)
    }

    /// Connects to NATS and joins the cluster as `configuration.nodeName`, with a new random
    /// incarnation.
    ///
    /// - Throws: `ClusterError` `.invalidName` for a node or cluster name that is not a subject
    ///   token; `.connectionFailed` when NATS cannot be reached.
    public static func join(_ system: ActorSystem, _ configuration: ClusterConfiguration) async throws(ClusterError) -> ClusterSystem {
        try validate(configuration)
        var nats = configuration.nats
        if nats.name == nil { nats.name = "mailbox-cluster \(configuration.nodeName)" }
        let connection: NATSConnection
        do {
            connection = try await NATSConnection.connect(nats)
        } catch {
            throw ClusterError(code: .connectionFailed, text: "cannot reach NATS at \(nats.servers.joined(separator: ", "))", nats: error)
        }
        let cluster = try start(system, configuration, connection: connection, ownsConnection: true)
        try await cluster.subscriptionsReachedServer()
        return cluster
    }

    /// Joins the cluster over an existing connection (which the cluster does not close).
    public static func join(_ system: ActorSystem, _ configuration: ClusterConfiguration, connection: NATSConnection) async throws(ClusterError) -> ClusterSystem {
        try validate(configuration)
        let cluster = try start(system, configuration, connection: connection, ownsConnection: false)
        try await cluster.subscriptionsReachedServer()
        return cluster
    }

    /// Waits until the server has the node's subscriptions (a round trip): what is sent to this
    /// node once `join` returned reaches it.
    private func subscriptionsReachedServer() async throws(ClusterError) {
        do {
            try await connection.flush(timeout: configuration.nats.connectTimeout * 5)
        } catch {
            await leave()
            throw ClusterError(code: .connectionFailed, text: "the server did not confirm the node's subscriptions", nats: error)
        }
    }

    private static func validate(_ configuration: ClusterConfiguration) throws(ClusterError) {
        guard ClusterConfiguration.isValidToken(configuration.nodeName) else {
            throw ClusterError(code: .invalidName, text: "node name \(configuration.nodeName.debugDescription): use letters, digits, '-' and '_'")
        }
        guard configuration.clusterName.split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ ClusterConfiguration.isValidToken(String($0)) }) else {
            throw ClusterError(code: .invalidName, text: "cluster name \(configuration.clusterName.debugDescription): use letters, digits, '-', '_' (and '.' between tokens)")
        }
    }

    private static func start(_ system: ActorSystem, _ configuration: ClusterConfiguration, connection: NATSConnection, ownsConnection: Bool) throws(ClusterError) -> ClusterSystem {
        var generator = SystemRandomNumberGenerator()
        let node = ClusterNode(name: configuration.nodeName, incarnation: generator.next())
        let core = _ClusterCore(me: node, system: system, configuration: configuration, connection: connection, ownsConnection: ownsConnection)
        do {
            try core.startUp()
        } catch {
            if ownsConnection { connection.close() }
            throw ClusterError(code: .connectionFailed, text: "cannot subscribe to the cluster's subjects", nats: error)
        }
        return ClusterSystem(core: core)
    }

    /// The ref `address` stands for: this node's actor if the address is on this node and the
    /// actor was exported (its ref went out in a message or a registration), otherwise a ref
    /// to the remote actor. A ref to something gone is a ref whose messages are dead letters.
    public func resolve<Message: Codable & Sendable>(_ address: ActorAddress, as type: Message.Type = Message.self) -> ActorRef<Message> {
        if address.node == nil { return ActorRef(deadAt: address, system: system) }
        return core.resolve(address, as: type)
    }

    /// This node's `ref` as other nodes address it (with the node); the ref is exported.
    public func address<Message: Codable & Sendable>(of ref: ActorRef<Message>) -> ActorAddress {
        if ref.address.node != nil { return ref.address }
        return core.export(ref)
    }

    /// Leaves the cluster in order: the others see this node leave (its actors' watches fire
    /// there, its registrations leave their listings) without waiting for the failure
    /// detector. Refs to remote actors stop working. Idempotent.
    public func leave() async {
        await core.shutDown()
    }
}

/// Counters of one node's cluster traffic (since it joined).
public struct ClusterStatistics: Sendable, Hashable {
    /// Messages sent to remote actors.
    public var sentMessages: UInt64 = 0
    /// Sequenced frames received (messages, watches, terminations).
    public var receivedMessages: UInt64 = 0
    /// Messages not sent because the window to their node was full (`tell`).
    public var outboundDrops: UInt64 = 0
    /// Frames that never arrived: gaps in a link's sequence numbers (at-most-once).
    public var lostFrames: UInt64 = 0
    /// Frames that arrived twice or late (after a later one), ignored.
    public var duplicateFrames: UInt64 = 0
    /// Frames that did not parse.
    public var malformedFrames: UInt64 = 0
    /// Messages whose manifest the recipient's type does not accept, or that did not decode.
    public var notUnderstood: UInt64 = 0
}
