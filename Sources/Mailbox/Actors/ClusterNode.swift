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

/// The cluster nodes this process has seen in addresses, numbered from 1 in the order first
/// seen (0 is "this process" in `ActorAddress.nodeIndex`). Interned: one number per node, so
/// addresses compare and hash nodes by number. Append-only: a process sees few node
/// incarnations (each start of each node of its cluster), and keeps them all.
///
/// Thread-safety: one lock; taken only to build or print a remote address, never for a local one.
@usableFromInline
final class _ClusterNodeTable: Sendable {
    static let shared = _ClusterNodeTable()

    private struct Table {
        var nodes: [ClusterNode] = []
        var numbers: [ClusterNode: UInt32] = [:]
    }

    private let table = LockedValueBox(Table())

    func index(of node: ClusterNode) -> UInt32 {
        table.withLockedValue { table in
            if let number = table.numbers[node] { return number }
            table.nodes.append(node)
            let number = UInt32(table.nodes.count)
            table.numbers[node] = number
            return number
        }
    }

    func node(at index: UInt32) -> ClusterNode {
        table.withLockedValue { $0.nodes[Int(index) - 1] }
    }
}
