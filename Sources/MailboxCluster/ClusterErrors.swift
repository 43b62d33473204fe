import Mailbox
import MailboxNATS

/// Why a remote actor counts as terminated when its node went away: the failure its watches
/// report (`ActorRef.onTermination`; `.childFailed` is not involved: a remote actor is no child).
public struct ClusterNodeDownError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The node that was downed (or left, or this node itself when it was downed).
    public let node: ClusterNode
    /// How it went: "downed", "left", "down" (it was down when watched), or "this node was
    /// downed".
    public let reason: String

    public var description: String { "node \(node) is down (\(reason))" }
}

/// The failure of a remote actor, as its node described it (errors do not cross the wire;
/// their description does).
public struct RemoteActorFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The actor that failed.
    public let actor: ActorAddress
    /// `String(describing:)` of the error that stopped it, on its node.
    public let failure: String

    public var description: String { "\(actor) failed: \(failure)" }
}

/// Why a node could not join or act in a cluster.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// The node or cluster name is not a valid subject token.
        case invalidName
        /// NATS could not be reached (see `nats`).
        case connectionFailed
        /// A claims bucket could not be made or did not answer (see `nats`; JetStream must
        /// be enabled on the server), or a claim kept changing under this node's feet.
        case claimFailed
    }

    public let code: Code
    public let text: String
    public var nats: NATSError?

    public var description: String {
        "\(code): \(text)" + (nats.map { " (\($0))" } ?? "")
    }
}

/// What a remote node sent that could not be delivered here: the dead letter's message when
/// the recipient is gone or its type unknown (the bytes are kept, not decoded).
public struct UndeliveredRemoteMessage: Sendable, CustomStringConvertible {
    /// The manifest the sender wrote (`name@version`).
    public let manifest: String
    /// The serialized message.
    public let payload: [UInt8]
    /// The node it came from.
    public let from: ClusterNode
    /// Why it was not understood (a `.notUnderstood` dead letter); nil when the recipient was
    /// simply gone.
    public let why: String?

    public var description: String {
        "\(manifest) (\(payload.count) bytes from \(from))" + (why.map { ": \($0)" } ?? "")
    }
}

/// A message this node could not encode for another node (a `.notUnderstood` dead letter on
/// the sending node): the message, and the codec's error.
public struct UnencodableMessage: Sendable, CustomStringConvertible {
    /// The message that was told.
    public let message: any Sendable
    /// What the codec said.
    public let why: String

    public var description: String { "\(why): \(message)" }
}
