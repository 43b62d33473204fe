import Foundation
import Mailbox
import MailboxNet
import Synchronization

/// Something that happened in a chat server, published on `ChatServer.events`.
public enum ChatServerEvent: Sendable, Equatable, CustomStringConvertible {
    /// The listener is accepting connections on this address.
    case listening(SocketAddress)
    /// A connection was accepted (by its id and peer host).
    case connected(id: UInt64, host: String)
    /// A connection was refused because `maxClients` were connected.
    case refused(host: String)
    /// A client completed registration.
    case registered(nick: String, host: String)
    /// A registered client changed its nick.
    case nickChanged(from: String, to: String)
    /// A connection ended; `nick` is nil when it never registered.
    case disconnected(id: UInt64, nick: String?, reason: String)
    /// A channel came into being (its first member joined) or ended (its last member left).
    case channelCreated(String)
    case channelClosed(String)
    /// An actor of the server failed and supervision handled it (a session is stopped and its
    /// connection closed; a channel is restarted with its members; the listener is restarted).
    case failed(actor: String, error: String)
    /// A client was cut because its send queue was full (a slow consumer).
    case sendQueueExceeded(id: UInt64, nick: String?)
    /// The server began its shutdown.
    case shuttingDown
    /// Several nodes: another node's chat server was found (by its cluster node, `name:incarnation`).
    case peerUp(String)
    /// Several nodes: another node was downed or left; `users` of its users quit here.
    case peerDown(String, users: Int)

    public var description: String {
        switch self {
        case let .listening(address): "listening on \(address)"
        case let .connected(id, host): "connection \(id) from \(host)"
        case let .refused(host): "refused a connection from \(host): too many clients"
        case let .registered(nick, host): "\(nick) registered from \(host)"
        case let .nickChanged(from, to): "\(from) is now \(to)"
        case let .disconnected(id, nick, reason): "connection \(id) (\(nick ?? "unregistered")) closed: \(reason)"
        case let .channelCreated(name): "channel \(name) created"
        case let .channelClosed(name): "channel \(name) closed"
        case let .failed(actor, error): "\(actor) failed: \(error)"
        case let .sendQueueExceeded(id, nick): "connection \(id) (\(nick ?? "unregistered")) exceeded its send queue"
        case .shuttingDown: "shutting down"
        case let .peerUp(node): "node \(node) up"
        case let .peerDown(node, users): "node \(node) down: \(users) of its users quit"
        }
    }
}

/// Counters of a running server, for `LUSERS` and for monitoring.
public struct ChatServerStatistics: Sendable, Equatable {
    /// Open connections, registered or not.
    public var connections: Int
    /// Registered clients.
    public var users: Int
    /// Registered clients with user mode +i.
    public var invisibleUsers: Int
    /// Clients that are IRC operators.
    public var operators: Int
    /// Channels with at least one member.
    public var channels: Int
    /// The most registered clients at once since start.
    public var maxUsers: Int
    /// PRIVMSG/NOTICE deliveries since start: one per recipient.
    public var messagesRelayed: Int
}

/// The server's counters, updated by its actors. Thread-safety: atomics.
final class ServerCounters: Sendable {
    let connections = Atomic<Int>(0)
    let users = Atomic<Int>(0)
    let invisibleUsers = Atomic<Int>(0)
    let operators = Atomic<Int>(0)
    let channels = Atomic<Int>(0)
    let maxUsers = Atomic<Int>(0)
    let messagesRelayed = Atomic<Int>(0)

    func userRegistered() {
        let now = users.add(1, ordering: .relaxed).newValue
        var seen = maxUsers.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = maxUsers.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    var snapshot: ChatServerStatistics {
        ChatServerStatistics(
            connections: connections.load(ordering: .relaxed),
            users: users.load(ordering: .relaxed),
            invisibleUsers: invisibleUsers.load(ordering: .relaxed),
            operators: operators.load(ordering: .relaxed),
            channels: channels.load(ordering: .relaxed),
            maxUsers: maxUsers.load(ordering: .relaxed),
            messagesRelayed: messagesRelayed.load(ordering: .relaxed)
        )
    }
}

/// What every actor of one server shares: its configuration, replies, counters and event input.
final class ServerContext: Sendable {
    let configuration: ChatServerConfiguration
    let replies: Replies
    let counters = ServerCounters()
    let events: Signal<ChatServerEvent, Never>
    private let eventInput: Signal<ChatServerEvent, Never>.Observer
    /// When the server was created, as 003 says it.
    let createdText: String
    /// The link to the other nodes when the server runs on several (`nil`: alone).
    let cluster: (any ChatClusterLink)?

    init(configuration: ChatServerConfiguration, cluster: (any ChatClusterLink)? = nil) {
        self.configuration = configuration
        self.cluster = cluster
        replies = Replies(serverName: configuration.serverName)
        (events, eventInput) = Signal<ChatServerEvent, Never>.pipe()
        createdText = Self.format(configuration.createdAt)
    }

    /// A date as `TIME` and 003 show it: "Tuesday November 24 2026 -- 22:44:01 UTC".
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEEE MMMM d yyyy '--' HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }

    func publish(_ event: ChatServerEvent) {
        eventInput.send(value: event)
    }

    /// Runs the configuration's fault hook, if any (fault injection in tests).
    func checkFault(_ point: String) throws {
        try configuration.faultHook?(point)
    }
}
