import Mailbox
import MailboxNet

/// The chat server's link to the other nodes of its cluster: sends `ChatSync`s to their relay
/// actors, claims nicks cluster-wide, and tells this node's relay which nodes come and go.
///
/// `ClusterChatLink` is the real one (MailboxCluster, NATS, a KV bucket); tests use an
/// in-memory one. The server's actors never see the cluster's types.
///
/// Contract: what one caller sends to one node arrives in the order it was sent, and sends
/// ordered by happens-before (one actor's, or one actor's before it tells another) arrive in
/// that order (at most once: a node that goes down loses what was on its way).
/// Thread-safety: every method may be called from any thread.
protocol ChatClusterLink: AnyObject, Sendable {
    /// This node.
    var node: ClusterNode { get }
    /// Sends `sync` to `node`'s relay (dropped if the node is not known or gone).
    func send(_ sync: ChatSync, to node: ClusterNode)
    /// Sends `sync` to every other node known to be up.
    func broadcast(_ sync: ChatSync)
    /// Claims `key` (a folded nick) for this node, then calls `completion` (on any thread) with
    /// true when this node owns it, false when a live node does, nil when the claim failed.
    /// Claims and releases of one key are applied in the order they are made.
    func claim(_ key: String, completion: @escaping @Sendable (Bool?) -> Void)
    /// Releases `key` if this node owns it.
    func release(_ key: String)
    /// Starts telling `relay` the other nodes' syncs and the nodes that come and go.
    func start(relay: ActorRef<ChatRelayMessage>)
    /// Stops: no more sends, no more news.
    func stop()
}

extension ChatClusterLink {
    /// How `identity` is named across the cluster.
    func ref(of identity: ClientIdentity) -> ChatUserRef {
        identity.remote ?? ChatUserRef(node: node, id: identity.id)
    }
}

/// The "connection" of a user of another node, as this node's registry and channels hold it:
/// a line sent to it goes to its node, for that one user. Channels never fan out through it
/// (they send one `.line` per node: `ChannelState.remoteNodes`).
///
/// Thread-safety: immutable; `send` may be called from any thread.
final class RemoteClientConnection: ClientConnection {
    let id: UInt64
    let peerHost: String
    let user: ChatUserRef
    private let link: any ChatClusterLink

    init(id: UInt64, host: String, user: ChatUserRef, link: any ChatClusterLink) {
        self.id = id
        peerHost = host
        self.user = user
        self.link = link
    }

    func open(sendQueueLimit: Int, farewell: [UInt8]?, onRead: @escaping @Sendable ([UInt8]) -> Void,
              onClose: @escaping @Sendable (TCPConnection.CloseReason) -> Void) {
        preconditionFailure("RemoteClientConnection: a remote user's connection is never opened here")
    }

    @discardableResult
    func send(_ bytes: [UInt8]) -> TCPConnection.SendResult {
        // The line as serialized, CRLF included: the home node's registry sends it as it is.
        link.send(.deliver(id: user.id, line: String(decoding: bytes, as: UTF8.self)), to: user.node)
        return .queued
    }

    func closeGracefully(final: [UInt8]?) {}
    func pauseReading() {}
    func resumeReading() {}
}
