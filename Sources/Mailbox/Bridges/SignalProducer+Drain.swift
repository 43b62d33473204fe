extension SignalProducer where Value: Sendable {
    /// Drains this producer into the actor `target` with back-pressure: the actor receives one
    /// value at a time and acknowledges each before the next is sent (Akka's
    /// `ActorSink.actorRefWithBackpressure`). Cold: each start of the returned producer starts
    /// one run of this producer and one conversation with the actor.
    ///
    /// ```swift
    /// enum Ingest: Sendable {
    ///     case start(ackTo: ActorRef<Ack>)
    ///     case record(Record, ackTo: ActorRef<Ack>)
    ///     case done
    ///     case failed(DrainError<FeedError>)
    /// }
    /// records.drain(
    ///     into: ingester,
    ///     onInit: { ackTo in .start(ackTo: ackTo) },
    ///     makeMessage: { ackTo, record in .record(record, ackTo: ackTo) },
    ///     onComplete: .done,
    ///     onFailure: { .failed($0) }
    /// ).start()
    /// ```
    ///
    /// The conversation:
    /// ```
    ///  drain                                   actor
    ///    ── onInit(ackTo) ───────────────────▶
    ///    ◀─────────────────────────── ack ────      nothing is sent before the first ack
    ///    ── makeMessage(ackTo, v1) ──────────▶
    ///    ◀─────────────────────────── ack ────      one message awaits its ack at a time
    ///    ── makeMessage(ackTo, v2) ──────────▶
    ///    ◀─────────────────────────── ack ────
    ///    ── onComplete ──────────────────────▶      after the ack of the last value
    /// ```
    /// - **Acks.** Any message told to the ack ref is an ack. It acknowledges the message that
    ///   awaits one; an ack when nothing awaits is remembered as demand for one value (acks are
    ///   not counted: two spare acks still ask for one value).
    /// - **Buffering.** A producer pushes and has no demand, so the drain starts this producer
    ///   at once and buffers the values the actor has not asked for, up to `bufferLimit`; one
    ///   more is an overflow, handled by `overflow` (`.fail` by default: the stream fails,
    ///   nothing is lost silently; `.dropNewest`, `.dropOldest`). `bufferLimit: 0` sends a value
    ///   only if it arrives while the actor is asking for one.
    /// - **Completion** of this producer: the buffered values are sent one by one as acked,
    ///   then, after the last ack, the actor is told `onComplete` and the drain completes.
    /// - **Failure** of this producer: the actor is told `onFailure(.producerFailed(error))` at
    ///   once (buffered values are discarded, as Akka does) and the drain fails with it.
    /// - **Interruption**: disposing the drain (or this producer's run being interrupted) stops
    ///   sending — no further value is told — and tells the actor
    ///   `onFailure(.drainFailed(…))` with code `.interrupted` (never `onComplete`; Akka tells
    ///   an `AbruptStageTerminationException` the same way). This producer's run is
    ///   interrupted with it.
    /// - **The actor terminating** interrupts this producer's run and fails the drain with
    ///   `.drainFailed` code `.targetTerminated` (nobody is told).
    /// - **A bounded mailbox** that refuses the init or a value ends the drain: `onFailure` with
    ///   code `.notDelivered` is told (if there is room for it) and the drain fails with it.
    ///
    /// The returned producer sends each value once the actor has acknowledged it, then
    /// completes after `onComplete` was told; it fails with the error told to the actor.
    ///
    /// Thread-safety: start from any thread. The actor's messages are told, and the drain's
    /// events sent, by whichever thread the event that caused them came from (this producer's,
    /// the acking actor's), in order; an actor may acknowledge synchronously inside the `tell`
    /// (on an `ImmediateScheduler`) without deadlock or recursion.
    ///
    /// What keeps what alive: while the drain runs, this producer's run and the watched actor
    /// retain it; an actor that keeps the ack ref after the end keeps nothing alive, and what
    /// it tells the ack ref then is a dead letter.
    ///
    /// - Parameters:
    ///   - target: The actor to drain into.
    ///   - bufferLimit: How many values may wait for the actor's demand; must not be negative.
    ///   - overflow: What to do with a value that finds the buffer full.
    ///   - onInit: The first message, around the ack ref; the actor acks it when ready.
    ///   - makeMessage: The message for each value, around the ack ref.
    ///   - onComplete: Told after the last value was acknowledged, when this producer completed.
    ///   - onFailure: Told when the stream ends in any other way the actor can hear of.
    /// - Precondition: `bufferLimit >= 0`.
    /// - Complexity: O(1) per value (amortised), O(`bufferLimit`) memory.
    public func drain<Message: Sendable, Ack: Sendable>(
        into target: ActorRef<Message>,
        bufferLimit: Int = 1_024,
        overflow: DrainOverflow = .fail,
        onInit: @escaping @Sendable (_ ackTo: ActorRef<Ack>) -> Message,
        makeMessage: @escaping @Sendable (_ ackTo: ActorRef<Ack>, _ value: Value) -> Message,
        onComplete: Message,
        onFailure: @escaping @Sendable (DrainError<Error>) -> Message
    ) -> SignalProducer<Value, DrainError<Error>> {
        precondition(bufferLimit >= 0, "drain(into:): bufferLimit must not be negative, not \(bufferLimit)")
        let upstream = self
        return SignalProducer<Value, DrainError<Error>> { observer, lifetime in
            let drain = _DrainRun(
                target: target, run: observer, bufferLimit: bufferLimit, overflow: overflow,
                makeInit: onInit, makeMessage: makeMessage, completion: onComplete, makeFailure: onFailure)
            lifetime.observeEnded { drain.runEnded() }
            guard !lifetime.hasEnded, drain.begin() else { return }
            upstream.startWithSignal { signal, interrupter in
                drain.upstreamStarted(interrupter)
                signal.observe(Signal<Value, Error>.Observer { event in drain.upstream(event) })
            }
        }
    }
}
