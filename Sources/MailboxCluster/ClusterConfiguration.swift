import Mailbox
import MailboxNATS

/// How a node joins a cluster: its name, the NATS servers, and the failure detector's and
/// the links' settings.
///
/// Every node of one cluster uses the same `clusterName` (the subject prefix) and the same
/// codecs; node names must be unique among the live nodes (a second live node under a taken
/// name downs the first: a name is one member).
public struct ClusterConfiguration: Sendable {
    /// The node's name: letters, digits, `-` and `_` (it is a NATS subject token).
    public var nodeName: String
    /// The cluster's name, the prefix of its subjects (`<clusterName>.node.…`): clusters
    /// sharing a NATS server are kept apart by it. Letters, digits, `-`, `_`.
    public var clusterName = "mailbox"
    /// The NATS connection's settings (servers, credentials, reconnect).
    public var nats: NATSConfiguration
    /// How often a node says it is alive.
    public var heartbeatInterval: Duration = .milliseconds(200)
    /// Silence after which a node is probed (a request on its subject).
    public var probeAfter: Duration = .milliseconds(300)
    /// How long a node may stay `unreachable` before it is downed.
    public var downAfter: Duration = .seconds(5)
    /// How long NATS must keep answering "no responders" for a node (its connection is gone:
    /// the process died) before it is downed, without waiting for `downAfter`.
    public var goneAfter: Duration = .milliseconds(400)
    /// How long this node's own NATS link must have been up before "no responders" counts
    /// (after a reconnect, other nodes may still be reconnecting).
    public var settle: Duration = .seconds(3)
    /// Time-out of a probe.
    public var probeTimeout: Duration = .milliseconds(500)
    /// Time-out of a call to a `distributed actor` on another node.
    public var callTimeout: Duration = .seconds(10)
    /// Messages to one node sent and not yet acknowledged by it: past this `tell` drops (and
    /// counts), `send` suspends.
    public var outboundWindow = 65_536
    /// The receiver acknowledges every this many messages (and on each heartbeat).
    public var ackEvery = 1_024
    /// The message codecs (JSON for every `Codable` type unless registered otherwise).
    public var codecs = ClusterCodecs()

    /// A node named `nodeName` on the NATS server at `url`.
    public init(nodeName: String, nats url: String = "nats://127.0.0.1:4222") {
        self.nodeName = nodeName
        self.nats = NATSConfiguration(url: url)
    }

    /// A node named `nodeName` with NATS settings of its own.
    public init(nodeName: String, nats: NATSConfiguration) {
        self.nodeName = nodeName
        self.nats = nats
    }

    var membershipSettings: _Membership.Settings {
        _Membership.Settings(
            heartbeatInterval: heartbeatInterval, probeAfter: probeAfter, downAfter: downAfter,
            goneAfter: goneAfter, settle: settle)
    }

    static func isValidToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }
}

/// The subjects of one node in one cluster.
struct _Subjects: Sendable {
    let prefix: String
    let heartbeats: String
    let registries: String

    init(cluster: String) {
        prefix = cluster
        heartbeats = "\(cluster).members"
        registries = "\(cluster).registry"
    }

    /// Where every directed frame for `node` goes.
    func node(_ node: ClusterNode) -> String {
        "\(prefix).node.\(node.name).\(Self.hex(node.incarnation))"
    }

    /// The reply subject of an ask's question: NATS answers "no responders" there when the
    /// recipient's node is gone.
    func noResponders(_ node: ClusterNode, ask: UInt64) -> String {
        "\(prefix).nr.\(node.name).\(Self.hex(node.incarnation)).\(ask)"
    }

    func noRespondersWildcard(_ node: ClusterNode) -> String {
        "\(prefix).nr.\(node.name).\(Self.hex(node.incarnation)).*"
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
