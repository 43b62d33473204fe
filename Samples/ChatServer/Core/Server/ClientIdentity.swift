import Mailbox

/// Who a client is, as the other actors see it: its name, its session and its connection.
///
/// A snapshot: a session sends a fresh one whenever its nick or modes change.
struct ClientIdentity: Sendable {
    /// The connection's id: unique in the process, stable for the client's whole life.
    let id: UInt64
    var nick: String
    let user: String
    let host: String
    let realName: String
    let session: ActorRef<SessionMessage>
    let connection: any ClientConnection
    var isOperator = false
    var isInvisible = false
    var away: String?
    /// For a user of another node (cluster): who it is there. `nil` for this node's clients.
    /// A remote user's `connection` sends to its node, and its `session` is a sink.
    var remote: ChatUserRef?

    /// `nick!user@host`, the prefix of every line the client's actions produce.
    var prefix: String { "\(nick)!\(user)@\(host)" }

    /// Queues one of the server's lines for this client.
    func send(_ bytes: [UInt8]) {
        connection.send(bytes)
    }
}

/// Makes a line reach each client at most once when several actors fan it out: a `QUIT` or
/// `NICK` is sent by every channel the client shares with others, and a peer in two of those
/// channels must see it once.
///
/// Thread-safety: `claim` is called by several channel actors at once; `seen` is behind a lock.
final class DeliverOnce: Sendable {
    private let seen: LockedValueBox<Set<UInt64>>

    init(excluding ids: Set<UInt64> = []) {
        seen = LockedValueBox(ids)
    }

    /// True the first time it is called with `id`.
    func claim(_ id: UInt64) -> Bool {
        seen.withLockedValue { $0.insert(id).inserted }
    }
}
