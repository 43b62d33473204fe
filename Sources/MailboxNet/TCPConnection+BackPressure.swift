import Dispatch
import Mailbox
import Synchronization

extension TCPConnection {
    /// Why `sendWhenReady` could not queue its bytes: the connection closed, or began closing,
    /// first.
    ///
    /// A plain value (`Sendable`, `Equatable`); `reason` is the reason `onClose` gets (or will
    /// get, when the connection was still draining).
    public struct ClosedError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Why the connection closed.
        public let reason: CloseReason

        /// A closed-connection error for `reason`.
        public init(reason: CloseReason) {
            self.reason = reason
        }

        /// "connection closed before the bytes could be queued (peerClosed)".
        public var description: String { "connection closed before the bytes could be queued (\(reason))" }
    }

    /// Queues `bytes`, suspending while the send queue has no room for them; the `async` form of
    /// `send(_:)` for `.backPressure` connections.
    ///
    /// Waiting callers are served in the order they began waiting (FIFO), as the kernel drains
    /// the queue; while any waits, `send(_:)` returns `.full` so it cannot overtake them. A
    /// buffer larger than the whole `sendQueueLimit` waits until the queue is empty. Does not
    /// block a thread while it waits (the continuation is resumed from the connection's queue,
    /// outside its lock). Thread-safe; cancellation-safe.
    ///
    /// With `.close` overflow (or before `start`) it never waits: it is `send(_:)` that throws
    /// instead of returning `.sendQueueExceeded` or `.closed`.
    ///
    /// - Throws: `ClosedError` if the connection is closing or closed, or closes while this call
    ///   waits (nothing of `bytes` is then queued); `CancellationError` if the task is cancelled
    ///   while waiting (the waiter is removed and nothing of `bytes` is queued).
    /// - Complexity: O(waiting senders) to cancel one waiter; otherwise as `send(_:)`.
    public func sendWhenReady(_ bytes: [UInt8]) async throws {
        let waiterID = Self.nextWaiterID.wrappingAdd(1, ordering: .relaxed).oldValue
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate = state.withLockedValue { state -> Result<Void, any Error>? in
                    switch state.phase {
                    case .draining(let reason), .closed(let reason):
                        return .failure(ClosedError(reason: reason))
                    case .open:
                        break
                    }
                    // Checked under the lock the cancellation handler takes too: a cancellation
                    // either is seen here or finds the waiter below.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.overflow == .backPressure && !state.waitingSenders.isEmpty {
                        state.waitingSenders.append(id: waiterID, bytes: bytes, continuation: continuation)
                        return nil
                    }
                    switch send(bytes, &state) {
                    case .queued:
                        return .success(())
                    case .full:
                        state.waitingSenders.append(id: waiterID, bytes: bytes, continuation: continuation)
                        return nil
                    case .sendQueueExceeded:
                        return .failure(ClosedError(reason: .sendQueueExceeded))
                    case .closed:
                        switch state.phase {
                        case .open: preconditionFailure("TCPConnection \(id): send said closed while open")
                        case .draining(let reason), .closed(let reason): return .failure(ClosedError(reason: reason))
                        }
                    }
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.waitingSenders.remove(id: waiterID) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// `sendWhenReady` calls waiting for room now (for tests and metrics).
    var waitingSenderCount: Int {
        state.withLockedValue { $0.waitingSenders.count }
    }

    static let nextWaiterID = Atomic<UInt64>(1)

    /// After a flush made room (caller holds the lock, connection in any phase): admits waiting
    /// senders whose bytes now fit, in FIFO order, and decides whether `onWritable` is due.
    /// The returned action is performed outside the lock.
    func roomMade(_ state: inout _ConnectionState) -> _RoomAction {
        guard case .open = state.phase, state.overflow == .backPressure else { return .none }
        var admitted: [CheckedContinuation<Void, any Error>] = []
        while let first = state.waitingSenders.first, Self.hasRoom(for: first.bytes.count, state) {
            state.waitingSenders.removeFirst()
            state.pending.append(first.bytes)
            admitted.append(first.continuation)
        }
        if !admitted.isEmpty { scheduleFlush(&state) }
        var notice: (@Sendable () -> Void)?
        if state.writableNoticeWanted && state.waitingSenders.isEmpty
            && state.pending.byteCount <= state.sendQueueLimit / 2 {
            state.writableNoticeWanted = false
            notice = state.onWritable
        }
        return _RoomAction(admitted: admitted, onWritable: notice)
    }

    /// Fails every waiting sender with `ClosedError(reason)`, resumed later on the connection's
    /// queue (never under the lock). Caller holds the lock.
    func failWaitingSenders(_ state: inout _ConnectionState, _ reason: CloseReason) {
        state.writableNoticeWanted = false
        let waiters = state.waitingSenders.removeAll()
        guard !waiters.isEmpty else { return }
        queue.async {
            for waiter in waiters { waiter.resume(throwing: ClosedError(reason: reason)) }
        }
    }
}

/// What to do, outside the connection's lock, once room was made in its send queue.
struct _RoomAction {
    /// Waiting senders whose bytes were queued: resume them.
    var admitted: [CheckedContinuation<Void, any Error>]
    /// Call it: room is back after a `.full`.
    var onWritable: (@Sendable () -> Void)?

    static let none = _RoomAction(admitted: [], onWritable: nil)

    func perform() {
        for continuation in admitted { continuation.resume() }
        onWritable?()
    }
}

/// The `sendWhenReady` calls suspended for room: a FIFO with removal by id (cancellation).
/// Not thread-safe: it lives inside the connection's locked state.
struct _WaitingSenders {
    struct Waiter {
        var id: UInt64
        var bytes: [UInt8]
        var continuation: CheckedContinuation<Void, any Error>
    }

    private var waiters: [Waiter] = []
    private var head = 0

    var isEmpty: Bool { head == waiters.count }
    var count: Int { waiters.count - head }
    var first: Waiter? { isEmpty ? nil : waiters[head] }

    mutating func append(id: UInt64, bytes: [UInt8], continuation: CheckedContinuation<Void, any Error>) {
        waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
    }

    /// Drops the first waiter. - Complexity: amortised O(1).
    mutating func removeFirst() {
        precondition(!isEmpty, "_WaitingSenders: removeFirst on an empty queue")
        head += 1
        if head == waiters.count {
            waiters = []
            head = 0
        } else if head >= 32 && head * 2 >= waiters.count {
            waiters.removeFirst(head)
            head = 0
        }
    }

    /// Removes the waiter with `id` and returns its continuation; nil if it is not waiting
    /// (admitted or failed already). - Complexity: O(n).
    mutating func remove(id: UInt64) -> CheckedContinuation<Void, any Error>? {
        guard let index = waiters[head...].firstIndex(where: { $0.id == id }) else { return nil }
        let continuation = waiters[index].continuation
        waiters.remove(at: index)
        if isEmpty {
            waiters = []
            head = 0
        }
        return continuation
    }

    /// Empties the queue and returns the continuations, in order.
    mutating func removeAll() -> [CheckedContinuation<Void, any Error>] {
        let continuations = waiters[head...].map(\.continuation)
        waiters = []
        head = 0
        return continuations
    }
}
