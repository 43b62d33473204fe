/// One start of one process in a cluster: a node's name and a random 64-bit incarnation drawn
/// each time it starts (Akka's `UniqueAddress`, Erlang's node name with its creation number).
///
/// A node that restarts under the same name is a different `ClusterNode`: refs, watches and
/// ownership claims of the earlier incarnation never reach the new one. A plain value:
/// `Sendable`, `Hashable`, `Codable`.
public struct ClusterNode: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The node's name, unique among the live members of its cluster (e.g. `node-a`).
    public let name: String
    /// Random per start; never reused by a later start of the same name.
    public let incarnation: UInt64

    /// A node identity; the cluster layer draws `incarnation` at random when a node starts.
    public init(name: String, incarnation: UInt64) {
        self.name = name
        self.incarnation = incarnation
    }

    /// `name:incarnation-in-hex`, e.g. `node-a:1f3c9e0a77b2d401`.
    public var description: String {
        let hex = String(incarnation, radix: 16)
        return "\(name):\(String(repeating: "0", count: max(0, 16 - hex.count)))\(hex)"
    }
}

/// The node of an address, boxed so that an address keeps its size when it has none (local
/// addresses, the common case, carry a nil reference: 8 bytes, no retain).
@usableFromInline
final class _ClusterNodeBox: Sendable {
    let node: ClusterNode

    init(_ node: ClusterNode) {
        self.node = node
    }
}
