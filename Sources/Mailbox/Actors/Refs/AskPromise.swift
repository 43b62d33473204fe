import Synchronization

/// The reply ref of one ask: the first reply (or failure) completes it; later replies are dead
/// letters.
///
/// From `start` until it completes, the promise is registered in its system's `PendingAsks`,
/// so that `shutdown()` can fail it.
// `state` is protected by its own lock; the rest is immutable.
final class AskPromise<Reply: Sendable>: ActorRefTarget<Reply>, _ShutdownFailable, @unchecked Sendable {
    private enum State {
        case waiting(handler: (@Sendable (Result<Reply, any Error>) -> Void)?, timer: (any Disposable)?)
        case completed(Result<Reply, any Error>?)
    }

    private let state = LockedValueBox(State.waiting(handler: nil, timer: nil))
    private let asking: ActorAddress
    private let messageType: String
    private let timeout: Duration

    init(system: ActorSystem, asking: ActorAddress, messageType: String, timeout: Duration) {
        self.asking = asking
        self.messageType = messageType
        self.timeout = timeout
        super.init(address: ActorAddress(system: system.name, path: "/temp/$ask", incarnation: system.nextIncarnation()), system: system)
    }

    func error(_ code: AskError.Code, reason: DeadLetter.Reason? = nil) -> AskError {
        AskError(code: code, target: asking, messageType: messageType, timeout: timeout, deliveryFailure: reason)
    }

    /// Sets the completion handler; runs it at once if the promise completed already.
    func onComplete(_ handler: @escaping @Sendable (Result<Reply, any Error>) -> Void) {
        let early: Result<Reply, any Error>? = state.withLockedValue { state in
            switch state {
            case let .waiting(_, timer):
                state = .waiting(handler: handler, timer: timer)
                return nil
            case let .completed(result):
                state = .completed(nil)
                return result
            }
        }
        if let early { handler(early) }
    }

    /// Registers the ask with its system and starts the time-out on `scheduler`'s clock. The
    /// timer keeps the promise alive until the deadline, so an ask whose question was dropped
    /// or ignored still times out.
    ///
    /// - Returns: Whether the ask is waiting for a reply, so the question should be sent:
    ///   `false` if it has completed already (cancelled, or the system has shut down).
    @discardableResult
    func start(timeoutOn scheduler: any DateScheduler) -> Bool {
        guard system.pendingAsks.insert(self) else {
            fail(error(.systemShutDown))
            return false
        }
        let timer = scheduler.schedule(after: timeout) { [self] in
            fail(error(.timedOut))
        }
        let cancelNow: Bool = state.withLockedValue { state in
            guard case let .waiting(handler, _) = state else { return true }
            state = .waiting(handler: handler, timer: timer)
            return false
        }
        if cancelNow {
            // Completed before it was registered (or while): `complete` may have looked for it
            // too early.
            timer?.dispose()
            system.pendingAsks.remove(self)
        }
        return !cancelNow
    }

    func failAtShutdown() -> Bool {
        complete(.failure(error(.systemShutDown)))
    }

    override func tell(_ message: Reply) -> TellResult {
        if complete(.success(message)) { return .enqueued }
        system.publishUndelivered(message, to: address, reason: .lateReply)
        return .dropped(.lateReply)
    }

    func fail(_ error: any Error) {
        complete(.failure(error))
    }

    /// Whether the promise has completed (answered, failed, timed out).
    var isCompleted: Bool {
        state.withLockedValue { state in
            if case .completed = state { return true }
            return false
        }
    }

    /// Fails the promise unless it has completed; returns whether it did.
    func failIfWaiting(_ error: any Error) -> Bool {
        complete(.failure(error))
    }

    /// Completes the promise; returns false if it had completed already.
    @discardableResult
    private func complete(_ result: Result<Reply, any Error>) -> Bool {
        let outcome: (handler: (@Sendable (Result<Reply, any Error>) -> Void)?, timer: (any Disposable)?)? = state.withLockedValue { state in
            guard case let .waiting(handler, timer) = state else { return nil }
            state = .completed(handler == nil ? result : nil)
            return (handler, timer)
        }
        guard let outcome else { return false }
        system.pendingAsks.remove(self)
        outcome.timer?.dispose()
        outcome.handler?(result)
        return true
    }
}
