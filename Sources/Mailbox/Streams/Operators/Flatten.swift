// flatten(_:), flatMap(_:_:), flatMapError(_:) for Signal and SignalProducer.

import Synchronization

/// Runs the inner producers of one flattened stream according to a `FlattenStrategy`.
///
/// State is a pure struct behind `_Locked`; inner producers are started and the downstream
/// is completed outside the lock.
@usableFromInline
final class _FlattenCoordinator<Value, Error: Swift.Error>: Sendable {
    @usableFromInline
    struct State {
        @usableFromInline var active = 0
        @usableFromInline var queue: [SignalProducer<Value, Error>] = []
        @usableFromInline var isOuterCompleted = false
        /// `.latest`: the id of the current inner; `.race`: the winner, once chosen.
        @usableFromInline var current: UInt64 = 0
        @usableFromInline var nextID: UInt64 = 1
        @usableFromInline var hasWinner = false
        @usableFromInline var raceRuns: [UInt64: any Disposable] = [:]
        /// `.latest`: the input observer of the current inner run (`nil` once it has
        /// terminated); sending it `interrupted` interrupts the run.
        @usableFromInline var latestInput: Signal<Value, Error>.Observer?
        /// `.latest`: the flattened signal has been disposed; a new inner run is interrupted
        /// at once.
        @usableFromInline var isLatestDisposed = false

        @inlinable
        init() {}
    }

    @usableFromInline
    let kind: FlattenStrategy.Kind
    @usableFromInline
    let downstream: Signal<Value, Error>.Observer
    /// Disposed when the flattened signal terminates: the outer observation and every inner run.
    @usableFromInline
    let disposables = CompositeDisposable()
    @usableFromInline
    let state = _Locked(locking: State())
    /// `.latest`: `state.current`, also readable without the lock (written under it), so a
    /// value from an inner run is checked with one atomic load.
    @usableFromInline
    let latestID = Atomic<UInt64>(0)
    /// `.latest`: the last id handed out (ids are taken without the lock).
    @usableFromInline
    let latestCounter = Atomic<UInt64>(0)

    @inlinable
    init(_ strategy: FlattenStrategy, _ downstream: Signal<Value, Error>.Observer) {
        self.kind = strategy.kind
        self.downstream = downstream
        if case .latest = strategy.kind {
            // Weak: the composite outlives the coordinator when the flattened signal is torn
            // down after every observer and run has let the coordinator go.
            disposables += { [weak self] in self?.disposeLatest() }
        }
    }

    @inlinable
    func outerSent(_ producer: SignalProducer<Value, Error>) {
        switch kind {
        case let .concurrent(limit):
            let start: UInt64? = state.withLock { state in
                if state.active < Int(clamping: limit) {
                    state.active += 1
                    return 0
                }
                state.queue.append(producer)
                return nil
            }
            if start != nil { startInner(producer, id: 0) }
        case .throttle:
            let start = state.withLock { state -> Bool in
                guard state.active == 0 else { return false }
                state.active = 1
                return true
            }
            if start { startInner(producer, id: 0) }
        case .latest:
            startLatest(producer)
        case .race:
            let id: UInt64? = state.withLock { state in
                guard !state.hasWinner else { return nil }
                state.active += 1
                state.nextID += 1
                return state.nextID - 1
            }
            if let id { startInner(producer, id: id) }
        }
    }

    @inlinable
    func outerCompleted() {
        let complete = state.withLock { state -> Bool in
            state.isOuterCompleted = true
            return state.active == 0 && state.queue.isEmpty
        }
        if complete { downstream.sendCompleted() }
    }

    /// Whether a value from inner `id` goes downstream (`.latest`: only the current inner;
    /// `.race`: only the winner, chosen by this call).
    @inlinable
    func accepts(_ id: UInt64) -> Bool {
        switch kind {
        case .concurrent, .throttle:
            return true
        case .latest:
            return latestID.load(ordering: .acquiring) == id
        case .race:
            let (accepted, losers): (Bool, [any Disposable]) = state.withLock { state in
                if state.hasWinner { return (state.current == id, []) }
                state.hasWinner = true
                state.current = id
                let losers = state.raceRuns.filter { $0.key != id }.map(\.value)
                state.raceRuns = state.raceRuns.filter { $0.key == id }
                state.active = 1
                return (true, losers)
            }
            for loser in losers { loser.dispose() }
            return accepted
        }
    }

    @inlinable
    func innerTerminated(_ id: UInt64) {
        var next: SignalProducer<Value, Error>?
        // `.latest`: the terminated run's input, released outside the lock.
        var finished: Signal<Value, Error>.Observer?
        let complete = state.withLock { state -> Bool in
            switch kind {
            case .concurrent:
                if state.queue.isEmpty {
                    state.active -= 1
                } else {
                    next = state.queue.removeFirst()
                }
            case .throttle:
                state.active = 0
            case .latest:
                guard state.current == id else { return false }
                state.active = 0
                finished = state.latestInput
                state.latestInput = nil
            case .race:
                if state.hasWinner {
                    guard state.current == id else { return false }
                    state.active = 0
                    return true
                }
                state.raceRuns[id] = nil
                state.active -= 1
            }
            return state.active == 0 && state.isOuterCompleted && state.queue.isEmpty
        }
        _ = finished  // released here, outside the lock
        if let next { startInner(next, id: 0) }
        if complete { downstream.sendCompleted() }
    }

    /// `.latest`: prepares a run of `producer` with its observer attached, makes it the current
    /// run and interrupts the previous one (one lock section), then starts it. No interrupter
    /// object and no `SerialDisposable`: the coordinator holds the run's input observer and
    /// interrupts the run through it.
    @inlinable
    func startLatest(_ producer: SignalProducer<Value, Error>) {
        let id = latestCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let core = _SignalCore<Value, Error>()
        let lifetime = core.makeRunLifetimeWhileUnshared()
        // Attached while the core is still private (nothing published yet): no lock.
        core.attachWhileUnshared(innerObserver(id: id, handle: nil))
        let input = Signal<Value, Error>.Observer(core: core)
        let toInterrupt = state.withLock { state -> Signal<Value, Error>.Observer? in
            state.current = id
            state.active = 1
            latestID.store(id, ordering: .releasing)
            if state.isLatestDisposed { return input }
            let previous = state.latestInput
            state.latestInput = input
            return previous
        }
        // The previous run (or this one, if the flattened signal has been disposed) is
        // interrupted before this one starts.
        toInterrupt?.sendInterrupted()
        if !core.isTerminated {
            producer.startHandler(input, lifetime)
        }
    }

    /// `.latest`: the flattened signal is disposed: interrupt the current run; later runs are
    /// interrupted as they are made.
    @inlinable
    func disposeLatest() {
        let input = state.withLock { state -> Signal<Value, Error>.Observer? in
            state.isLatestDisposed = true
            let input = state.latestInput
            state.latestInput = nil
            return input
        }
        input?.sendInterrupted()
    }

    @inlinable
    func startInner(_ producer: SignalProducer<Value, Error>, id: UInt64) {
        producer._startWithCore { core, interrupter in
            switch kind {
            case .latest:
                preconditionFailure("`.latest` runs start in `startLatest`")
            case .race:
                let handle = disposables.add(interrupter)
                state.withLock { $0.raceRuns[id] = interrupter }
                core.attach(innerObserver(id: id, handle: handle))
            case .concurrent, .throttle:
                let handle = disposables.add(interrupter)
                core.attach(innerObserver(id: id, handle: handle))
            }
        }
    }

    /// The observer of inner run `id`; `handle` removes the run from `disposables` when it ends.
    @inlinable
    func innerObserver(id: UInt64, handle: (any Disposable)?) -> Signal<Value, Error>.Observer {
        Signal<Value, Error>.Observer { [self] event in
            switch event {
            case let .value(value):
                if accepts(id) { downstream.send(value: value) }
            case let .failed(error):
                downstream.send(error: error)
            case .completed, .interrupted:
                handle?.dispose()
                innerTerminated(id)
            }
        }
    }
}

extension Signal where Value: SignalProducerConvertible, Value.Error == Error {
    /// Flattens a signal of streams into one, combining inner streams by `strategy`.
    ///
    /// Inner interruption counts as completion; an inner or outer failure fails the result;
    /// outer interruption interrupts it. See `FlattenStrategy`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> Signal<Value.Value, Error> {
        Signal<Value.Value, Error>(_unsafeGenerator: { downstream in
            let coordinator = _FlattenCoordinator<Value.Value, Error>(strategy, downstream)
            coordinator.disposables += self.observe { event in
                switch event {
                case let .value(inner): coordinator.outerSent(inner.producer)
                case let .failed(error): downstream.send(error: error)
                case .completed: coordinator.outerCompleted()
                case .interrupted: downstream.sendInterrupted()
                }
            }
            return coordinator.disposables
        })
    }
}

extension Signal where Value: SignalProducerConvertible, Error == Never {
    /// Flattens a signal that cannot fail of streams that can; see `flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> Signal<Value.Value, Value.Error> {
        promoteError(Value.Error.self).flatten(strategy)
    }
}

extension Signal where Value: SignalProducerConvertible, Error == Never, Value.Error == Never {
    /// Flattens a signal of streams when neither can fail; see `flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> Signal<Value.Value, Value.Error> {
        Signal<Value.Value, Value.Error>(_unsafeGenerator: { downstream in
            let coordinator = _FlattenCoordinator<Value.Value, Value.Error>(strategy, downstream)
            coordinator.disposables += self.observe { event in
                switch event {
                case let .value(inner): coordinator.outerSent(inner.producer)
                case .completed: coordinator.outerCompleted()
                case .interrupted: downstream.sendInterrupted()
                }
            }
            return coordinator.disposables
        })
    }
}

extension Signal where Value: SignalProducerConvertible, Value.Error == Never {
    /// Flattens a signal of streams that cannot fail; see `flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> Signal<Value.Value, Error> {
        map { $0.producer.promoteError(Error.self) }.flatten(strategy)
    }
}

extension Signal where Value: Sequence & SendableMetatype {
    /// Sends the elements of every sequence this signal sends, in order.
    @inlinable
    public func flatten() -> Signal<Value.Element, Error> {
        _lift { downstream in { event in
            guard case let .value(sequence) = event else { return Signal._forward(event, to: downstream) }
            for element in sequence { downstream.send(value: element) }
        } }
    }
}

// flatMap: ReactiveSwift's overload set, one for one, so that the same transforms type-check
// the same way (a transform returning `SignalProducer<U, E>` literally, e.g. `.empty` or
// `.init(value:)`, picks the concrete overloads; any other stream, the generic ones).

extension Signal {
    /// Maps each value to a producer and flattens them by `strategy`; see `flatten(_:)`.
    @inlinable
    public func flatMap<U>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, Error>) -> Signal<U, Error> {
        map(transform).flatten(strategy)
    }

    /// Maps each value to a stream and flattens them by `strategy`; see `flatten(_:)`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> Signal<Inner.Value, Error> where Inner.Error == Error {
        map { transform($0).producer }.flatten(strategy)
    }

    /// Maps each value to a producer that cannot fail and flattens them by `strategy`.
    @inlinable
    public func flatMap<U>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, Never>) -> Signal<U, Error> {
        map { transform($0).promoteError(Error.self) }.flatten(strategy)
    }

    /// Maps each value to a stream that cannot fail and flattens them by `strategy`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> Signal<Inner.Value, Error> where Inner.Error == Never {
        map { transform($0).producer.promoteError(Error.self) }.flatten(strategy)
    }

    /// On failure, starts the producer `transform` returns for the error and forwards its
    /// events instead; values and other terminal events pass through.
    @inlinable
    public func flatMapError<F>(_ transform: @escaping @Sendable (Error) -> SignalProducer<Value, F>) -> Signal<Value, F> {
        Signal<Value, F> { downstream, lifetime in
            lifetime += self.observe { event in
                switch event {
                case let .value(value): downstream.send(value: value)
                case let .failed(error): lifetime += transform(error).start(downstream)
                case .completed: downstream.sendCompleted()
                case .interrupted: downstream.sendInterrupted()
                }
            }
        }
    }

    /// On failure, starts the stream `transform` returns for the error (a producer, a signal
    /// or a property) and forwards its events instead.
    @inlinable
    public func flatMapError<Inner: SignalProducerConvertible>(_ transform: @escaping @Sendable (Error) -> Inner) -> Signal<Value, Inner.Error> where Inner.Value == Value {
        flatMapError { transform($0).producer }
    }
}

extension Signal where Error == Never {
    /// Maps each value of a signal that cannot fail to a producer that can, and flattens them.
    @inlinable
    public func flatMap<U, F>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, F>) -> Signal<U, F> {
        promoteError(F.self).flatMap(strategy, transform)
    }

    /// Maps each value to a stream of any error type and flattens them by `strategy`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> Signal<Inner.Value, Inner.Error> {
        promoteError(Inner.Error.self).flatMap(strategy, transform)
    }

    /// Maps each value to a producer that cannot fail and flattens them by `strategy`.
    @inlinable
    public func flatMap<U>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, Never>) -> Signal<U, Never> {
        map(transform).flatten(strategy)
    }

    /// Maps each value to a stream that cannot fail and flattens them by `strategy`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> Signal<Inner.Value, Never> where Inner.Error == Never {
        map { transform($0).producer }.flatten(strategy)
    }
}

extension SignalProducer where Value: SignalProducerConvertible, Value.Error == Error {
    /// See `Signal.flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> SignalProducer<Value.Value, Error> {
        lift { $0.flatten(strategy) }
    }
}

extension SignalProducer where Value: SignalProducerConvertible, Error == Never {
    /// See `Signal.flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> SignalProducer<Value.Value, Value.Error> {
        lift { $0.flatten(strategy) }
    }
}

extension SignalProducer where Value: SignalProducerConvertible, Error == Never, Value.Error == Never {
    /// See `Signal.flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> SignalProducer<Value.Value, Value.Error> {
        lift { $0.flatten(strategy) }
    }
}

extension SignalProducer where Value: SignalProducerConvertible, Value.Error == Never {
    /// See `Signal.flatten(_:)`.
    @inlinable
    public func flatten(_ strategy: FlattenStrategy) -> SignalProducer<Value.Value, Error> {
        lift { $0.flatten(strategy) }
    }
}

extension SignalProducer where Value: Sequence & SendableMetatype {
    /// See `Signal.flatten()`.
    @inlinable
    public func flatten() -> SignalProducer<Value.Element, Error> {
        lift { $0.flatten() }
    }
}

extension SignalProducer {
    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<U>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, Error>) -> SignalProducer<U, Error> {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> SignalProducer<Inner.Value, Error> where Inner.Error == Error {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<U>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, Never>) -> SignalProducer<U, Error> {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> SignalProducer<Inner.Value, Error> where Inner.Error == Never {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMapError(_:)`.
    @inlinable
    public func flatMapError<F>(_ transform: @escaping @Sendable (Error) -> SignalProducer<Value, F>) -> SignalProducer<Value, F> {
        lift { $0.flatMapError(transform) }
    }

    /// See `Signal.flatMapError(_:)`.
    @inlinable
    public func flatMapError<Inner: SignalProducerConvertible>(_ transform: @escaping @Sendable (Error) -> Inner) -> SignalProducer<Value, Inner.Error> where Inner.Value == Value {
        lift { $0.flatMapError(transform) }
    }
}

extension SignalProducer where Error == Never {
    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<U>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, Error>) -> SignalProducer<U, Error> {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> SignalProducer<Inner.Value, Error> where Inner.Error == Error {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<U, F>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> SignalProducer<U, F>) -> SignalProducer<U, F> {
        lift { $0.flatMap(strategy, transform) }
    }

    /// See `Signal.flatMap(_:_:)`.
    @inlinable
    public func flatMap<Inner: SignalProducerConvertible>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Inner
    ) -> SignalProducer<Inner.Value, Inner.Error> {
        lift { $0.flatMap(strategy, transform) }
    }
}
