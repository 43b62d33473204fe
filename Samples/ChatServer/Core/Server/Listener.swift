import Mailbox
import MailboxNet

/// What the listener actor is asked.
enum ListenerMessage: Sendable {
    /// Accepting failed with an error the socket layer does not recover from by itself: the
    /// listener fails, and supervision restarts it (it binds the same address again).
    case acceptFailed(SocketError)
    /// Close the listening socket (so that connects are refused from now on), answer `true`,
    /// and stop.
    case stop(replyTo: ActorRef<Bool>?)
}

/// An accept error the listener does not handle: a failure, so that supervision restarts it.
struct ListenerFailure: Error, CustomStringConvertible {
    let error: SocketError
    var description: String { "accepting connections failed: \(error)" }
}

enum Listener {
    /// The listener actor: owns the listening socket and hands each accepted connection to the
    /// session manager. `first` is the socket bound when the server started (so that bind errors
    /// reach the caller); a restart binds the same host and port again.
    static func behavior(server: ServerContext, first: TCPListener, address: SocketAddress,
                         sessions: ActorRef<SessionManagerMessage>) -> Behavior<ListenerMessage> {
        let firstSocket = LockedValueBox<TCPListener?>(first)
        return Behavior<ListenerMessage>.supervise(.setup { context in
            let socket = try firstSocket.withLockedValue { $0.take() } ?? TCPListener(host: server.configuration.host, port: address.port)
            let myself = context.myself
            socket.startAccepting { result in
                switch result {
                case let .success(connection): sessions.tell(.open(connection))
                case let .failure(error): myself.tell(.acceptFailed(error))
                }
            }
            server.publish(.listening(socket.localAddress))
            return Behavior<ListenerMessage>.receiveMessage { message in
                switch message {
                case let .acceptFailed(error):
                    if error.isRecoverableAcceptError { return .same }
                    throw ListenerFailure(error: error)
                case let .stop(replyTo):
                    socket.close()
                    replyTo?.tell(true)
                    return .stopped
                }
            }
            .receiveLifecycle { _, event in
                switch event {
                case .postStop, .preRestart:
                    socket.close()
                    return .same
                default:
                    return .unhandled
                }
            }
        }).onFailure(.restartWithBackoff(minBackoff: .milliseconds(100), maxBackoff: .seconds(5), randomFactor: 0.2))
    }
}
