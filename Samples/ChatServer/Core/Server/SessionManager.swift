import Mailbox

/// What the session manager is asked: it spawns a session per connection, under a limit, and
/// tells them all when the server shuts down.
enum SessionManagerMessage: Sendable {
    case open(any ClientConnection)
    case sessionEnded(id: UInt64)
    case shutdown
}

/// Counts open connections, so that a shutdown can wait until every one has been flushed and closed.
///
/// Thread-safety: `state` is behind a lock; waiters are resumed outside it.
final class ConnectionTracker: Sendable {
    private struct State {
        var open = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedValueBox(State())

    func opened() {
        state.withLockedValue { $0.open += 1 }
    }

    func closed() {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.open -= 1
            guard state.open == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var openCount: Int { state.withLockedValue { $0.open } }

    /// Returns once no connection is open, or once the task is cancelled.
    func waitUntilAllClosed() async {
        let id = state.withLockedValue { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLockedValue { state -> Bool in
                    if state.open == 0 || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLockedValue { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

enum SessionManager {
    static func behavior(server: ServerContext, tracker: ConnectionTracker,
                         registry: ActorRef<RegistryMessage>, directory: ActorRef<DirectoryMessage>) -> Behavior<SessionManagerMessage> {
        .setup { context in
            var sessions: [UInt64: ActorRef<SessionMessage>] = [:]
            var shuttingDown = false
            let configuration = server.configuration
            let farewell = Replies.error("Closing Link: SendQ exceeded")

            return Behavior<SessionManagerMessage>.receive { context, message in
                switch message {
                case let .open(connection):
                    tracker.opened()
                    guard !shuttingDown, sessions.count < configuration.maxClients else {
                        server.publish(.refused(host: connection.peerHost))
                        connection.open(sendQueueLimit: 4096, farewell: nil, onRead: { _ in }, onClose: { _ in tracker.closed() })
                        let why = shuttingDown ? "Server shutting down" : "Closing Link: \(connection.peerHost) (Too many connections)"
                        connection.closeGracefully(final: Replies.error(why))
                        return .same
                    }
                    let gate = InputGate(connection: connection)
                    let session = try context.spawnAnonymous(Session.behavior(server: server, connection: connection, gate: gate,
                                                                              registry: registry, directory: directory))
                    context.watch(session, with: .sessionEnded(id: connection.id))
                    sessions[connection.id] = session
                    server.counters.connections.add(1, ordering: .relaxed)
                    server.publish(.connected(id: connection.id, host: connection.peerHost))
                    connection.open(sendQueueLimit: configuration.sendQueueBytes, farewell: farewell,
                                    onRead: { bytes in
                                        gate.received(bytes.count)
                                        session.tell(.received(bytes))
                                    },
                                    onClose: { reason in
                                        // The nick is free as soon as the client has gone (a client that
                                        // reconnects at once may take it again); the session's own release,
                                        // after any claim it made, follows.
                                        registry.tell(.release(id: connection.id))
                                        session.tell(.connectionClosed(reason))
                                        tracker.closed()
                                    })
                case let .sessionEnded(id):
                    if sessions.removeValue(forKey: id) != nil {
                        server.counters.connections.add(-1, ordering: .relaxed)
                    }
                case .shutdown:
                    shuttingDown = true
                    for session in sessions.values { session.tell(.serverShutdown) }
                }
                return .same
            }
        }
    }
}
