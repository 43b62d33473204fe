import Mailbox

/// A user as every node names it: its home node (the incarnation it registered on) and its
/// connection id there. Unique across the cluster for the user's whole life.
struct ChatUserRef: Codable, Hashable, Sendable {
    let node: ClusterNode
    let id: UInt64
}

/// What the other nodes know of a registered user of a node (WHOIS, WHO, NAMES, prefixes).
struct ChatUserRecord: Codable, Equatable, Sendable {
    /// The connection id on the user's home node.
    let id: UInt64
    var nick: String
    let user: String
    let host: String
    let realName: String
    var isOperator: Bool
    var isInvisible: Bool
    var away: String?

    init(id: UInt64, nick: String, user: String, host: String, realName: String,
         isOperator: Bool = false, isInvisible: Bool = false, away: String? = nil) {
        self.id = id
        self.nick = nick
        self.user = user
        self.host = host
        self.realName = realName
        self.isOperator = isOperator
        self.isInvisible = isInvisible
        self.away = away
    }

    /// The record of `identity` (a remote user's: its id on its own node).
    init(_ identity: ClientIdentity) {
        id = identity.remote?.id ?? identity.id
        nick = identity.nick
        user = identity.user
        host = identity.host
        realName = identity.realName
        isOperator = identity.isOperator
        isInvisible = identity.isInvisible
        away = identity.away
    }
}

/// When and where a channel's topic or modes were last set: of two changes, the later one
/// wins on every node (ties: the greater node name), so that nodes that saw two changes in
/// different orders end with the same state.
struct ChannelStamp: Codable, Comparable, Sendable {
    /// Milliseconds since 1970 on the node that made the change.
    let at: Int64
    /// The name of that node.
    let node: String

    static let zero = ChannelStamp(at: 0, node: "")

    static func < (lhs: ChannelStamp, rhs: ChannelStamp) -> Bool {
        (lhs.at, lhs.node) < (rhs.at, rhs.node)
    }
}

/// A channel's modes, as they travel between nodes (the whole set, last writer wins by `stamp`).
struct ChannelModesRecord: Codable, Equatable, Sendable {
    struct Ban: Codable, Equatable, Sendable {
        let mask: String
        let setBy: String
        let setAt: Int
    }

    var inviteOnly: Bool
    var moderated: Bool
    var noExternal: Bool
    var topicLocked: Bool
    var secret: Bool
    var key: String?
    var limit: Int?
    var bans: [Ban]
    var stamp: ChannelStamp
}

/// A channel's topic as it travels between nodes.
struct ChannelTopicRecord: Codable, Equatable, Sendable {
    let text: String
    let setBy: String
    let setAt: Int
}

/// A member's status in a channel (`+o`, `+v`).
struct ChannelMemberStatus: Codable, Equatable, Sendable {
    let user: ChatUserRef
    let isOperator: Bool
    let hasVoice: Bool
}

/// A change to a channel that a node made and sends to every other node (or, for `.line`, to
/// every node with members in the channel), so that each node's copy of the channel follows.
/// Lines are the exact lines the node's own members saw.
enum ChannelSync: Codable, Sendable {
    /// The user (of the sending node) joined; `isOperator` when it created the channel.
    case joined(ChatUserRecord, isOperator: Bool)
    /// The user (of the sending node) left with `PART`.
    case parted(ChatUserRef, line: String)
    /// An operator on the sending node kicked `target` (of any node).
    case kicked(ChatUserRef, line: String)
    /// The topic was set (`nil`: cleared), last writer wins by `stamp`.
    case topic(ChannelTopicRecord?, stamp: ChannelStamp, line: String)
    /// Modes changed: the whole set afterwards, and the members whose `+o`/`+v` changed.
    case modes(ChannelModesRecord, statuses: [ChannelMemberStatus], line: String)
    /// A PRIVMSG or NOTICE to the channel: fanned out to the receiving node's members.
    case line(String)
    /// The sending node's whole view of the channel (to a node that just came up): its modes,
    /// topic, creation time and its own members.
    case state(modes: ChannelModesRecord, topic: ChannelTopicRecord?, topicStamp: ChannelStamp, createdAt: Int,
               members: [ChannelSnapshotMember])
}

/// A member of a channel in `ChannelSync.state`.
struct ChannelSnapshotMember: Codable, Sendable {
    let user: ChatUserRecord
    let isOperator: Bool
    let hasVoice: Bool
}

/// What one chat node tells another: its users' records, departures, channel changes and
/// lines for one user. Sent with `ChatClusterLink`, FIFO per pair of nodes.
enum ChatSync: Codable, Sendable {
    /// A registered user of the sending node, new or changed (nick, away, modes).
    case user(ChatUserRecord)
    /// A user of the sending node left (`reason`: its QUIT message).
    case quit(id: UInt64, reason: String)
    /// A change to channel `name`.
    case channel(name: String, ChannelSync)
    /// A line for the receiving node's user `id` (a PRIVMSG, NOTICE or INVITE to a nick).
    case deliver(id: UInt64, line: String)
}

/// What a node's relay actor receives: the other nodes' syncs, and the cluster's news of nodes
/// coming and going (from `ChatClusterLink`).
enum ChatRelayMessage: Codable, Sendable {
    /// Syncs from `node`, in the order it sent them.
    case sync(from: ClusterNode, ChatSync)
    /// A node's relay was found: it gets this node's users and channels.
    case peerUp(ClusterNode)
    /// A node was downed or left: its users quit here.
    case peerDown(ClusterNode)
}
