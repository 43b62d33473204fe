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
