import Foundation

/// Everything a chat server is told at start: where to listen, who it is, its limits.
///
/// A value type: build one, adjust its fields, hand it to `ChatServer`. Defaults are those of the
/// `chat-server` executable.
public struct ChatServerConfiguration: Sendable {
    /// The address to listen on (numeric or a name). Default `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// The TCP port; `0` picks an ephemeral one (read it from `ChatServer.listen()`).
    public var port: UInt16 = 6667
    /// The server's name, the prefix of every numeric reply.
    public var serverName: String = "irc.mailbox.local"
    /// The network's name (ISUPPORT `NETWORK`, the welcome line).
    public var networkName: String = "Mailbox"
    /// Operator accounts: name → password, for `OPER`.
    public var operators: [String: String] = [:]
    /// The message of the day, one entry per line; `nil` answers `MOTD` with 422.
    public var motd: [String]? = ["Welcome to a chat server running on Mailbox actors."]
    /// A connection password; when set, a client must send the same `PASS` before registering.
    public var password: String?
    /// Bytes a connection may have queued for sending before it is cut with
    /// `ERROR :SendQ exceeded` (a slow consumer).
    public var sendQueueBytes: Int = 512 * 1024
    /// Connections accepted at once; one more gets `ERROR` and is closed.
    public var maxClients: Int = 10_000
    /// Fake-lag flood control as ircds do it: each command costs `floodCost`; a client more than
    /// `floodBurst` ahead of the clock has its further commands held until the clock catches up.
    public var floodControl: Bool = true
    /// What each command costs in flood control.
    public var floodCost: Duration = .seconds(1)
    /// How far ahead of the clock a client may run before its commands are held.
    public var floodBurst: Duration = .seconds(10)
    /// A registered client silent this long is sent a `PING`.
    public var pingInterval: Duration = .seconds(90)
    /// A client that does not answer a `PING` within this is dropped (`Ping timeout`).
    public var pingTimeout: Duration = .seconds(120)
    /// A connection that has not registered within this is closed.
    public var registrationTimeout: Duration = .seconds(60)
    /// ISUPPORT limits.
    public var nickLength = 30
    public var channelLength = 50
    public var topicLength = 390
    public var kickLength = 390
    public var awayLength = 200
    public var channelsPerUser = 50
    public var maxTargets = 4
    public var maxBans = 100
    /// The version string in 002, 004 and `VERSION`.
    public var version: String = "mailbox-chat-1.0"
    /// When the server was created (003).
    public var createdAt: Date = Date()
    /// Called before each command a session handles (with the command) and each message a
    /// channel handles (with `"channel:" + kind`); a throw is a failure of that actor. For fault
    /// injection in tests; `nil` in production.
    public var faultHook: (@Sendable (String) throws -> Void)?

    /// A configuration with the defaults.
    public init() {}
}
