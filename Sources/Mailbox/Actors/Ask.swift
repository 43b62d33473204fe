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
