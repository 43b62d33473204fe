import Mailbox

extension TCPConnection {
    /// Starts the connection with what it reads delivered to an actor, one message per chunk
    /// read, in order, and its end delivered last; the actor replies with `send(_:)` (or
    /// `sendWhenReady` from a task) on this connection, which it is given or captures.
    ///
    /// Delivery uses `ActorRef.send`, so a bounded mailbox with `.backpressure` overflow pushes
    /// back on the peer: while the actor's mailbox is full, at most `bufferedReads` messages
    /// (plus up to 16 chunks already read ahead, see `start`'s `onRead`) wait here; then
    /// reading pauses (the peer's bytes wait in the kernel, then in the peer's send buffer) and
    /// resumes once the mailbox took a message and fewer than `bufferedReads` wait. Nothing is
    /// buffered without bound and nothing read is dropped. With an unbounded mailbox every read
    /// is enqueued at once.
    ///
    /// ```
    /// read ─map─▶ pending (≤ bufferedReads) ─ActorRef.send (suspends while full)─▶ actor
    ///                 └─ full: pauseReading ... room: resumeReading
    /// ```
    ///
    /// Thread-safety: `map` and `onClose` run on the connection's queue, serially; messages are
    /// sent from one task at a time, so the actor receives them in read order.
    ///
    /// Failure modes: if the actor has terminated (`send` throws), the connection is closed
    /// with `close()` and what is still pending is dropped (published as dead letters by the
    /// actor system). `onClose` returning nil delivers nothing for the end.
    ///
    /// - Parameters:
    ///   - target: the actor that gets the reads.
    ///   - bufferedReads: how many mapped reads may wait for the mailbox before reading pauses.
    ///   - map: turns one chunk read into a message.
    ///   - onClose: the message for the end of the connection (delivered after every read).
    ///   - The other parameters are `start`'s.
    /// - Precondition: `start` not called yet; `bufferedReads > 0`.
    public func start<Message: Sendable>(
        deliveringTo target: ActorRef<Message>,
        sendQueueLimit: Int, overflow: SendOverflow = .close, farewell: [UInt8]? = nil,
        readChunkSize: Int = 16 * 1024, bufferedReads: Int = 4,
        onWritable: (@Sendable () -> Void)? = nil,
        map: @escaping @Sendable ([UInt8]) -> Message,
        onClose: @escaping @Sendable (CloseReason) -> Message?
    ) {
        _ = startDelivery(
            to: target, sendQueueLimit: sendQueueLimit, overflow: overflow, farewell: farewell,
            readChunkSize: readChunkSize, bufferedReads: bufferedReads, onWritable: onWritable,
            map: map, onClose: onClose)
    }

    /// `start(deliveringTo:...)`, returning the delivery so tests can watch it.
    func startDelivery<Message: Sendable>(
        to target: ActorRef<Message>,
        sendQueueLimit: Int, overflow: SendOverflow, farewell: [UInt8]?,
        readChunkSize: Int, bufferedReads: Int,
        onWritable: (@Sendable () -> Void)?,
        map: @escaping @Sendable ([UInt8]) -> Message,
        onClose: @escaping @Sendable (CloseReason) -> Message?
    ) -> _ActorDelivery<Message> {
        precondition(bufferedReads > 0, "TCPConnection.start(deliveringTo:): bufferedReads \(bufferedReads) is not positive")
        let delivery = _ActorDelivery(connection: self, target: target, bufferedReads: bufferedReads)
        start(
            sendQueueLimit: sendQueueLimit, overflow: overflow, farewell: farewell,
            readChunkSize: readChunkSize, onWritable: onWritable,
            onRead: { chunk in delivery.enqueue(map(chunk), last: false) },
            onClose: { reason in
                if let message = onClose(reason) {
                    delivery.enqueue(message, last: true)
                }
            })
        return delivery
    }
}

/// Carries a connection's reads into an actor: a FIFO of mapped reads that one task at a time
/// sends with `ActorRef.send`, pausing the connection's reading while the FIFO is full.
final class _ActorDelivery<Message: Sendable>: Sendable {
    struct State {
        var pending: [Message] = []
        /// A task is sending the pending messages.
        var delivering = false
        /// This delivery paused the connection's reading.
        var paused = false
        /// The most messages ever pending (for tests).
        var mostPending = 0
        /// How often reading was paused (for tests).
        var pauses = 0
    }

    private let connection: TCPConnection
    private let target: ActorRef<Message>
    private let bufferedReads: Int
    /// Protected by its pthread mutex.
    private let state = LockedValueBox(State())

    init(connection: TCPConnection, target: ActorRef<Message>, bufferedReads: Int) {
        self.connection = connection
        self.target = target
        self.bufferedReads = bufferedReads
    }

    var mostPending: Int { state.withLockedValue { $0.mostPending } }
    var pauses: Int { state.withLockedValue { $0.pauses } }

    /// Queues `message`; pauses reading when `bufferedReads` wait; starts the sending task.
    func enqueue(_ message: Message, last: Bool) {
        let (pause, startTask) = state.withLockedValue { state -> (Bool, Bool) in
            state.pending.append(message)
            state.mostPending = max(state.mostPending, state.pending.count)
            var pause = false
            if !last && !state.paused && state.pending.count >= bufferedReads {
                state.paused = true
                state.pauses += 1
                pause = true
            }
            guard !state.delivering else { return (pause, false) }
            state.delivering = true
            return (pause, true)
        }
        if pause { connection.pauseReading() }
        if startTask { Task { await deliverPending() } }
    }

    /// Sends the pending messages in order until none is left.
    private func deliverPending() async {
        while true {
            let next = state.withLockedValue { state -> Message? in
                guard !state.pending.isEmpty else {
                    state.delivering = false
                    return nil
                }
                return state.pending.removeFirst()
            }
            guard let next else { return }
            do {
                try await target.send(next)
            } catch {
                // The actor is gone: nothing more can be delivered.
                state.withLockedValue { state in
                    state.pending.removeAll()
                    state.delivering = false
                }
                connection.close()
                return
            }
            let resume = state.withLockedValue { state -> Bool in
                guard state.paused && state.pending.count < bufferedReads else { return false }
                state.paused = false
                return true
            }
            if resume { connection.resumeReading() }
        }
    }
}
