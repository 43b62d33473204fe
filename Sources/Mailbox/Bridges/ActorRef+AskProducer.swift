extension ActorRef {
    /// Ask as a cold producer: each start sends a fresh question (made by `makeMessage` around
    /// a new reply ref) and the run sends the reply, then completes.
    ///
    /// ```swift
    /// let balance = account.askProducer(timeout: .seconds(1)) { .balance(replyTo: $0) }
    /// balance.startWithResult { print($0) }       // asks now
    /// balance.retry(upTo: 2).start()               // asks again, up to 3 times
    /// ```
    ///
    /// - Each start asks again; nothing is sent until a start.
    /// - Disposing the run stops waiting: the run is interrupted, the time-out cancelled, and
    ///   a reply that comes later becomes a dead letter (reason `.lateReply`).
    /// - The time-out is measured on the target's ask clock (the actor's `DateScheduler`, so
    ///   virtual time under a `TestScheduler`), as for `ask(timeout:_:)`.
    ///
    /// Failure modes: the run fails with `AskError` — `.timedOut` (naming the target, the
    /// message type and the time-out) when no reply came in time, `.notDelivered` at once when
    /// the question could not be enqueued (the actor had terminated, or its bounded mailbox
    /// refused it), `.invalidTimeout` at once, with nothing sent, when `timeout` is not
    /// positive.
    ///
    /// Thread-safety: start from any thread; the reply is sent on the thread of the replying
    /// actor, a time-out on the scheduler's thread.
    public func askProducer<Reply: Sendable>(
        timeout: Duration,
        _ makeMessage: @escaping @Sendable (ActorRef<Reply>) -> Message
    ) -> SignalProducer<Reply, AskError> {
        let target = self.target
        return SignalProducer { observer, lifetime in
            guard timeout > .zero else {
                // Nothing is sent for an answer that could never be awaited.
                observer.send(error: AskError.invalidTimeout(target: target.address, messageType: "\(Message.self)", timeout: timeout))
                return
            }
            let promise = AskPromise<Reply>(system: target.system, asking: target.address, messageType: "\(Message.self)", timeout: timeout)
            promise.onComplete { result in
                switch result {
                case let .success(reply):
                    observer.send(value: reply)
                    observer.sendCompleted()
                case let .failure(error as AskError):
                    observer.send(error: error)
                case .failure:
                    // Only the disposal below fails a promise with another error; the run has
                    // been interrupted already.
                    observer.sendInterrupted()
                }
            }
            lifetime.observeEnded { promise.fail(CancellationError()) }
            guard !lifetime.hasEnded else { return }
            if promise.start(timeoutOn: target.askScheduler), case let .dropped(reason) = target.tell(makeMessage(ActorRef<Reply>(promise))) {
                promise.fail(promise.error(.notDelivered, reason: reason))
            }
        }
    }
}

extension Action where Input: Sendable, Output: Sendable, Error == AskError {
    /// An action whose every run asks `ref` (with `makeMessage(input, replyTo)`) and sends the
    /// reply: `Action(enabledIf:) { input in ref.askProducer(…) }` in one call.
    ///
    /// ```swift
    /// let deposit = Action(asking: account, timeout: .seconds(1), enabledIf: isOnline) { amount, replyTo in
    ///     .deposit(amount, replyTo: replyTo)
    /// }
    /// deposit.apply(10).start()
    /// ```
    ///
    /// Like every `Action` it is disabled while a run (an ask) is under way and while
    /// `isEnabled` is false; an attempt then fails with `ActionError.disabled`. A run fails with
    /// `ActionError.producerFailed(AskError)` on time-out or when the question is not delivered.
    ///
    /// Thread-safety: apply and start from any thread.
    public convenience init<Message: Sendable, P: PropertyProtocol>(
        asking ref: ActorRef<Message>,
        timeout: Duration,
        enabledIf isEnabled: P,
        _ makeMessage: @escaping @Sendable (Input, ActorRef<Output>) -> Message
    ) where P.Value == Bool {
        self.init(enabledIf: isEnabled) { input in
            ref.askProducer(timeout: timeout) { replyTo in makeMessage(input, replyTo) }
        }
    }

    /// An action whose every run asks `ref`; enabled whenever no run is under way. See
    /// `init(asking:timeout:enabledIf:_:)`.
    public convenience init<Message: Sendable>(
        asking ref: ActorRef<Message>,
        timeout: Duration,
        _ makeMessage: @escaping @Sendable (Input, ActorRef<Output>) -> Message
    ) {
        self.init(asking: ref, timeout: timeout, enabledIf: Property(value: true), makeMessage)
    }
}
