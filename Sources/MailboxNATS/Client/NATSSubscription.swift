import Dispatch
import Mailbox
import Synchronization

/// A subscription's delivery end: the signal's input and the drop counter.
final class _SubscriptionSink: Sendable {
    let input: Signal<NATSMessage, Never>.Observer
    let output: Signal<NATSMessage, Never>

    init() {
        (output, input) = Signal<NATSMessage, Never>.pipe()
    }

    func deliver(_ message: NATSMessage) { input.send(value: message) }
    func finish() { input.sendCompleted() }
}

/// Whether a delivery into an actor is in a run of drops (so each run is reported once). An
/// atomic, not a lock: it is read on every delivered message.
final class _DropRun: Sendable {
    private let dropping = Atomic<Bool>(false)

    /// A message was taken: the run, if any, is over.
    func ended() {
        if dropping.load(ordering: .relaxed) { dropping.store(false, ordering: .relaxed) }
    }

    /// A message was dropped: true for the first drop of a run.
    func began() -> Bool {
        !dropping.exchange(true, ordering: .relaxed)
    }
}

/// One subscription of a `NATSConnection`: the messages published to its subject (wildcards
/// `*` for one token, `>` for the rest), shared out among the members of its queue group if
/// it has one.
///
/// Thread-safety: every member may be used from any thread. Messages are sent on `messages`
/// serially, in the order the server sent them, on the connection's read thread.
///
/// Lifetime: the connection keeps the subscription until it is unsubscribed, reaches its
/// maximum, or the connection closes; then `messages` completes.
public final class NATSSubscription: Sendable {
    /// The subject subscribed to.
    public let subject: String
    /// The queue group, or nil.
    public let queue: String?
    /// The subscription id on the wire.
    public let sid: UInt64
    /// The messages, as they arrive. Hot: observe at once (see `NATSConnection.subscribe`).
    /// Completes when the subscription ends.
    public var messages: Signal<NATSMessage, Never> { sink.output }

    let sink: _SubscriptionSink
    private let connection: NATSConnection

    init(connection: NATSConnection, subject: String, queue: String?, sid: UInt64, sink: _SubscriptionSink) {
        self.connection = connection
        self.subject = subject
        self.queue = queue
        self.sid = sid
        self.sink = sink
    }

    /// Ends the subscription now: the server is told (`UNSUB`), `messages` completes, and
    /// messages already on the way are dropped. Idempotent.
    public func unsubscribe() {
        connection.unsubscribe(sid: sid, after: nil)
    }

    /// Ends the subscription once `max` messages in total have been delivered since it was
    /// made (NATS's `UNSUB sid max`, nats.go's `AutoUnsubscribe`); at once if that many
    /// already were. Survives reconnects (the rest is asked for again).
    /// - Precondition: `max > 0`.
    public func unsubscribe(after max: Int) {
        precondition(max > 0, "NATSSubscription.unsubscribe(after:): max must be positive, got \(max)")
        connection.unsubscribe(sid: sid, after: max)
    }

    /// The messages as an `AsyncSequence`, buffering at most `bufferLimit` of them for a slow
    /// consumer (newer ones are dropped past it and counted in the connection's
    /// `statistics.slowConsumerDrops`). Make it at once after subscribing: messages sent
    /// before it exists are not in it.
    public func values(bufferLimit: Int = 65_536) -> AsyncStream<NATSMessage> {
        let connection = self.connection
        let (stream, continuation) = AsyncStream<NATSMessage>.makeStream(bufferingPolicy: .bufferingOldest(bufferLimit))
        let disposable = messages.observe { event in
            switch event {
            case .value(let message):
                if case .dropped = continuation.yield(message) { connection.countSlowConsumerDrop(subject: message.subject) }
            case .completed, .interrupted:
                continuation.finish()
            }
        }
        continuation.onTermination = { _ in disposable?.dispose() }
        return stream
    }

    /// Tells each message, transformed, to the actor `target`, until the subscription or the
    /// actor ends (then the other ends too: an actor's termination unsubscribes).
    ///
    /// Give the actor a bounded mailbox (`Props(mailbox: .bounded(n, overflow: .dropNewest))`)
    /// so a slow actor cannot make anything grow without bound: a message its mailbox refuses
    /// is a dead letter and is counted in `statistics.slowConsumerDrops`, and the connection's
    /// `events` report `.error(slowConsumer)` once per run of drops.
    ///
    /// - Returns: a disposable that ends the delivery (the subscription stays).
    @discardableResult
    public func deliver<Message: Sendable>(
        to target: ActorRef<Message>, _ transform: @escaping @Sendable (NATSMessage) -> Message
    ) -> any Disposable {
        let connection = self.connection
        let dropping = _DropRun()
        let observation = SerialDisposable()
        observation.inner = messages.observe { event in
            switch event {
            case .value(let message):
                switch target.tell(transform(message)) {
                case .enqueued:
                    dropping.ended()
                case .dropped(let reason):
                    if reason == .recipientTerminated {
                        observation.dispose()
                        self.unsubscribe()
                        return
                    }
                    let first = dropping.began()
                    connection.countSlowConsumerDrop(subject: message.subject, report: first)
                }
            case .completed, .interrupted:
                break
            }
        }
        let watch = target.onTermination { _ in
            observation.dispose()
            self.unsubscribe()
        }
        return AnyDisposable {
            observation.dispose()
            watch.dispose()
        }
    }
}

extension NATSConnection {
    /// Subscribes to `subject` (wildcards allowed), in queue group `queue` when given (the
    /// server gives each message to one member of the group).
    ///
    /// The `SUB` goes out with the next flush; a message can arrive only after the server has
    /// it. Observe `messages` at once, on the calling thread, to see every message — or use
    /// `subscribe(to:queue:observer:)`, which attaches the observer before anything is sent.
    ///
    /// - Throws: `invalidSubject` for an empty subject, whitespace or an empty token, or a bad
    ///   queue name; `connectionClosed`.
    public func subscribe(to subject: String, queue: String? = nil) throws(NATSError) -> NATSSubscription {
        try subscribe(to: subject, queue: queue, prepare: { _ in })
    }

    /// Subscribes and attaches `observer` before the server is told, so no message is missed.
    @discardableResult
    public func subscribe(
        to subject: String, queue: String? = nil,
        observer: @escaping @Sendable (NATSMessage) -> Void
    ) throws(NATSError) -> NATSSubscription {
        try subscribe(to: subject, queue: queue, prepare: { $0.observeValues(observer) })
    }

    private func subscribe(
        to subject: String, queue: String?, prepare: (Signal<NATSMessage, Never>) -> Void
    ) throws(NATSError) -> NATSSubscription {
        guard NATSFrames.isValidSubject(subject) else { throw NATSError(.invalidSubject, subject.debugDescription) }
        if let queue, !NATSFrames.isValidQueueGroup(queue) {
            throw NATSError(.invalidSubject, "queue group \(queue.debugDescription)")
        }
        let sink = _SubscriptionSink()
        prepare(sink.output)
        let (sid, flush) = try box.withLockedValue { state throws(NATSError) -> (UInt64, Bool) in
            guard !state.isClosed else { throw NATSError(.connectionClosed) }
            let sid = state.nextSID
            state.nextSID += 1
            state.subscriptions[sid] = _SubscriptionEntry(subject: subject, queue: queue, sink: sink)
            // While not connected the subscription is sent with the others on (re)connecting.
            guard state.isConnected else { return (sid, false) }
            NATSFrames.appendSubscribe(to: &state.outbound, subject: subject, queue: queue, sid: sid)
            return (sid, state.needsFlushScheduled())
        }
        if flush { self.queue.async { self.flushOutbound() } }
        return NATSSubscription(connection: self, subject: subject, queue: queue, sid: sid, sink: sink)
    }

    func unsubscribe(sid: UInt64, after max: Int?) {
        let (sink, flush) = box.withLockedValue { state -> (_SubscriptionSink?, Bool) in
            guard var entry = state.subscriptions[sid] else { return (nil, false) }
            if let max, entry.delivered < max {
                entry.max = max
                state.subscriptions[sid] = entry
                guard state.isConnected else { return (nil, false) }
                NATSFrames.appendUnsubscribe(to: &state.outbound, sid: sid, max: max)
                return (nil, state.needsFlushScheduled())
            }
            state.subscriptions[sid] = nil
            guard state.isConnected else { return (entry.sink, false) }
            NATSFrames.appendUnsubscribe(to: &state.outbound, sid: sid, max: nil)
            return (entry.sink, state.needsFlushScheduled())
        }
        if flush { queue.async { self.flushOutbound() } }
        sink?.finish()
    }

    func countSlowConsumerDrop(subject: String, report: Bool = false) {
        box.withLockedValue { $0.statistics.slowConsumerDrops += 1 }
        if report {
            announce(nil, events: [.error(NATSError(.slowConsumer, "a subscription to \(subject) dropped messages"))])
        }
    }
}
