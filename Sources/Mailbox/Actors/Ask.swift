import Synchronization

/// Why an ask failed.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .timedOut`).
public struct AskError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case timedOut, notDelivered }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// No reply arrived within the time-out.
        public static let timedOut = Code(.timedOut)
        /// The question was not delivered (the target had terminated, or its mailbox was full).
        public static let notDelivered = Code(.notDelivered)

        public var description: String { "\(value)" }
    }

    /// The kind of failure.
    public let code: Code
    /// The actor that was asked.
    public let target: ActorAddress
    /// The type of the message that was sent.
    public let messageType: String
    /// The time-out the ask had.
    public let timeout: Duration
    /// Why the message was not delivered, for `.notDelivered`.
    public let deliveryFailure: DeadLetter.Reason?

    public var description: String {
        if code == .timedOut {
            return "ask to \(target.path) with \(messageType) timed out after \(timeout)"
        }
        return "ask to \(target.path) with \(messageType) was not delivered: \(deliveryFailure.map { "\($0)" } ?? "unknown reason")"
    }
}

extension ActorRef {
    /// Sends a message that carries a reply ref, and awaits the reply.
    ///
    /// ```swift
    /// let count = try await counter.ask(timeout: .seconds(1)) { replyTo in .get(replyTo: replyTo) }
    /// ```
    ///
    /// Every ask has a time-out, measured on the target actor's scheduler clock (virtual time on
    /// a `TestScheduler`). Only the first reply counts; a reply after completion (time-out,
    /// cancellation, a second reply) becomes a dead letter.
    ///
    /// - Throws: `AskError` with `.timedOut` (naming the target, the message type and the
    ///   time-out) or `.notDelivered`; `CancellationError` if the task is cancelled.
    public func ask<Reply: Sendable>(
        timeout: Duration,
        _ makeMessage: (ActorRef<Reply>) -> Message
    ) async throws -> Reply {
        let promise = AskPromise<Reply>(system: target.system, asking: address, messageType: "\(Message.self)", timeout: timeout)
        let message = makeMessage(ActorRef<Reply>(promise))
        let target = self.target
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Reply, any Error>) in
                promise.onComplete { continuation.resume(with: $0) }
                promise.start(timeoutOn: target.askScheduler)
                if case let .dropped(reason) = target.tell(message) {
                    promise.fail(promise.error(.notDelivered, reason: reason))
                }
            }
        } onCancel: {
            promise.fail(CancellationError())
        }
    }
}

extension ActorContext {
    /// Asks `target` from inside this actor: the reply (or the failure) arrives later as a
    /// message to this actor, made by `map`. The handler is not suspended or re-entered.
    ///
    /// The time-out runs on this actor's scheduler clock.
    public func ask<Other: Sendable, Reply: Sendable>(
        _ target: ActorRef<Other>,
        timeout: Duration,
        _ makeMessage: (ActorRef<Reply>) -> Other,
        map: @escaping @Sendable (Result<Reply, any Error>) -> Message
    ) {
        let me = myself
        let promise = AskPromise<Reply>(system: system, asking: target.address, messageType: "\(Other.self)", timeout: timeout)
        promise.onComplete { me.tell(map($0)) }
        promise.start(timeoutOn: scheduler)
        if case let .dropped(reason) = target.tell(makeMessage(ActorRef(promise))) {
            promise.fail(promise.error(.notDelivered, reason: reason))
        }
    }
}

/// The reply ref of one ask: the first reply (or failure) completes it; later replies are dead
/// letters.
// `state` is protected by its own lock; the rest is immutable.
final class AskPromise<Reply: Sendable>: ActorRefTarget<Reply>, @unchecked Sendable {
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

    /// Starts the time-out on `scheduler`'s clock. The timer keeps the promise alive until the
    /// deadline, so an ask whose question was dropped or ignored still times out.
    func start(timeoutOn scheduler: any DateScheduler) {
        let timer = scheduler.schedule(after: timeout) { [self] in
            fail(error(.timedOut))
        }
        let cancelNow: Bool = state.withLockedValue { state in
            guard case let .waiting(handler, _) = state else { return true }
            state = .waiting(handler: handler, timer: timer)
            return false
        }
        if cancelNow { timer?.dispose() }
    }

    override func tell(_ message: Reply) -> TellResult {
        if complete(.success(message)) { return .enqueued }
        system.publishDeadLetter(message, to: address, reason: .lateReply)
        return .dropped(.lateReply)
    }

    func fail(_ error: any Error) {
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
        outcome.timer?.dispose()
        outcome.handler?(result)
        return true
    }
}
