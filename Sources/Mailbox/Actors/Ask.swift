import Synchronization

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
    /// Nothing is sent (and `makeMessage` is not called) when the ask could not be answered
    /// anyway: a time-out that is not positive, or a task already cancelled.
    ///
    /// - Throws: `AskError` with `.timedOut` (naming the target, the message type and the
    ///   time-out), `.notDelivered` (at once: the target has terminated, or its bounded mailbox
    ///   refused the question) or `.invalidTimeout` (at once, nothing sent: `timeout` is zero or
    ///   negative); `CancellationError` if the task is cancelled (the question is then not
    ///   sent, or, if it was, its reply becomes a dead letter).
    public func ask<Reply: Sendable>(
        timeout: Duration,
        _ makeMessage: (ActorRef<Reply>) -> Message
    ) async throws -> Reply {
        guard timeout > .zero else {
            throw AskError.invalidTimeout(target: address, messageType: "\(Message.self)", timeout: timeout)
        }
        try Task.checkCancellation()
        let promise = AskPromise<Reply>(system: target.system, asking: address, messageType: "\(Message.self)", timeout: timeout)
        let message = makeMessage(ActorRef<Reply>(promise))
        let target = self.target
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Reply, any Error>) in
                promise.onComplete { continuation.resume(with: $0) }
                if promise.start(timeoutOn: target.askScheduler), case let .dropped(reason) = target.tell(message) {
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
    ///
    /// Failure modes (each arrives as `map(.failure(error))`, a message, never thrown here):
    /// `AskError` with `.timedOut`, `.notDelivered`, or `.invalidTimeout` when `timeout` is not
    /// positive (then nothing is sent to `target` and `makeMessage` is not called).
    public func ask<Other: Sendable, Reply: Sendable>(
        _ target: ActorRef<Other>,
        timeout: Duration,
        _ makeMessage: (ActorRef<Reply>) -> Other,
        map: @escaping @Sendable (Result<Reply, any Error>) -> Message
    ) {
        let me = myself
        guard timeout > .zero else {
            me.tell(map(.failure(AskError.invalidTimeout(target: target.address, messageType: "\(Other.self)", timeout: timeout))))
            return
        }
        let promise = AskPromise<Reply>(system: system, asking: target.address, messageType: "\(Other.self)", timeout: timeout)
        promise.onComplete { me.tell(map($0)) }
        if promise.start(timeoutOn: scheduler), case let .dropped(reason) = target.tell(makeMessage(ActorRef(promise))) {
            promise.fail(promise.error(.notDelivered, reason: reason))
        }
    }
}
