import Mailbox

/// The users of the other nodes that this node knows of, each with the id it has here (its
/// channels and registry key members by id): the node relay's decisions, as a pure value.
///
/// A user is known from its first record (`seen`) until it quits (`left`) or its node goes
/// down (`nodeDown`). News of a user that has left, or of a node that is down, comes late
/// (messages on their way when it happened) and is ignored: a user's ref is never reused
/// (a connection id on one node incarnation), and a downed incarnation never comes back.
///
/// Touched only by the relay's actor.
struct RemoteUsers {
    /// A user of another node.
    struct User: Equatable {
        /// Its id on this node (from a range no connection id reaches).
        let localID: UInt64
        let ref: ChatUserRef
        var record: ChatUserRecord

        /// `nick!user@host`.
        var prefix: String { "\(record.nick)!\(record.user)@\(record.host)" }
    }

    /// What a record changed.
    enum Change: Equatable {
        /// A user not known before.
        case added(User)
        /// Its nick changed (`oldPrefix`: its prefix before, for the NICK line).
        case renamed(User, oldPrefix: String)
        /// Something else changed (away, modes).
        case updated(User)
        /// Nothing changed.
        case unchanged(User)
        /// The user left, or its node is down: late news.
        case ignored
    }

    private(set) var users: [ChatUserRef: User] = [:]
    /// Users that left, kept so that late news of them is ignored (the oldest are forgotten
    /// past `departedLimit`).
    private var departed: Set<ChatUserRef> = []
    private var departedOrder: [ChatUserRef] = []
    private let departedLimit: Int
    private var downNodes: Set<ClusterNode> = []
    private var nextID: UInt64

    /// - Parameter firstLocalID: the first id given to a remote user; connection ids on this
    ///   node must stay below it.
    init(firstLocalID: UInt64 = 1 << 62, departedLimit: Int = 100_000) {
        nextID = firstLocalID
        self.departedLimit = departedLimit
    }

    /// `node` sent a record of one of its users.
    mutating func seen(_ record: ChatUserRecord, on node: ClusterNode) -> Change {
        let ref = ChatUserRef(node: node, id: record.id)
        if downNodes.contains(node) || departed.contains(ref) { return .ignored }
        guard var user = users[ref] else {
            let user = User(localID: nextID, ref: ref, record: record)
            nextID += 1
            users[ref] = user
            return .added(user)
        }
        guard user.record != record else { return .unchanged(user) }
        let oldPrefix = user.prefix
        let renamed = user.record.nick != record.nick
        user.record = record
        users[ref] = user
        return renamed ? .renamed(user, oldPrefix: oldPrefix) : .updated(user)
    }

    /// The user quit: it is forgotten (and later news of it ignored).
    mutating func left(_ ref: ChatUserRef) -> User? {
        guard let user = users.removeValue(forKey: ref) else {
            remember(ref)
            return nil
        }
        remember(ref)
        return user
    }

    /// `node` was downed or left: its users, forgotten, in no particular order.
    mutating func nodeDown(_ node: ClusterNode) -> [User] {
        guard downNodes.insert(node).inserted else { return [] }
        let gone = users.values.filter { $0.ref.node == node }
        for user in gone { users[user.ref] = nil }
        return gone
    }

    /// The id on this node of `ref`: this node's own client's id, or a known remote user's.
    func localID(of ref: ChatUserRef, me: ClusterNode) -> UInt64? {
        ref.node == me ? ref.id : users[ref]?.localID
    }

    private mutating func remember(_ ref: ChatUserRef) {
        guard departed.insert(ref).inserted else { return }
        departedOrder.append(ref)
        if departedOrder.count > departedLimit {
            let forgotten = departedOrder.count / 2
            for old in departedOrder[..<forgotten] { departed.remove(old) }
            departedOrder.removeFirst(forgotten)
        }
    }
}
