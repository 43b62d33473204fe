// replayLazily(upTo:) for SignalProducer.

/// Shared state of one `replayLazily` producer: the single underlying run, the values kept
/// for replay and the current observers.
///
/// Two locks: `state`'s protects the fields and is never held while observers run;
/// `delivery` is held while events (live or replayed) are delivered, so a late observer gets
/// exactly the replay followed by the live events, with nothing lost or repeated.
final class _ReplayCoordinator<Value, Error: Swift.Error>: Sendable {
    struct State {
        var values: [Value] = []
        var terminal: Event<Value, Error>?
        var observers = Bag<Signal<Value, Error>.Observer>()
        var isStarted = false
        var run: (any Disposable)?
    }

    let capacity: Int
    let state = _Locked(State())
    /// Held while delivering; see the type's comment.
    let delivery = Lock()

    init(capacity: Int) {
        self.capacity = capacity
    }

    deinit {
        state.withLock { $0.run }?.dispose()
    }

    func received(_ event: Event<Value, Error>) {
        delivery.lock()
        defer { delivery.unlock() }
        let observers = state.withLock { state in
            if case let .value(value) = event {
                if capacity > 0 {
                    if state.values.count == capacity { state.values.removeFirst() }
                    state.values.append(value)
                }
            } else {
                state.terminal = event
            }
            return event.isTerminating ? state.observers.removeAll() : state.observers.elements
        }
        for observer in observers { observer.send(event) }
    }

    /// Replays to `observer` and attaches it; returns whether the underlying run must start.
    func attach(_ observer: Signal<Value, Error>.Observer, lifetime: Lifetime) -> Bool {
        delivery.lock()
        let (values, terminal, token, start): ([Value], Event<Value, Error>?, Bag<Signal<Value, Error>.Observer>.Token?, Bool) = state.withLock { state in
            if let terminal = state.terminal { return (state.values, terminal, nil, false) }
            let token = state.observers.insert(observer)
            defer { state.isStarted = true }
            return (state.values, nil, token, !state.isStarted)
        }
        for value in values { observer.send(value: value) }
        if let terminal { observer.send(terminal) }
        delivery.unlock()
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
