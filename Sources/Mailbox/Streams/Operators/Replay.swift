// replayLazily(upTo:) for SignalProducer.

/// Shared state of one `replayLazily` producer: the single underlying run, the values kept
/// for replay and the current observers.
///
/// Deliveries (live events, and the replay to a new observer) are queued under `state`'s lock
/// in the order they happen and performed outside it by whichever caller is not already
/// delivering — so a late observer gets exactly the replay followed by the live events, and an
/// observer may start the replayed producer again from inside a delivery without deadlock.
@usableFromInline
final class _ReplayCoordinator<Value, Error: Swift.Error>: Sendable {
    @usableFromInline
    struct State {
        var values: [Value] = []
        var terminal: Event<Value, Error>?
        var observers = Bag<Signal<Value, Error>.Observer>()
        var isStarted = false
        var run: (any Disposable)?
        /// Deliveries waiting to be performed, in order.
        var jobs: [@Sendable () -> Void] = []
        var isDelivering = false
    }

    let capacity: Int
    let state = _Locked(locking: State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    deinit {
        state.withLock { $0.run }?.dispose()
    }

    /// Performs queued deliveries unless another caller is already doing so.
    private func deliver() {
        while true {
            let jobs: [@Sendable () -> Void]? = state.withLock { state in
                if state.jobs.isEmpty {
                    state.isDelivering = false
                    return nil
                }
                let jobs = state.jobs
                state.jobs = []
                return jobs
            }
            guard let jobs else { return }
            for job in jobs { job() }
        }
    }

    /// Queues `job` under the lock (via `body`), then delivers if nobody else is.
    private func enqueue(_ body: (inout State) -> Void) {
        let shouldDeliver = state.withLock { state -> Bool in
            body(&state)
            guard !state.isDelivering, !state.jobs.isEmpty else { return false }
            state.isDelivering = true
            return true
        }
        if shouldDeliver { deliver() }
    }

    func received(_ event: Event<Value, Error>) {
        let carried = _Carried(event)
        enqueue { state in
            if case let .value(value) = event {
                if capacity > 0 {
                    if state.values.count == capacity { state.values.removeFirst() }
                    state.values.append(value)
                }
            } else {
                state.terminal = event
            }
            let observers = event.isTerminating ? state.observers.removeAll() : state.observers.elements
            state.jobs.append { for observer in observers { observer.send(carried.value) } }
        }
    }

    /// Queues the replay to `observer` and attaches it; returns whether the underlying run
    /// must start.
    func attach(_ observer: Signal<Value, Error>.Observer, lifetime: Lifetime) -> Bool {
        var start = false
        var token: Bag<Signal<Value, Error>.Observer>.Token?
        enqueue { state in
            let replay = _Carried((values: state.values, terminal: state.terminal))
            state.jobs.append {
                for value in replay.value.values { observer.send(value: value) }
                if let terminal = replay.value.terminal { observer.send(terminal) }
            }
            if state.terminal == nil {
                token = state.observers.insert(observer)
                start = !state.isStarted
                state.isStarted = true
            }
        }
        if let token {
            lifetime.observeEnded { [weak self] in
                _ = self?.state.withLock { $0.observers.remove(using: token) }
            }
        }
        return start
    }
}

extension SignalProducer {
    /// A producer that starts this one once — lazily, on its own first start — and shares
    /// that run: each start replays the last `capacity` values (and the terminal event, if
    /// any) and then forwards live events.
    ///
    /// Disposing one start detaches that observer only. The shared run is disposed when the
    /// returned producer (and every start of it) is gone.
    ///
    /// - Precondition: `capacity >= 0`.
    public func replayLazily(upTo capacity: Int) -> SignalProducer<Value, Error> {
        precondition(capacity >= 0, "replayLazily requires a non-negative capacity, not \(capacity)")
        let coordinator = _ReplayCoordinator<Value, Error>(capacity: capacity)
        let producer = self
        return SignalProducer { observer, lifetime in
            // Each start keeps the coordinator alive.
            lifetime.observeEnded { _ = coordinator }
            guard coordinator.attach(observer, lifetime: lifetime) else { return }
            let run = producer.start { [weak coordinator] event in coordinator?.received(event) }
            coordinator.state.withLock { $0.run = run }
        }
    }
}
