// scan, reduce, collect, combinePrevious for Signal and SignalProducer.

extension Signal {
    /// Sends each running result of `nextPartialResult`, starting from `initialResult`
    /// (which is not sent itself).
    @inlinable
    public func scan<U>(_ initialResult: U, _ nextPartialResult: @escaping @Sendable (U, Value) -> U) -> Signal<U, Error> {
        let accumulator = _SerialState(initialResult)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            accumulator.value = nextPartialResult(accumulator.value, value)
            downstream.send(value: accumulator.value)
        } }
    }

    /// Sends each running result of `nextPartialResult`, which updates the result in place.
    @inlinable
    public func scan<U>(into initialResult: U, _ nextPartialResult: @escaping @Sendable (inout U, Value) -> Void) -> Signal<U, Error> {
        let accumulator = _SerialState(initialResult)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            nextPartialResult(&accumulator.value, value)
            downstream.send(value: accumulator.value)
        } }
    }

    /// Sends pairs of the previous and the current value, the first pair pairing `initial`
    /// with the first value.
    @inlinable
    public func combinePrevious(_ initial: Value) -> Signal<(Value, Value), Error> {
        combinePrevious(initial: initial)
    }

    /// Sends pairs of the previous and the current value, from the second value on.
    @inlinable
    public func combinePrevious() -> Signal<(Value, Value), Error> {
        combinePrevious(initial: nil)
    }

    @inlinable
    func combinePrevious(initial: Value?) -> Signal<(Value, Value), Error> {
        let previous = _SerialState(initial)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            if let last = previous.value { downstream.send(value: (last, value)) }
            previous.value = value
        } }
    }

    /// On completion, sends the result of combining every value with `nextPartialResult`
    /// (or `initialResult` if there were none), then completes.
    @inlinable
    public func reduce<U>(_ initialResult: U, _ nextPartialResult: @escaping @Sendable (U, Value) -> U) -> Signal<U, Error> {
        let accumulator = _SerialState(initialResult)
        return _lift { downstream in { event in
            switch event {
            case let .value(value):
                accumulator.value = nextPartialResult(accumulator.value, value)
            case .completed:
                downstream.send(value: accumulator.value)
                downstream.sendCompleted()
            default:
                Signal._forward(event, to: downstream)
            }
        } }
    }

    /// On completion, sends the result of updating `initialResult` in place with every value,
    /// then completes.
    @inlinable
    public func reduce<U>(into initialResult: U, _ nextPartialResult: @escaping @Sendable (inout U, Value) -> Void) -> Signal<U, Error> {
        let accumulator = _SerialState(initialResult)
        return _lift { downstream in { event in
            switch event {
            case let .value(value):
                nextPartialResult(&accumulator.value, value)
            case .completed:
                downstream.send(value: accumulator.value)
                downstream.sendCompleted()
            default:
                Signal._forward(event, to: downstream)
            }
        } }
    }

    /// On completion, sends every value as one array (possibly empty), then completes.
    @inlinable
    public func collect() -> Signal<[Value], Error> {
        collect { _, _ in false }
    }

    /// Sends arrays of `count` values; on completion, sends the rest (if any) and completes.
    ///
    /// - Precondition: `count > 0`.
    @inlinable
    public func collect(count: Int) -> Signal<[Value], Error> {
        precondition(count > 0, "collect(count:) requires a positive count, not \(count)")
        return collect { values in values.count == count }
    }

    /// Collects values into an array and sends it whenever `shouldEmit` returns `true` for it
    /// (the array then starts over); on completion, sends what is left if it is not empty
    /// (or `[]` if nothing at all was sent) and completes.
    @inlinable
    public func collect(_ shouldEmit: @escaping @Sendable (_ collectedValues: [Value]) -> Bool) -> Signal<[Value], Error> {
        let state = _SerialState((values: [Value](), hasSent: false))
        return _lift { downstream in { event in
            switch event {
            case let .value(value):
                state.value.values.append(value)
                if shouldEmit(state.value.values) {
                    let values = state.value.values
                    state.value = ([], true)
                    downstream.send(value: values)
                }
            case .completed:
                if !state.value.values.isEmpty || !state.value.hasSent {
                    downstream.send(value: state.value.values)
                }
                downstream.sendCompleted()
            default:
                Signal._forward(event, to: downstream)
            }
        } }
    }

    /// Collects values; before adding a value for which `shouldEmit(collected, value)` returns
    /// `true`, sends the collected array and starts a new one with that value. On completion,
    /// sends what is left (or `[]` if nothing was sent at all) and completes.
    @inlinable
    public func collect(_ shouldEmit: @escaping @Sendable (_ collected: [Value], _ latest: Value) -> Bool) -> Signal<[Value], Error> {
        let state = _SerialState((values: [Value](), hasSent: false))
        return _lift { downstream in { event in
            switch event {
            case let .value(value):
                if !state.value.values.isEmpty, shouldEmit(state.value.values, value) {
                    let values = state.value.values
                    state.value = ([value], true)
                    downstream.send(value: values)
                } else {
                    state.value.values.append(value)
                }
            case .completed:
                if !state.value.values.isEmpty || !state.value.hasSent {
                    downstream.send(value: state.value.values)
                }
                downstream.sendCompleted()
            default:
                Signal._forward(event, to: downstream)
            }
        } }
    }
}

extension SignalProducer {
    /// See `Signal.scan(_:_:)`.
    @inlinable
    public func scan<U>(_ initialResult: U, _ nextPartialResult: @escaping @Sendable (U, Value) -> U) -> SignalProducer<U, Error> {
        let initial = _Carried(initialResult)
        return lift { $0.scan(initial.value, nextPartialResult) }
    }

    /// See `Signal.scan(into:_:)`.
    @inlinable
    public func scan<U>(into initialResult: U, _ nextPartialResult: @escaping @Sendable (inout U, Value) -> Void) -> SignalProducer<U, Error> {
        let initial = _Carried(initialResult)
        return lift { $0.scan(into: initial.value, nextPartialResult) }
    }

    /// See `Signal.combinePrevious(_:)`.
    @inlinable
    public func combinePrevious(_ initial: Value) -> SignalProducer<(Value, Value), Error> {
        let initial = _Carried(initial)
        return lift { $0.combinePrevious(initial.value) }
    }

    /// See `Signal.combinePrevious()`.
    @inlinable
    public func combinePrevious() -> SignalProducer<(Value, Value), Error> {
        lift { $0.combinePrevious() }
    }

    /// See `Signal.reduce(_:_:)`.
    @inlinable
    public func reduce<U>(_ initialResult: U, _ nextPartialResult: @escaping @Sendable (U, Value) -> U) -> SignalProducer<U, Error> {
        let initial = _Carried(initialResult)
        return lift { $0.reduce(initial.value, nextPartialResult) }
    }

    /// See `Signal.reduce(into:_:)`.
    @inlinable
    public func reduce<U>(into initialResult: U, _ nextPartialResult: @escaping @Sendable (inout U, Value) -> Void) -> SignalProducer<U, Error> {
        let initial = _Carried(initialResult)
        return lift { $0.reduce(into: initial.value, nextPartialResult) }
    }

    /// See `Signal.collect()`.
    @inlinable
    public func collect() -> SignalProducer<[Value], Error> {
        lift { $0.collect() }
    }

    /// See `Signal.collect(count:)`.
    @inlinable
    public func collect(count: Int) -> SignalProducer<[Value], Error> {
        lift { $0.collect(count: count) }
    }

    /// See `Signal.collect(_:)`.
    @inlinable
    public func collect(_ shouldEmit: @escaping @Sendable (_ collectedValues: [Value]) -> Bool) -> SignalProducer<[Value], Error> {
        lift { $0.collect(shouldEmit) }
    }

    /// See `Signal.collect(_:)` (two-argument form).
    @inlinable
    public func collect(_ shouldEmit: @escaping @Sendable (_ collected: [Value], _ latest: Value) -> Bool) -> SignalProducer<[Value], Error> {
        lift { $0.collect(shouldEmit) }
    }
}

extension Signal {
    /// Sends, for each value, the output `next` computes from the accumulated state and the
    /// value; `next` also returns the state the next value sees (starting from
    /// `initialState`). A `scan` whose output need not be the state.
    @inlinable
    public func scanMap<State, U>(_ initialState: State, _ next: @escaping @Sendable (State, Value) -> (State, U)) -> Signal<U, Error> {
        let state = _SerialState(initialState)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            let (newState, output) = next(state.value, value)
            state.value = newState
            downstream.send(value: output)
        } }
    }

    /// Sends, for each value, the output `next` returns after updating the accumulated state
    /// in place (starting from `initialState`).
    @inlinable
    public func scanMap<State, U>(into initialState: State, _ next: @escaping @Sendable (inout State, Value) -> U) -> Signal<U, Error> {
        let state = _SerialState(initialState)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            let output = next(&state.value, value)
            downstream.send(value: output)
        } }
    }
}

extension SignalProducer {
    /// See `Signal.scanMap(_:_:)`; each run starts from `initialState`.
    @inlinable
    public func scanMap<State, U>(_ initialState: State, _ next: @escaping @Sendable (State, Value) -> (State, U)) -> SignalProducer<U, Error> {
        let initial = _Carried(initialState)
        return lift { $0.scanMap(initial.value, next) }
    }

    /// See `Signal.scanMap(into:_:)`; each run starts from `initialState`.
    @inlinable
    public func scanMap<State, U>(into initialState: State, _ next: @escaping @Sendable (inout State, Value) -> U) -> SignalProducer<U, Error> {
        let initial = _Carried(initialState)
        return lift { $0.scanMap(into: initial.value, next) }
    }
}
