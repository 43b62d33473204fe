import Dispatch
import Foundation
import Mailbox
import MailboxNet
import Synchronization

/// An IRC server on Mailbox actors.
///
/// ```
/// let server = try ChatServer(configuration: configuration)
/// let address = try server.listen()          // the address bound (port 0: an ephemeral one)
/// …
/// await server.shutdown()                    // every client gets ERROR, connections are flushed
/// ```
///
/// The graceful shutdown is two tasks in the actor system's coordinated shutdown: in phase
/// `service-unbind` the listener closes its socket; in `service-requests-done` every client
/// gets `ERROR :Server shutting down` and its connection is flushed and closed. So
/// `system.terminate()` (or a signal, with `installSignalHandlers`) shuts the server down
/// gracefully too, also when it runs in a system of the application's.
///
/// The actors, all in `system` (its own, unless one is given): `/user/nicks` (the nick registry),
/// `/user/channels` (the channel directory, a channel actor per channel under it),
/// `/user/sessions` (a session actor per connection under it) and `/user/listener`. See
/// `docs/ChatServer.md` for the supervision tree.
///
/// Thread-safety: every method may be called from any thread.
public final class ChatServer: Sendable {
    /// The configuration the server runs with.
    public let configuration: ChatServerConfiguration
    /// The actor system the server's actors run in.
    public let system: ActorSystem

    private let context: ServerContext
    private let ownsSystem: Bool
    private let tracker = ConnectionTracker()
    private let registry: ActorRef<RegistryMessage>
    private let directory: ActorRef<DirectoryMessage>
    private let sessions: ActorRef<SessionManagerMessage>
    private let steps: ServerShutdown
    /// The link to the other nodes, when the server is one node of several.
    let link: (any ChatClusterLink)?
    private let relay: ActorRef<ChatRelayMessage>?
    private let linkStarted = Atomic(false)

    /// Starts the server's actors (it does not listen yet: see `listen()`).
    ///
    /// - Parameter system: the actor system to run in; by default the server makes its own (on
    ///   the default pool) and shuts it down in `shutdown()`.
    /// - Throws: `ActorSystemError` if the actors cannot be spawned (for example, names in use in
    ///   a given system); `CoordinatedShutdownError` if a given system's coordinated shutdown
    ///   has no `service-unbind` or `service-requests-done` phase, or has passed them.
    public convenience init(configuration: ChatServerConfiguration, system: ActorSystem? = nil) throws {
        try self.init(configuration: configuration, system: system, link: nil)
    }

    /// Starts the server's actors; with `link`, as one node of a cluster (see
    /// `ChatServer+Cluster.swift`): a node relay actor, `/user/relay`, receives the other nodes'
    /// syncs, and the link starts delivering them.
    init(configuration: ChatServerConfiguration, system: ActorSystem?, link: (any ChatClusterLink)?) throws {
        self.configuration = configuration
        self.link = link
        ownsSystem = system == nil
        let system = system ?? ActorSystem(name: "chat-server")
        self.system = system
        let context = ServerContext(configuration: configuration, cluster: link)
        self.context = context
        registry = try system.spawn(NickRegistry.behavior(server: context, state: RegistryState()), name: "nicks")
        directory = try system.spawn(ChannelDirectory.behavior(server: context, state: DirectoryState(), registry: registry), name: "channels")
        sessions = try system.spawn(SessionManager.behavior(server: context, tracker: tracker, registry: registry, directory: directory),
                                    name: "sessions")
        if let link {
            relay = try system.spawn(NodeRelay.behavior(server: context, link: link, registry: registry, directory: directory), name: "relay")
        } else {
            relay = nil
        }
        // Failures of the server's actors, as the runtime reports them, become the server's events.
        let paths = [registry.path, directory.path, sessions.path, "/user/listener"]
        let failureObservation = system.events.observeValues { event in
            guard case let .failed(address, error) = event,
                  paths.contains(where: { address.path == $0 || address.path.hasPrefix($0 + "/") }) else { return }
            context.publish(.failed(actor: address.path, error: "\(error)"))
        }
        steps = ServerShutdown(context: context, sessions: sessions, tracker: tracker, failureObservation: failureObservation)
        try steps.register(in: system)
    }

    /// Binds `configuration.host:port` and starts accepting clients.
    ///
    /// - Returns: the address bound (with the port chosen when `port` was 0).
    /// - Throws: `SocketError` when the address cannot be bound (in use, not local…).
    /// On several nodes, the node joins the chat cluster here: the other nodes find it (and it
    /// them) once it listens, so that `events` observed before `listen()` see every peer.
    @discardableResult
    public func listen() throws -> SocketAddress {
        let socket = try TCPListener(host: configuration.host, port: configuration.port)
        let address = socket.localAddress
        let ref = try system.spawn(Listener.behavior(server: context, first: socket, address: address, sessions: sessions), name: "listener")
        steps.listenerStarted(ref)
        startLink()
        return address
    }

    /// Starts the cluster link (once): the relay is listed, the other nodes' syncs flow.
    func startLink() {
        guard let link, let relay, !linkStarted.exchange(true, ordering: .relaxed) else { return }
        link.start(relay: relay)
    }

    /// Serves a client on an already open connection (the listener does this for each accepted
    /// socket; tests use it with in-memory connections).
    public func attach(_ connection: any ClientConnection) {
        sessions.tell(.open(connection))
    }

    /// What happens in the server: connections, registrations, channels, failures.
    /// Observers are called on the actors' threads: keep them short.
    public var events: Signal<ChatServerEvent, Never> { context.events }

    /// The server's counters now.
    public var statistics: ChatServerStatistics { context.counters.snapshot }

    /// Connections not yet closed (including ones being flushed).
    public var openConnections: Int { tracker.openCount }

    /// Shuts the server down gracefully: stops accepting (the listening socket is closed), tells
    /// every client `ERROR :Server shutting down`, waits until every connection is flushed and
    /// closed (at most `timeout`), then, if the server made its actor system, terminates it
    /// (`system.terminate()`, whose phases find the server's two steps done). Idempotent.
    ///
    /// In a system of the application's, the application terminates the system instead: its
    /// coordinated shutdown runs the same steps in phases `service-unbind` and
    /// `service-requests-done` (bounded by their time-outs).
    public func shutdown(timeout: Duration = .seconds(5)) async {
        await steps.unbind()
        await steps.closeSessions(timeout: timeout)
        link?.stop()
        if ownsSystem {
            _ = await system.terminate()
        }
    }
}

extension ChatServer {
    /// Opt-in: on the first SIGINT or SIGTERM, runs the actor system's coordinated shutdown
    /// (`system.coordinatedShutdown.installSignalHandlers`), which shuts the server down
    /// gracefully (see `shutdown(timeout:)`) and then terminates the system; then calls
    /// `completion` (where an executable exits).
    ///
    /// The signals' default action is turned off for the process until the system terminates
    /// or the returned hook is disposed.
    @discardableResult
    public func shutdownOnTerminationSignals(then completion: @escaping @Sendable () -> Void) -> any Disposable {
        let system = system
        let hook = system.coordinatedShutdown.installSignalHandlers([SIGINT, SIGTERM])
        Task {
            _ = await system.whenTerminated
            completion()
        }
        return hook
    }
}
