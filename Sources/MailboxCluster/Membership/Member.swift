import Mailbox

/// Where a node stands in the cluster, as this node sees it (Akka Cluster's member states,
/// without the leader: NATS is the arbiter of who can reach whom).
///
/// ```
/// joining ──▶ up ──▶ unreachable ──▶ down ──▶ removed
///               ▲         │
///               └─────────┘ (heard again within `downAfter`)
/// up ──▶ leaving ──▶ removed            (an orderly `leave()`)
/// ```
public enum MemberStatus: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Heard, but its receptionist registry has not arrived here yet (or its heartbeat said it
    /// is not ready); `up` once it has.
    case joining
    /// Heard within the heartbeat deadline; messages flow.
    case up
    /// Its heartbeats stopped (or NATS says nobody listens on its subject); messages still go
    /// out, watches still wait. Back to `up` when heard again.
    case unreachable
    /// Unreachable too long, or gone from NATS: its watches fire, its asks fail at once, its
    /// registrations leave every listing. This incarnation is never let back.
    case down
    /// Leaving in order (`leave()`): treated as `down` once it is gone.
    case leaving
    /// No longer a member.
    case removed

    public var description: String { rawValue }

    var wireValue: UInt8 {
        switch self {
        case .joining: 0
        case .up: 1
        case .unreachable: 2
        case .down: 3
        case .leaving: 4
        case .removed: 5
        }
    }

    init?(wireValue: UInt8) {
        switch wireValue {
        case 0: self = .joining
        case 1: self = .up
        case 2: self = .unreachable
        case 3: self = .down
        case 4: self = .leaving
        case 5: self = .removed
        default: return nil
        }
    }

    /// Whether messages to the node are sent at all (`false`: dropped or failed at once).
    var isReachableForSending: Bool {
        switch self {
        case .joining, .up, .unreachable, .leaving: true
        case .down, .removed: false
        }
    }
}

/// A member of the cluster: a node incarnation and its status.
public struct Member: Sendable, Hashable, CustomStringConvertible {
    /// The node (name and incarnation).
    public let node: ClusterNode
    /// Its status as this node sees it.
    public let status: MemberStatus

    public init(node: ClusterNode, status: MemberStatus) {
        self.node = node
        self.status = status
    }

    public var description: String { "\(node) \(status)" }
}

/// A change of a member's status, on `ClusterSystem.memberEvents`, in the order this node
/// decided them.
public struct MemberEvent: Sendable, Hashable, CustomStringConvertible {
    /// The member after the change.
    public let member: Member
    /// Its status before (`nil` when the node was first seen).
    public let previous: MemberStatus?

    public var description: String {
        "\(member.node): \(previous.map(\.description) ?? "new") → \(member.status)"
    }
}
