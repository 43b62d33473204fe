import Mailbox
import MailboxNATS

extension ClusterSystem {
    /// Joins the cluster over `transport` (the simulation's in-memory transport, or a NATS
    /// connection) with time from `clock`, as node `incarnation` (a seeded run chooses it),
    /// without waiting for a round trip to a server: for the package's own simulation and
    /// tests, not a public way in.
    ///
    /// The cluster does not close `transport` when it leaves unless `ownsTransport`.
    /// `connection` must not be used on a node whose transport is not a `NATSConnection`.
    ///
    /// - Throws: `ClusterError` `.invalidName` for a node or cluster name that is not a subject
    ///   token; `.connectionFailed` when the transport refuses the node's subscriptions.
    package static func start(
        _ system: ActorSystem, _ configuration: ClusterConfiguration, transport: any _ClusterTransport, clock: _ClusterClock,
        incarnation: UInt64, ownsTransport: Bool = false
    ) throws(ClusterError) -> ClusterSystem {
        guard ClusterConfiguration.isValidToken(configuration.nodeName) else {
            throw ClusterError(code: .invalidName, text: "node name \(configuration.nodeName.debugDescription): use letters, digits, '-' and '_'")
        }
        let node = ClusterNode(name: configuration.nodeName, incarnation: incarnation)
        let core = _ClusterCore(me: node, system: system, configuration: configuration, transport: transport, clock: clock, ownsConnection: ownsTransport)
        do {
            try core.startUp()
        } catch {
            if ownsTransport { transport.close() }
            throw ClusterError(code: .connectionFailed, text: "cannot subscribe to the cluster's subjects", nats: error)
        }
        return ClusterSystem(core: core)
    }
}
