#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Mailbox
import Synchronization

/// One TCP connection on a non-blocking socket, driven by Dispatch read/write sources.
///
/// Thread-safety: every method may be called from any thread at any time. The callbacks given to
/// `start` run on the connection's own serial queue: never concurrently with each other, and
/// never from inside a call to `send`, `close`, `pauseReading` or `resumeReading`, so a caller
/// may hold its own locks while calling those.
///
/// Lifetime: the connection owns its socket. While it is started and not yet closed, its Dispatch
/// sources keep it alive (so a server need not hold it for reading to go on); once closed, it is
/// freed with the last reference. A connection that is never started is closed when freed.
///
/// Memory: an idle started connection holds this object, its locked state, a serial queue and a
/// read source. There is no per-connection read buffer (each read goes into a temporary buffer
/// and only the bytes read are copied out), the write source and the send queue's storage exist
/// only while bytes wait for the kernel.
///
/// Closing, in time:
/// ```
/// open ──send over limit──▶ draining(.sendQueueExceeded) ─┐  (reading stopped, queue + farewell
///  │     (.close overflow)                                │   flushed; after the time-out:
/// open ──close(final:)────▶ draining(.closedLocally) ─────┤   SO_LINGER 0, reset)
///  │                                                      ▼
/// open ──EOF / error / abort()────────────────────────▶ closed ──sources cancelled──▶ fd closed,
///  │                                                                                onClose(reason)
///  └─ send over limit (.backPressure overflow): `.full`, stays open; `onWritable` when room is
///     back; `sendWhenReady` waits (waiters fail with `ClosedError` on draining/closed)
/// ```
///
/// See `docs/Networking.md` for the guide (errors table, limits, reconnecting clients).
public final class TCPConnection: Sendable {
    /// Why a connection closed; `onClose` gets exactly one.
    public enum CloseReason: Sendable, Equatable {
        /// EOF from the peer. A half-close counts too: the server treats the peer as gone.
        case peerClosed
        /// A read or write failed: `ECONNRESET`, `EPIPE`, `ETIMEDOUT`, ... A peer that resets the
        /// connection (closes with `SO_LINGER` 0) shows here as `read`/`ECONNRESET` on Linux (or
        /// as `.peerClosed` if an EOF is read before the reset); a reset found by a write while
        /// reading is paused shows as `write`/`EPIPE` or `write`/`ECONNRESET`.
        case failed(SocketError)
        /// A `send` would have taken the send queue past its limit (see `send(_:)`).
        case sendQueueExceeded
        /// `close(final:timeout:)` was called.
        case closedLocally
    }

    /// What `send(_:)` did with the bytes.
    public enum SendResult: Sendable, Equatable {
        /// Written to the kernel or queued to be written.
        case queued
        /// Dropped: they would have taken the queue past its limit; the connection is closing.
        case sendQueueExceeded
        /// Dropped: the connection is closed or closing.
        case closed
        /// Not queued, the connection stays open: `.backPressure` overflow only (see
        /// `SendOverflow`). The queue has no room for the bytes (or async senders wait before
        /// them); the caller keeps them and may send them again after `onWritable`.
        case full
    }

    /// What a send that finds the send queue full does; chosen once, at `start`.
    ///
    /// ```
    /// .close:        send over limit ─▶ .sendQueueExceeded, farewell, draining ─▶ closed
    /// .backPressure: send over limit ─▶ .full (nothing queued, connection open)
    ///                ... kernel takes bytes ... queue ≤ limit/2 ─▶ onWritable()
    ///                sendWhenReady over limit ─▶ suspends ─▶ queued, in FIFO order of waiters
    /// ```
    public enum SendOverflow: Sendable, Equatable {
        /// Today's server behaviour, the default: the overflowing `send` returns
        /// `.sendQueueExceeded` and the connection closes with that reason (a slow consumer is
        /// cut off; it cannot make the server buffer without bound).
        case close
        /// For clients and proxies that produce what they send: `send` returns `.full` and keeps
        /// the connection open; `sendWhenReady` suspends until there is room; `onWritable` says
        /// when room is back. Nothing accepted is ever dropped for lack of room.
        case backPressure
    }

    /// Unique among the connections of this process (clients and servers alike), from 1.
    public let id: UInt64
    /// The other end.
    public let peer: SocketAddress
    /// This end.
    public let local: SocketAddress

    /// The socket. Used only while `state` says it is open, and closed exactly once (see
    /// `_ConnectionState.descriptorClosed`), so a reused descriptor number is never touched.
    let fd: Int32
    /// Runs the Dispatch sources' handlers and the user's callbacks, one at a time.
    let queue: DispatchQueue
    /// Everything that changes, protected by the box's pthread mutex.
    let state: LockedValueBox<_ConnectionState>

    private static let nextID = Atomic<UInt64>(1)

    /// Wraps a connected, non-blocking socket (an accepted one, or one `connect` made); takes
    /// ownership of `fd`.
    init(fd: Int32, peer: SocketAddress, local: SocketAddress) {
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        self.fd = fd
        self.peer = peer
        self.local = local
        // One label for all: a per-connection label would cost an allocation each. Targets the
        // shared (non-overcommitting) global queue, so connections share its threads.
        self.queue = DispatchQueue(label: "MailboxNet.TCPConnection", target: .global())
        self.state = LockedValueBox(_ConnectionState())
        _Posix.setNoDelay(fd)
    }

    deinit {
        // Only an unstarted or already closed connection can get here (open sources hold it).
        state.withLockedValue { state in
            if !state.descriptorClosed {
                state.descriptorClosed = true
                _Posix.close(fd)
            }
        }
    }

    /// Starts reading.
    ///
    /// `onRead` gets each chunk read (1 up to `readChunkSize` bytes, a fresh array; at most 16
    /// chunks are read ahead of `onRead`, so a `pauseReading` called from `onRead` takes effect
    /// within 16 chunks); `onClose` is
    /// called exactly once when the connection is closed for any reason, after the last `onRead`
    /// and after the socket is closed. Both run on the connection's serial queue, never
    /// concurrently and never re-entrantly from inside `send`/`close`/`pauseReading`/
    /// `resumeReading`. If the connection was closed before `start`, only `onClose` follows.
    /// The first `start` in a process (unless a listener started first) waits about 1 ms while one
    /// Dispatch timer fires (see `_DispatchTimers`).
    ///
    /// - Parameters:
    ///   - sendQueueLimit: the most bytes `send` may keep queued (not yet taken by the kernel).
    ///     Before `start` the queue is unlimited.
    ///   - overflow: what a send that finds no room does: `.close` (the default) or
    ///     `.backPressure` (see `SendOverflow`).
    ///   - farewell: sent when the send queue overflows, past the limit (`.close` only).
    ///   - readChunkSize: the most bytes one read takes (the temporary read buffer's size).
    ///   - onWritable: `.backPressure` only: called once after a `send` returned `.full`, as soon
    ///     as no `sendWhenReady` waits and the queue has drained to `sendQueueLimit / 2` bytes
    ///     or fewer. Runs on the connection's queue like the other callbacks (never inside a
    ///     call into the connection, so it may call `send`, `pauseReading`, ... at once); not
    ///     called once the connection is closing.
    /// - Precondition: called at most once; `sendQueueLimit >= 0`, `readChunkSize > 0`.
    public func start(
        sendQueueLimit: Int, overflow: SendOverflow = .close, farewell: [UInt8]? = nil,
        readChunkSize: Int = 16 * 1024,
        onWritable: (@Sendable () -> Void)? = nil,
        onRead: @escaping @Sendable ([UInt8]) -> Void,
        onClose: @escaping @Sendable (CloseReason) -> Void
    ) {
        precondition(sendQueueLimit >= 0, "TCPConnection.start: negative sendQueueLimit \(sendQueueLimit)")
        precondition(readChunkSize > 0, "TCPConnection.start: readChunkSize \(readChunkSize) is not positive")
        _DispatchTimers.ready  // the flush deadline must work when descriptors have run out
        state.withLockedValue { state in
            precondition(!state.started, "TCPConnection.start called twice on connection \(id)")
            state.started = true
            state.sendQueueLimit = sendQueueLimit
            state.overflow = overflow
            state.onWritable = onWritable
            state.farewell = farewell
            switch state.phase {
            case .closed(let reason):
                if state.cancellationsPending > 0 {
                    state.onClose = onClose  // the last source's cancel handler reports it
                } else {
                    queue.async { onClose(reason) }
                }
            case .draining:
                state.onClose = onClose
            case .open:
                state.onClose = onClose
                let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
                source.setEventHandler { [self] in readableEvent(chunkSize: readChunkSize, onRead: onRead) }
                state.readAgain = { [self] in readableEvent(chunkSize: readChunkSize, onRead: onRead) }
                source.setCancelHandler { [self] in sourceCancelled() }
                state.readSource = source
                if state.readingPaused {
                    state.readSourceSuspended = true
                } else {
                    source.resume()
                }
            }
        }
    }

    /// Stops reading (for flood control and input back-pressure) until `resumeReading`. Bytes
    /// the peer sends meanwhile wait in the kernel (and, once its buffer fills, in the peer's).
    /// Idempotent; a no-op once the connection is closing or closed. May be called before `start`.
    public func pauseReading() {
        state.withLockedValue { state in
            guard case .open = state.phase else { return }
            state.readingPaused = true
            Self.suspendReadSource(&state)
        }
    }

    /// Resumes reading after `pauseReading`. Idempotent; a no-op once the connection is closing
    /// or closed.
    public func resumeReading() {
        state.withLockedValue { state in
            guard case .open = state.phase else { return }
            state.readingPaused = false
            if let source = state.readSource, state.readSourceSuspended {
                state.readSourceSuspended = false
                source.resume()
                // A read event cut short by `readsPerEvent` may have left bytes the source
                // will not signal again: look once more (a read that finds none costs one call).
                if let readAgain = state.readAgain { queue.async(execute: readAgain) }
            }
        }
    }

    /// Bytes queued and not yet written to the kernel.
    public var queuedByteCount: Int {
        state.withLockedValue { $0.pending.byteCount }
    }

    // MARK: - Reading

    /// The read source's handler: one read of up to `chunkSize` bytes into a temporary buffer;
    /// delivers a copy of what was read, or closes on EOF or an error.
    private func readableEvent(chunkSize: Int, onRead: @escaping @Sendable ([UInt8]) -> Void) {
        // Read until the socket has nothing more (EAGAIN), EOF or an error: the read source is
        // not guaranteed to fire again for bytes, an EOF or a reset already signalled (a client
        // that sends half a line and resets must still be noticed at once). At most
        // `readsPerEvent` chunks, though: a peer sending as fast as we read would otherwise keep
        // this loop going and buffer without bound before `onRead` can pause reading; the rest
        // is read by a follow-up on the queue (which a pause in `onRead` stops).
        var cutShort = false
        let bytes = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunkSize) { buffer in
            state.withLockedValue { state -> [[UInt8]] in
                var collected: [[UInt8]] = []
                guard case .open = state.phase, !state.readingPaused else { return collected }
                while true {
                    let count = read(fd, buffer.baseAddress, chunkSize)
                    if count > 0 {
                        collected.append(Array(UnsafeBufferPointer(rebasing: buffer[..<count])))
                        if collected.count == Self.readsPerEvent {
                            cutShort = true
                            return collected
                        }
                        continue
                    }
                    if count == 0 {
                        finish(&state, .peerClosed, ending: .graceful)
                        return collected
                    }
                    let error = _Posix.errno
                    if error == EINTR { continue }
                    if !_Posix.wouldBlock(error) {
                        finish(&state, .failed(SocketError(operation: "read", errno: error)), ending: .immediate)
                    }
                    return collected
                }
            }
        }
        // onClose, if the read above finished the connection, comes after this on the same queue.
        for chunk in bytes { onRead(chunk) }
        if cutShort {
            queue.async { [self] in readableEvent(chunkSize: chunkSize, onRead: onRead) }
        }
    }

    /// The most chunks one read event delivers before it yields the queue (and lets a pause
    /// in `onRead` take effect).
    static let readsPerEvent = 16

    /// Suspends the read source if it runs. Caller holds the lock.
    static func suspendReadSource(_ state: inout _ConnectionState) {
        if let source = state.readSource, !state.readSourceSuspended {
            state.readSourceSuspended = true
            source.suspend()
        }
    }

    // MARK: - Closing

    /// How the socket is let go when the connection closes.
    enum Ending {
        /// Everything queued was written: shut down sending (the peer reads EOF after the last
        /// byte), discard unread input (so the close is not a reset), close.
        case graceful
        /// The flush timed out: `SO_LINGER` 0, so the close resets the connection.
        case abortive
        /// The connection failed: close as it is.
        case immediate
    }

    /// Moves to `closed(reason)`: drops the send queue, lets the socket go as `ending` says and
    /// cancels the sources; the last cancel handler closes the socket and reports `onClose`.
    /// Caller holds the lock; does nothing if already closed.
    func finish(_ state: inout _ConnectionState, _ reason: CloseReason, ending: Ending) {
        if case .closed = state.phase { return }
        state.phase = .closed(reason)
        state.pending.removeAll()
        state.farewell = nil
        failWaitingSenders(&state, reason)
        state.readAgain = nil
        switch ending {
        case .graceful:
            _Posix.shutdownWrite(fd)
            discardInput()
        case .abortive:
            _Posix.setAbortiveClose(fd)
        case .immediate:
            break
        }
        if let timer = state.flushTimer {
            state.flushTimer = nil
            timer.cancel()
        }
        // A suspended source must be resumed to be cancelled (its cancel handler would never run).
        var cancelled = 0
        if let source = state.readSource {
            if state.readSourceSuspended {
                state.readSourceSuspended = false
                source.resume()
            }
            source.cancel()
            cancelled += 1
        }
        if let source = state.writeSource {
            if !state.writeSourceArmed {
                state.writeSourceArmed = true
                source.resume()
            }
            source.cancel()
            cancelled += 1
        }
        state.cancellationsPending = cancelled
        if cancelled == 0 {
            state.descriptorClosed = true
            _Posix.close(fd)
            if let onClose = state.onClose {
                state.onClose = nil
                queue.async { onClose(reason) }
            }
        }
    }

    /// A source's cancel handler (on `queue`, after its last event handler): the last one closes
    /// the socket and reports `onClose`.
    func sourceCancelled() {
        let report: (@Sendable () -> Void)? = state.withLockedValue { state in
            state.cancellationsPending -= 1
            guard state.cancellationsPending == 0 else { return nil }
            state.readSource = nil
            state.writeSource = nil
            state.descriptorClosed = true
            _Posix.close(fd)
            guard case .closed(let reason) = state.phase else {
                preconditionFailure("TCPConnection \(id): sources cancelled in state \(state.phase)")
            }
            guard let onClose = state.onClose else { return nil }
            state.onClose = nil
            return { onClose(reason) }
        }
        report?()
    }

    /// Reads and drops what the peer has already sent, so closing does not turn into a reset
    /// (a close with unread input sends RST, which can destroy our last bytes at the peer).
    /// Bounded: at most 64 KiB, never waits.
    private func discardInput() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer in
            for _ in 0..<16 {
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count <= 0 && !(count < 0 && _Posix.errno == EINTR) { return }
            }
        }
    }
}

/// The mutable state of a `TCPConnection`; lives in its `LockedValueBox` and is only touched
/// with that lock held.
struct _ConnectionState {
    enum Phase: CustomStringConvertible {
        /// Reading (unless paused) and sending.
        case open
        /// Closing: reading stopped, sends refused, flushing the queue, then `closed(reason)`.
        case draining(TCPConnection.CloseReason)
        /// Closed (the socket is closed once the sources' cancellation completes).
        case closed(TCPConnection.CloseReason)

        var description: String {
            switch self {
            case .open: "open"
            case .draining(let reason): "draining(\(reason))"
            case .closed(let reason): "closed(\(reason))"
            }
        }
    }

    var phase = Phase.open
    var started = false
    /// `pauseReading` is in force (may be set before `start`).
    var readingPaused = false
    var sendQueueLimit = Int.max
    var overflow = TCPConnection.SendOverflow.close
    var farewell: [UInt8]?
    /// `.backPressure` only: called when room is back after a `.full` (see `start`).
    var onWritable: (@Sendable () -> Void)?
    /// A `send` returned `.full` and `onWritable` has not been called since.
    var writableNoticeWanted = false
    /// `sendWhenReady` calls suspended for room, in arrival order (`.backPressure` only).
    var waitingSenders = _WaitingSenders()
    /// Bytes accepted by `send` and not yet written. Non-empty only while a flush is scheduled
    /// or the write source is armed (or the connection is closed and it is being dropped).
    var pending = _SendQueue()
    /// A flush of `pending` is scheduled on the connection's queue (see `send`).
    var flushScheduled = false
    var onClose: (@Sendable (TCPConnection.CloseReason) -> Void)?

    /// Created by `start`; suspended while paused or draining.
    var readSource: (any DispatchSourceRead)?
    /// Runs the read source's handler once more (after a resume); set by `start`, dropped on close.
    var readAgain: (@Sendable () -> Void)?
    var readSourceSuspended = false
    /// Created on the first write the kernel does not take whole; armed (resumed) only while
    /// `pending` is not empty.
    var writeSource: (any DispatchSourceWrite)?
    var writeSourceArmed = false
    /// While draining with bytes left: fires at the flush deadline.
    var flushTimer: (any DispatchSourceTimer)?
    /// Sources cancelled whose cancel handler has not run yet; the socket closes at 0.
    var cancellationsPending = 0
    var descriptorClosed = false
}

// Only ever touched inside `TCPConnection.state`'s pthread mutex (its Dispatch sources are not
// `Sendable` themselves).
extension _ConnectionState: @unchecked Sendable {}
