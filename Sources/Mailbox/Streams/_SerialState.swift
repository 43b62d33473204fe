/// Mutable state of a single-input operator, touched only while the upstream signal delivers
/// an event.
///
/// A signal delivers its events serially, under its `sendLock`, so an operator that observes
/// exactly one signal needs no lock of its own for its state: the upstream lock orders every
/// access (and ThreadSanitizer sees that ordering).
@usableFromInline
final class _SerialState<State> {
    /// Accessed only from inside the serial delivery of the one signal this state belongs to.
    @usableFromInline
    var value: State

    @inlinable
    init(_ value: State) {
        self.value = value
    }
}

// Accessed only within one signal's serial delivery, ordered by that signal's `sendLock`.
extension _SerialState: @unchecked Sendable {}

/// A value captured by a `@Sendable` closure that only moves it across threads in the way the
/// stream contracts already allow for `Value` (stored, then handed to an observer).
@usableFromInline
struct _Carried<T> {
    @usableFromInline
    let value: T

    @inlinable
    init(_ value: T) {
        self.value = value
    }
}

/// State of a multi-input operator, behind its own lock.
///
/// Like `LockedValueBox`, but `Sendable` whatever `State` is: operators keep values of any
/// `Value` type in it, and hand them on only as the stream contracts allow.
@usableFromInline
final class _Locked<State> {
    @usableFromInline
    let lock = Lock()

    /// Protected by `lock` (so no dynamic exclusivity check is needed on each access).
    @usableFromInline @exclusivity(unchecked)
    var value: State

    @inlinable
    init(_ value: State) {
        self.value = value
    }

    /// Runs `body` with the state, holding the lock.
    @inlinable
    func withLock<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

// `value` is only reachable through `withLock`, which holds `lock`.
extension _Locked: @unchecked Sendable {}

/// The state of a multi-input operator plus an outbox, so that events are computed in order
/// under the lock but sent downstream outside it.
///
/// `update` runs its body under the lock; the events the body appends are delivered in order
/// by whichever caller is not already delivering (a trampoline). An event that arrives while
/// another is being delivered — from another thread, or re-entrantly from this one, e.g. an
/// input interrupted because the downstream just terminated — is queued and delivered by the
/// delivering caller afterwards, so the operator never deadlocks on its own lock.
@usableFromInline
final class _Emitter<State, Value, Error: Swift.Error> {
    @usableFromInline
    let lock = Lock()

    /// Protected by `lock` (so no dynamic exclusivity check is needed on each access).
    @usableFromInline @exclusivity(unchecked)
    var state: State

    /// Events waiting to be sent. Protected by `lock`.
    @usableFromInline @exclusivity(unchecked)
    var outbox: [Event<Value, Error>] = []

    /// Whether some caller is sending the outbox. Protected by `lock`.
    @usableFromInline @exclusivity(unchecked)
    var isDelivering = false

    @usableFromInline
    let downstream: Signal<Value, Error>.Observer

    @inlinable
    init(_ state: State, downstream: Signal<Value, Error>.Observer) {
        self.state = state
        self.downstream = downstream
    }

    /// Updates the state and queues events (appended to the second argument), then delivers.
    @inlinable
    func update(_ body: (inout State, inout [Event<Value, Error>]) -> Void) {
        lock.lock()
        body(&state, &outbox)
        if isDelivering || outbox.isEmpty {
            lock.unlock()
            return
        }
        isDelivering = true
        while !outbox.isEmpty {
            let batch = outbox
            outbox = []
            lock.unlock()
            for event in batch { downstream.send(event) }
            lock.lock()
        }
        isDelivering = false
        lock.unlock()
    }
}

// `state`, `outbox` and `isDelivering` are only touched with `lock` held.
extension _Emitter: @unchecked Sendable {}

// Immutable after `init`; the value is handed on exactly as a signal hands on its values.
extension _Carried: @unchecked Sendable {}
