#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Mailbox

extension TCPConnection {
    /// Queues `bytes` for sending; never blocks.
    ///
    /// Buffers are written whole and never interleaved with other buffers; buffers sent by one
    /// thread go out in call order. The bytes are written by a flush scheduled on the
    /// connection's queue, which writes everything sent before it runs in one `sendmsg` (so a
    /// burst costs one system call per flush, not per buffer); what the kernel does not take is
    /// written when the socket becomes writable (the write source is armed only while something
    /// is queued). The array itself is queued, never copied, so sending one array to many
    /// connections shares it.
    ///
    /// Overflow, when the bytes still queued plus `bytes` would exceed the `sendQueueLimit`
    /// given to `start`, depends on the `overflow` given to `start`:
    /// - `.close` (the default): `bytes` is dropped, the connection stops reading, refuses all
    ///   further sends, sends the `farewell` (past the limit), closes (flushing at most 2 s,
    ///   then a reset) and reports `onClose(.sendQueueExceeded)`; this call returns
    ///   `.sendQueueExceeded`.
    /// - `.backPressure`: `bytes` is not queued and this call returns `.full`; the connection
    ///   stays open and keeps everything it accepted; `onWritable` follows when room is back.
    ///   `.full` also comes while `sendWhenReady` calls wait (they go first, in order). A buffer
    ///   larger than the whole limit is accepted when the queue is empty (or it could never go).
    ///
    /// A write error (`EPIPE`, `ECONNRESET`) closes the connection with `.failed` and this call
    /// returns `.closed`. An empty `bytes` is `.queued` and does nothing. Never raises SIGPIPE
    /// (`MSG_NOSIGNAL`).
    ///
    /// - Returns: `.queued`; `.sendQueueExceeded` for the call that overflowed (`.close`);
    ///   `.full` (`.backPressure`); `.closed` once the connection is closing or closed.
    /// - Complexity: O(1); the flush costs one `sendmsg` per 64 queued buffers.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> SendResult {
        state.withLockedValue { state in send(bytes, &state) }
    }

    /// Like `send(_:)`, but when nothing is queued the bytes are written at once on the calling
    /// thread (one `send` system call, no hop to the connection's queue): for a client that
    /// already batches its writes (the NATS client's outbound buffer) or must answer with the
    /// least latency. What the kernel does not take is queued and written when the socket is
    /// writable, as for `send`. Overflow, results and thread-safety are those of `send(_:)`;
    /// never blocks.
    @discardableResult
    public func sendImmediately(_ bytes: [UInt8]) -> SendResult {
        state.withLockedValue { state in
            guard case .open = state.phase, !bytes.isEmpty, state.pending.isEmpty, !state.writeSourceArmed,
                  state.waitingSenders.isEmpty else { return send(bytes, &state) }
            state.pending.append(bytes)
            return writeNow(&state) ? .queued : .closed
        }
    }

    /// Writes what is queued; arms the write source for what the kernel does not take; on a
    /// write error closes the connection and returns false. Caller holds the lock.
    @discardableResult
    func writeNow(_ state: inout _ConnectionState) -> Bool {
        switch flush(&state) {
        case .drained: return true
        case .wouldBlock:
            armWriteSource(&state)
            return true
        case .failed(let error):
            finish(&state, .failed(error), ending: .immediate)
            return false
        }
    }

    /// `send(_:)` with the lock held.
    func send(_ bytes: [UInt8], _ state: inout _ConnectionState) -> SendResult {
        guard case .open = state.phase else { return .closed }
        if bytes.isEmpty { return .queued }
        let backPressure = state.overflow == .backPressure
        if backPressure && !state.waitingSenders.isEmpty {
            state.writableNoticeWanted = true
            return .full
        }
        if !Self.hasRoom(for: bytes.count, state) && !state.writeSourceArmed {
            // Bytes waiting only for the scheduled flush are not a slow consumer's: write
            // them now and count what the kernel refuses.
            guard writeNow(&state) else { return .closed }
        }
        if !Self.hasRoom(for: bytes.count, state) {
            if backPressure {
                state.writableNoticeWanted = true
                return .full
            }
            beginDraining(&state, .sendQueueExceeded, final: state.farewell, timeout: .seconds(2))
            return .sendQueueExceeded
        }
        // Coalescing: the bytes are queued and written by one flush on the connection's
        // queue, together with everything else sent before that flush runs. A burst fanned
        // out to many clients (a busy channel) becomes one `sendmsg` per client per flush
        // instead of one `send` per line; a lone line waits one queue hop.
        state.pending.append(bytes)
        scheduleFlush(&state)
        return .queued
    }

    /// Whether `count` more bytes fit the queue (in `.backPressure`, any buffer fits an empty
    /// queue).
    static func hasRoom(for count: Int, _ state: _ConnectionState) -> Bool {
        count <= state.sendQueueLimit - state.pending.byteCount
            || (state.overflow == .backPressure && state.pending.isEmpty)
    }

    /// Schedules a flush of what is queued unless one is scheduled or the write source is armed.
    func scheduleFlush(_ state: inout _ConnectionState) {
        if !state.flushScheduled && !state.writeSourceArmed {
            state.flushScheduled = true
            queue.async { [self] in scheduledFlush() }
        }
    }

    /// The flush `send` scheduled: writes what is queued; arms the write source for the rest.
    private func scheduledFlush() {
        let room = state.withLockedValue { state -> _RoomAction in
            state.flushScheduled = false
            // Draining flushes on its own; an armed write source will take what is queued.
            guard case .open = state.phase, !state.writeSourceArmed else { return .none }
            writeNow(&state)
            return roomMade(&state)
        }
        room.perform()
    }

    /// Closes gracefully: stops reading, sends what is queued and then `final` (past the limit),
    /// then shuts the socket down and closes it. If that cannot be flushed within `timeout`, it
    /// closes anyway with a reset (`SO_LINGER` 0).
    ///
    /// Never blocks. `onClose(.closedLocally)` follows (on the connection's queue) unless the
    /// connection was already closing or closed. Idempotent; sends after it return `.closed`.
    public func close(final: [UInt8]? = nil, timeout: Duration = .seconds(2)) {
        state.withLockedValue { state in
            guard case .open = state.phase else { return }
            beginDraining(&state, .closedLocally, final: final, timeout: timeout)
        }
    }

    /// Closes at once with a reset (`SO_LINGER` 0): drops what is queued, sends nothing more.
    /// For peers that must go now (the peer sees `ECONNRESET`).
    ///
    /// Never blocks. `onClose(.closedLocally)` follows unless the connection was already
    /// closed; a connection still draining after `close` or an overflow is cut short and keeps
    /// its reason. Idempotent.
    public func abort() {
        state.withLockedValue { state in
            switch state.phase {
            case .open: finish(&state, .closedLocally, ending: .abortive)
            case .draining(let reason): finish(&state, reason, ending: .abortive)
            case .closed: break
            }
        }
    }

    // MARK: - Internals (caller holds the lock)

    /// Stops reading and sends what is queued plus `final`; closes when flushed, or at the
    /// deadline with a reset.
    private func beginDraining(
        _ state: inout _ConnectionState, _ reason: CloseReason, final: [UInt8]?, timeout: Duration
    ) {
        state.phase = .draining(reason)
        failWaitingSenders(&state, reason)
        Self.suspendReadSource(&state)
        if let final { state.pending.append(final) }
        guard !state.pending.isEmpty else {
            finish(&state, reason, ending: .graceful)
            return
        }
        switch flush(&state) {
        case .drained:
            finish(&state, reason, ending: .graceful)
        case .failed:
            finish(&state, reason, ending: .immediate)
        case .wouldBlock:
            armWriteSource(&state)
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.dispatchInterval(timeout))
            timer.setEventHandler { [self] in flushDeadlinePassed() }
            state.flushTimer = timer
            timer.resume()
        }
    }

    enum FlushResult {
        case drained
        case wouldBlock
        case failed(SocketError)
    }

    /// Writes queued buffers (up to 64 per `sendmsg`) until the queue is empty or the kernel
    /// takes no more.
    func flush(_ state: inout _ConnectionState) -> FlushResult {
        while !state.pending.isEmpty {
            let written = state.pending.withIOVectors(maxBuffers: 64) { vectors in
                var message = msghdr()
                message.msg_iov = vectors.baseAddress
                message.msg_iovlen = numericCast(vectors.count)
                return sendmsg(fd, &message, _Posix.sendFlags)
            }
            if written >= 0 {
                state.pending.consume(written)
                continue
            }
            let error = _Posix.errno
            if error == EINTR { continue }
            if _Posix.wouldBlock(error) { return .wouldBlock }
            return .failed(SocketError(operation: "write", errno: error))
        }
        return .drained
    }

    /// Creates the write source on first use and arms it.
    func armWriteSource(_ state: inout _ConnectionState) {
        if state.writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [self] in writableEvent() }
            source.setCancelHandler { [self] in sourceCancelled() }
            state.writeSource = source
        }
        if !state.writeSourceArmed {
            state.writeSourceArmed = true
            state.writeSource!.resume()
        }
    }

    /// The write source's handler: flushes; disarms when drained, or finishes a drain.
    private func writableEvent() {
        let room = state.withLockedValue { state -> _RoomAction in
            switch state.phase {
            case .closed:
                return .none
            case .open:
                // A stale event after the source was disarmed: nothing queued, stay disarmed.
                guard state.writeSourceArmed else { return .none }
                switch flush(&state) {
                case .drained:
                    state.writeSourceArmed = false
                    state.writeSource!.suspend()
                case .wouldBlock:
                    break
                case .failed(let error):
                    finish(&state, .failed(error), ending: .immediate)
                }
                return roomMade(&state)
            case .draining(let reason):
                switch flush(&state) {
                case .drained: finish(&state, reason, ending: .graceful)
                case .wouldBlock: break
                case .failed: finish(&state, reason, ending: .immediate)
                }
                return .none
            }
        }
        // Outside the lock: resumed senders and `onWritable` may call straight back in.
        room.perform()
    }

    /// The flush timer's handler: still draining at the deadline, so reset and close.
    private func flushDeadlinePassed() {
        state.withLockedValue { state in
            guard case .draining(let reason) = state.phase else { return }
            finish(&state, reason, ending: .abortive)
        }
    }

    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return .nanoseconds(0) }
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .never }
        return .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
