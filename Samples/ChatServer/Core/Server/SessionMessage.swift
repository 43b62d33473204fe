import Mailbox
import MailboxNet

/// What a session's actor receives: its client's bytes and the end of its connection, its
/// timers, and answers and notices from the registry and the channels. Each becomes an event of
/// its `SessionStateMachine`.
enum SessionMessage: Sendable {
    /// Bytes from the client, in order.
    case received([UInt8])
    /// The connection ended (the client left, was reset, or its send queue overflowed).
    case connectionClosed(TCPConnection.CloseReason)
    case registrationTimedOut
    /// The keep-alive timer: ping the client if it has been silent.
    case keepAlive
    case pingTimedOut
    /// Flood control: the clock has caught up, held commands may run.
    case floodRelease
    /// The registry's answer to a nick claim.
    case nickResult(nick: String, accepted: Bool)
    case joinedChannel(key: String, name: String, channel: ActorRef<ChannelMessage>)
    /// Kicked, or the channel closed.
    case leftChannel(key: String)
    /// The actor that answered one of the client's requests has sent its last reply
    /// (`ReplyTo.answered()`); for a PRIVMSG, `.message`: the channel or the registry has
    /// delivered it, or refused it.
    case answered(ReplyTo.Kind)
    /// An answer took too long (its actor stopped): run the next commands anyway.
    case answerTimedOut
    case killed(by: String, reason: String)
    case serverShutdown
}

/// Pauses reading from a client while its session is behind: bytes read but not yet handled
/// exceed a bound, or the session holds commands (flood control, a pending nick claim).
///
/// Thread-safety: called from the connection's read queue and from the session's actor;
/// `state` is behind a lock, and pause/resume run under it so that they are never reordered.
final class InputGate: Sendable {
    private struct State {
        var inFlight = 0
        var paused = false
        var held = false
    }

    private let state = LockedValueBox(State())
    private let connection: any ClientConnection
    private let limit: Int

    init(connection: any ClientConnection, limit: Int = 64 * 1024) {
        self.connection = connection
        self.limit = limit
    }

    /// The connection read `count` bytes (not yet handled by the session).
    func received(_ count: Int) {
        state.withLockedValue { state in
            state.inFlight += count
            if state.inFlight > limit && !state.paused {
                state.paused = true
                connection.pauseReading()
            }
        }
    }

    /// The session handled `count` bytes.
    func handled(_ count: Int) {
        state.withLockedValue { state in
            state.inFlight -= count
            resumeIfPossible(&state)
        }
    }

    /// The session holds commands it has not run yet (`true`) or has caught up (`false`).
    func hold(_ held: Bool) {
        state.withLockedValue { state in
            guard state.held != held else { return }
            state.held = held
            if held && !state.paused {
                state.paused = true
                connection.pauseReading()
            } else {
                resumeIfPossible(&state)
            }
        }
    }

    private func resumeIfPossible(_ state: inout State) {
        if state.paused && !state.held && state.inFlight <= limit / 2 {
            state.paused = false
            connection.resumeReading()
        }
    }
}
