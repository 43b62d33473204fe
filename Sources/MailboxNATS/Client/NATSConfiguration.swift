/// How a `NATSConnection` connects, authenticates, keeps the link alive and reconnects.
///
/// A plain value (`Sendable`). Every limit is a named field with its default here; the
/// defaults are those of the Go client (nats.go) unless said otherwise.
public struct NATSConfiguration: Sendable {
    /// Servers to try, in order (shuffled when `randomizeServers`): `nats://host:port`,
    /// `host:port`, `nats://user:password@host:port`, `nats://token@host:port`; IPv6 hosts in
    /// brackets (`nats://[::1]:4222`). The port defaults to 4222. Servers the cluster
    /// announces in `INFO`'s `connect_urls` are added while connected.
    public var servers: [String]
    /// The connection's name, shown by the server's monitoring (`/connz`).
    public var name: String?
    /// User name, sent in `CONNECT` (a URL's own credentials take precedence).
    public var user: String?
    /// Password for `user`.
    public var password: String?
    /// An authentication token, sent in `CONNECT`.
    public var token: String?
    /// Receive our own publications on our own subscriptions (NATS's default: true).
    public var echo = true
    /// How long one attempt may take: TCP connect, then `INFO`, `CONNECT`, `PING` → `PONG`.
    public var connectTimeout: Duration = .seconds(2)
    /// How often the client pings the server to find a dead link.
    public var pingInterval: Duration = .seconds(120)
    /// Pings without a `PONG` after which the link counts as stale and is reconnected.
    public var maxPingsOutstanding = 2
    /// Whether a lost connection is re-established (false: it closes).
    public var allowReconnect = true
    /// Failed attempts per server before it is dropped from the list (negative: never).
    public var maxReconnectAttempts = 60
    /// Time between two attempts on the same server.
    public var reconnectWait: Duration = .seconds(2)
    /// A random extra wait of up to this much per attempt, so clients do not reconnect in step.
    public var reconnectJitter: Duration = .milliseconds(100)
    /// Bytes of publications (encoded) kept while disconnected and sent after reconnecting;
    /// a publish beyond it fails with `reconnectBufferExceeded`. nats.go: 8 MiB.
    public var reconnectBufferSize = 8 * 1024 * 1024
    /// Bytes of publications waiting for the socket while connected; a publish beyond it fails
    /// with `outboundBufferExceeded` (the server does not read as fast as we publish: wait for
    /// `flush()` and publish again). The socket's own send queue holds up to half as much
    /// again. 8 MiB: larger buffers only cost memory and cache misses (measured in
    /// `docs/Performance.md`).
    public var outboundBufferLimit = 8 * 1024 * 1024
    /// Time-out of `request` when none is given.
    public var requestTimeout: Duration = .seconds(5)
    /// Shuffle `servers` before the first attempt (nats.go's default), so clients spread.
    public var randomizeServers = true
    /// Keep retrying the initial connection as a reconnect does, instead of failing `connect`
    /// after one round over the servers.
    public var retryOnFailedConnect = false
    /// The prefix of reply subjects (`_INBOX`).
    public var inboxPrefix = "_INBOX"

    /// A configuration for these servers, with every other field at its default.
    public init(servers: [String]) {
        self.servers = servers
    }

    /// A configuration for one server URL.
    public init(url: String) {
        self.servers = [url]
    }
}

/// Where a connection stands; a `Property` of the connection (`NATSConnection.state`).
///
/// ```
/// connecting ──PONG──▶ connected ──link lost──▶ reconnecting ──PONG──▶ connected
///      │                   │                         │
///      └──────── close() or a final error ───────────┴──────────────▶ closed
/// ```
public enum NATSConnectionState: Sendable, Hashable {
    /// The first connection is being made.
    case connecting
    /// The handshake is done: publications are written as they come.
    case connected
    /// The link was lost; publications go to the reconnect buffer.
    case reconnecting
    /// Closed for good.
    case closed
}

/// Something that happened to a connection, on `NATSConnection.events`.
public enum NATSConnectionEvent: Sendable {
    /// The connection is up (first time or after a reconnect) to this server.
    case connected(server: String)
    /// The link to the server was lost; reconnecting follows unless the error is final.
    case disconnected(NATSError?)
    /// The server sent `-ERR` (permissions, slow consumer, ...), or a subscription dropped
    /// messages as a slow consumer.
    case error(NATSError)
    /// The server announced cluster members (`connect_urls`) added to the server list.
    case discoveredServers([String])
    /// The server is shutting down gracefully (lame duck mode): expect a reconnect.
    case lameDuckMode
    /// The connection is closed for good (by `close()`, a final error or no server left).
    case closed(NATSError?)
}

/// What the server said about itself in `INFO` (a plain value; optional fields are those
/// older servers may leave out).
public struct NATSServerInfo: Sendable, Decodable {
    /// The server's unique id.
    public var serverID: String
    /// Its configured name.
    public var serverName: String?
    /// Its version, "2.9.10".
    public var version: String
    /// The protocol level (1: supports `INFO` updates while connected).
    public var proto: Int?
    /// Where it listens.
    public var host: String?
    /// Its client port.
    public var port: Int?
    /// Whether it supports `HPUB`/`HMSG` (2.2 and later).
    public var headers: Bool?
    /// The largest message it accepts, in bytes; `publish` checks against it.
    public var maxPayload: Int
    /// Whether it asks for credentials (a server with `no_auth_user` does not, yet checks them).
    public var authRequired: Bool?
    /// Whether JetStream is enabled.
    public var jetStream: Bool?
    /// The other servers of its cluster that clients may connect to.
    public var connectURLs: [String]?
    /// The server is shutting down gracefully (lame duck mode).
    public var lameDuckMode: Bool?
    /// This client's id on the server (as `/connz` shows it).
    public var clientID: UInt64?

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id", serverName = "server_name", version, proto, host, port, headers
        case maxPayload = "max_payload", authRequired = "auth_required", jetStream = "jetstream"
        case connectURLs = "connect_urls", lameDuckMode = "ldm", clientID = "client_id"
    }
}
