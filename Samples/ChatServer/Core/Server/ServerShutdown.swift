import Mailbox

/// The chat server's graceful shutdown, as two steps that `ChatServer.shutdown(timeout:)` and
/// the actor system's coordinated shutdown share (whichever runs first does the work; the other
/// finds it done):
///
/// 1. `unbind()` (phase `service-unbind`): publishes `.shuttingDown`, asks the listener to close
///    its socket and stop, and waits for its answer: from then on a connect is refused.
/// 2. `closeSessions(timeout:)` (phase `service-requests-done`): tells every session, so each
///    client gets `ERROR :Server shutting down` after what is already queued for it, and waits
///    until every connection is flushed and closed (or the time-out, or the phase's time-out,
///    which cancels the wait).
///
/// Thread-safety: `state` is behind a lock; every method may be called from any task.
final class ServerShutdown: Sendable {
    private struct State {
        var announced = false
        var listener: ActorRef<ListenerMessage>?
        var sessionsTold = false
    }

    private let context: ServerContext
    private let sessions: ActorRef<SessionManagerMessage>
    private let tracker: ConnectionTracker
    private let failureObservation: (any Disposable)?
    private let state = LockedValueBox(State())

    init(context: ServerContext, sessions: ActorRef<SessionManagerMessage>, tracker: ConnectionTracker,
         failureObservation: (any Disposable)?) {
        self.context = context
        self.sessions = sessions
        self.tracker = tracker
        self.failureObservation = failureObservation
    }

    /// The listener to stop at `unbind()`; one that is spawned after the shutdown began is
    /// stopped at once.
    func listenerStarted(_ listener: ActorRef<ListenerMessage>) {
        let unbound = state.withLockedValue { state -> Bool in
            if state.announced { return true }
            state.listener = listener
            return false
        }
        if unbound { listener.tell(.stop(replyTo: nil)) }
    }

    /// Registers the two steps in `system`'s coordinated shutdown.
    ///
    /// - Throws: `CoordinatedShutdownError` if the system has no such phases or has passed them.
    func register(in system: ActorSystem) throws {
        let shutdown = system.coordinatedShutdown
        try shutdown.addTask(phase: .serviceUnbind, name: "chat-server: close the listener") { [self] in
            await unbind()
        }
        try shutdown.addTask(phase: .serviceRequestsDone, name: "chat-server: tell clients and close connections") { [self] in
            // Bounded by the phase's time-out, which cancels the wait.
            await closeSessions(timeout: nil)
        }
    }

    /// Step 1: stop accepting. Returns once the listening socket is closed (or the listener did
    /// not answer within 5 s: it may be waiting out a restart back-off).
    func unbind() async {
        let (first, listener) = state.withLockedValue { state -> (Bool, ActorRef<ListenerMessage>?) in
            defer { state.listener = nil }
            return (announce(&state), state.listener)
        }
        if first { context.publish(.shuttingDown) }
        guard let listener else { return }
        _ = try? await listener.ask(timeout: .seconds(5)) { (replyTo: ActorRef<Bool>) in .stop(replyTo: replyTo) }
    }

    /// Step 2: tell every client and wait until every connection is closed, at most `timeout`
    /// (`nil`: until the task is cancelled).
    func closeSessions(timeout: Duration?) async {
        let (first, tell) = state.withLockedValue { state -> (Bool, Bool) in
            defer { state.sessionsTold = true }
            return (announce(&state), !state.sessionsTold)
        }
        if first { context.publish(.shuttingDown) }
        if tell {
            sessions.tell(.shutdown)
        }
        let tracker = tracker
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await tracker.waitUntilAllClosed() }
            if let timeout {
                group.addTask { try? await Task.sleep(for: timeout) }
            }
            await group.next()
            group.cancelAll()
        }
        failureObservation?.dispose()
    }

    /// Marks the shutdown begun; true the first time (publish `.shuttingDown` then, outside the lock).
    private func announce(_ state: inout State) -> Bool {
        guard !state.announced else { return false }
        state.announced = true
        return true
    }
}
