// combineLatest, zip, merge, withLatest(from:), sample(with:), sample(on:) for Signal and
// SignalProducer.
//
// Multi-input operators keep their state in an `_Emitter`: events are computed in arrival
// order under its lock and sent downstream outside it, so re-entrant events (an input
// interrupted because the downstream terminated) cannot deadlock.

extension Signal {
    /// Sends a tuple of the latest values of both signals whenever either sends, once both
    /// have sent at least one value.
    ///
    /// Completes only when both inputs have completed; fails or is interrupted as soon as
    /// either input is.
    public func combineLatest<U>(with other: Signal<U, Error>) -> Signal<(Value, U), Error> {
        Signal<(Value, U), Error> { downstream, lifetime in
            let emitter = _Emitter(_CombineLatestState<Value, U>(), downstream: downstream)
            lifetime += self.observe { event in
                emitter.update { state, out in
                    switch event {
                    case let .value(value):
                        state.left = value
                        if let right = state.right { out.append(.value((value, right))) }
                    case let .failed(error): out.append(.failed(error))
                    case .completed:
                        state.completed += 1
                        if state.completed == 2 { out.append(.completed) }
                    case .interrupted: out.append(.interrupted)
                    }
                }
            }
            lifetime += other.observe { event in
                emitter.update { state, out in
                    switch event {
                    case let .value(value):
                        state.right = value
                        if let left = state.left { out.append(.value((left, value))) }
                    case let .failed(error): out.append(.failed(error))
                    case .completed:
                        state.completed += 1
                        if state.completed == 2 { out.append(.completed) }
                    case .interrupted: out.append(.interrupted)
                    }
                }
            }
        }
    }

    /// Sends pairs made of the n-th value of each signal.
    ///
    /// Completes when either input has completed and every value it sent has been paired;
    /// fails or is interrupted as soon as either input is.
    ///
    /// - Complexity: buffers the values of the faster input.
    public func zip<U>(with other: Signal<U, Error>) -> Signal<(Value, U), Error> {
        Signal<(Value, U), Error> { downstream, lifetime in
            let emitter = _Emitter(_ZipState<Value, U>(), downstream: downstream)
            lifetime += self.observe { event in
                emitter.update { state, out in
                    switch event {
                    case let .value(value): state.left.append(value); state.drain(&out)
                    case let .failed(error): out.append(.failed(error))
                    case .completed: state.leftCompleted = true; state.drain(&out)
                    case .interrupted: out.append(.interrupted)
                    }
                }
            }
            lifetime += other.observe { event in
                emitter.update { state, out in
                    switch event {
                    case let .value(value): state.right.append(value); state.drain(&out)
                    case let .failed(error): out.append(.failed(error))
                    case .completed: state.rightCompleted = true; state.drain(&out)
                    case .interrupted: out.append(.interrupted)
                    }
                }
            }
        }
    }

    /// Sends the latest values of every signal as an array, whenever any sends, once all have
    /// sent. Completes when all have completed. An empty sequence gives `empty`.
    public static func combineLatest<S: Sequence>(_ signals: S) -> Signal<[Value], Error> where S.Element == Signal<Value, Error> {
        let signals = Array(signals)
        guard !signals.isEmpty else { return .empty }
        return Signal<[Value], Error> { downstream, lifetime in
            let emitter = _Emitter(_CombineLatestManyState<Value>(latest: Array(repeating: nil, count: signals.count)), downstream: downstream)
            for (index, signal) in signals.enumerated() {
                lifetime += signal.observe { event in
                    emitter.update { state, out in
                        switch event {
                        case let .value(value):
                            state.latest[index] = value
                            let all = state.latest.compactMap { $0 }
                            if all.count == signals.count { out.append(.value(all)) }
                        case let .failed(error): out.append(.failed(error))
                        case .completed:
                            state.completed += 1
                            if state.completed == signals.count { out.append(.completed) }
                        case .interrupted: out.append(.interrupted)
                        }
                    }
                }
            }
        }
    }

    /// Sends arrays of the n-th value of every signal. Completes when any signal has
    /// completed and its values have all been zipped. An empty sequence gives `empty`.
    public static func zip<S: Sequence>(_ signals: S) -> Signal<[Value], Error> where S.Element == Signal<Value, Error> {
        let signals = Array(signals)
        guard !signals.isEmpty else { return .empty }
        return Signal<[Value], Error> { downstream, lifetime in
            let initial = _ZipManyState<Value>(buffers: Array(repeating: [], count: signals.count), completed: Array(repeating: false, count: signals.count))
            let emitter = _Emitter(initial, downstream: downstream)
            for (index, signal) in signals.enumerated() {
                lifetime += signal.observe { event in
                    emitter.update { state, out in
                        switch event {
                        case let .value(value): state.buffers[index].append(value)
                        case let .failed(error): return out.append(.failed(error))
                        case .completed: state.completed[index] = true
                        case .interrupted: return out.append(.interrupted)
                        }
                        while state.buffers.allSatisfy({ !$0.isEmpty }) {
                            out.append(.value(state.buffers.indices.map { state.buffers[$0].removeFirst() }))
                        }
                        if state.buffers.indices.contains(where: { state.completed[$0] && state.buffers[$0].isEmpty }) {
                            out.append(.completed)
                        }
                    }
                }
            }
        }
    }

    /// Forwards the values of every signal as they arrive. Completes when all have completed;
    /// fails or is interrupted as soon as any is.
    public static func merge<S: Sequence>(_ signals: S) -> Signal<Value, Error> where S.Element == Signal<Value, Error> {
        let signals = Array(signals)
        guard !signals.isEmpty else { return .empty }
        return Signal { downstream, lifetime in
            let remaining = LockedValueBox(signals.count)
            for signal in signals {
                lifetime += signal.observe { event in
                    if case .completed = event {
                        let last = remaining.withLockedValue { count -> Bool in
                            count -= 1
                            return count == 0
                        }
                        if last { downstream.sendCompleted() }
                    } else {
                        downstream.send(event)
                    }
                }
            }
        }
    }

    /// Forwards the values of every signal as they arrive; see `merge(_:)` for sequences.
    public static func merge(_ signals: Signal<Value, Error>...) -> Signal<Value, Error> {
        merge(signals)
    }

    /// Forwards the values of both signals; see `merge(_:)`.
    public func merge(with other: Signal<Value, Error>) -> Signal<Value, Error> {
        Signal.merge([self, other])
    }

    /// Pairs each value with the latest value of `samplee`; values sent before `samplee` has
    /// sent one are dropped. Terminates with this signal.
    public func withLatest<U>(from samplee: Signal<U, Never>) -> Signal<(Value, U), Error> {
        Signal<(Value, U), Error> { downstream, lifetime in
            let latest = _Locked<U?>(nil)
            lifetime += samplee.observe { event in
                if case let .value(value) = event { latest.withLock { $0 = value } }
            }
            lifetime += self.observe { event in
                switch event {
                case let .value(value):
                    if let other = latest.withLock({ $0 }) { downstream.send(value: (value, other)) }
                case let .failed(error): downstream.send(error: error)
                case .completed: downstream.sendCompleted()
                case .interrupted: downstream.sendInterrupted()
                }
            }
        }
    }

    /// Pairs each value with the latest value of a run of `samplee`, started at once.
    public func withLatest<U>(from samplee: SignalProducer<U, Never>) -> Signal<(Value, U), Error> {
        Signal<(Value, U), Error> { downstream, lifetime in
            samplee.startWithSignal { signal, interrupter in
                lifetime += interrupter
                lifetime += self.withLatest(from: signal).observe(downstream)
            }
        }
    }

    /// Whenever `sampler` sends a value, sends the latest value of this signal paired with
    /// it (nothing if this signal has not sent yet; a value may be sent more than once).
    /// Completes when both have completed; fails with this signal, interrupts with either.
    public func sample<T>(with sampler: Signal<T, Never>) -> Signal<(Value, T), Error> {
        Signal<(Value, T), Error> { downstream, lifetime in
            let emitter = _Emitter(_SampleState<Value>(), downstream: downstream)
            lifetime += self.observe { event in
                emitter.update { state, out in
                    switch event {
                    case let .value(value): state.latest = value
                    case let .failed(error): out.append(.failed(error))
                    case .completed:
                        state.completed += 1
                        if state.completed == 2 { out.append(.completed) }
                    case .interrupted: out.append(.interrupted)
                    }
                }
            }
            lifetime += sampler.observe { event in
                emitter.update { state, out in
                    switch event {
                    case let .value(value):
                        if let latest = state.latest { out.append(.value((latest, value))) }
                    case .completed:
                        state.completed += 1
                        if state.completed == 2 { out.append(.completed) }
                    case .interrupted: out.append(.interrupted)
                    }
                }
            }
        }
    }

    /// Whenever `sampler` sends, sends the latest value of this signal; see
    /// `sample(with:)`.
    public func sample(on sampler: Signal<(), Never>) -> Signal<Value, Error> {
        sample(with: sampler).map { $0.0 }
    }
}

extension SignalProducer {
    /// See `Signal.combineLatest(with:)`; both runs start after the operator is attached.
    public func combineLatest<U>(with other: SignalProducer<U, Error>) -> SignalProducer<(Value, U), Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (other: Signal<U, Error>) in signal.combineLatest(with: other) } }(other)
    }

    /// See `Signal.combineLatest(with:)`.
    public func combineLatest<U>(with other: Signal<U, Error>) -> SignalProducer<(Value, U), Error> {
        combineLatest(with: SignalProducer<U, Error>(other))
    }

    /// See `Signal.zip(with:)`; both runs start after the operator is attached.
    public func zip<U>(with other: SignalProducer<U, Error>) -> SignalProducer<(Value, U), Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (other: Signal<U, Error>) in signal.zip(with: other) } }(other)
    }

    /// See `Signal.zip(with:)`.
    public func zip<U>(with other: Signal<U, Error>) -> SignalProducer<(Value, U), Error> {
        zip(with: SignalProducer<U, Error>(other))
    }

    /// See `Signal.merge(with:)`; both runs start after the operator is attached.
    public func merge(with other: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        SignalProducer.merge([self, other])
    }

    /// See `Signal.merge(with:)`.
    public func merge(with other: Signal<Value, Error>) -> SignalProducer<Value, Error> {
        merge(with: SignalProducer(other))
    }

    /// Starts every producer (in order) and forwards their values; see `Signal.merge(_:)`.
    public static func merge<S: Sequence & Sendable>(_ producers: S) -> SignalProducer<Value, Error> where S.Element == SignalProducer<Value, Error> {
        SignalProducer<SignalProducer<Value, Error>, Error>(producers).flatten(.merge)
    }

    /// Starts every producer (in order) and forwards their values.
    public static func merge(_ producers: SignalProducer<Value, Error>...) -> SignalProducer<Value, Error> {
        merge(producers)
    }

    /// Starts every producer and sends arrays of their latest values; see
    /// `Signal.combineLatest(_:)`.
    public static func combineLatest<S: Sequence & Sendable>(_ producers: S) -> SignalProducer<[Value], Error> where S.Element == SignalProducer<Value, Error> {
        SignalProducer<[Value], Error> { observer, lifetime in
            _startAll(ArraySlice(producers), lifetime: lifetime) { signals in
                lifetime += Signal.combineLatest(signals).observe(observer)
            }
        }
    }

    /// Starts every producer and sends arrays of their n-th values; see `Signal.zip(_:)`.
    public static func zip<S: Sequence & Sendable>(_ producers: S) -> SignalProducer<[Value], Error> where S.Element == SignalProducer<Value, Error> {
        SignalProducer<[Value], Error> { observer, lifetime in
            _startAll(ArraySlice(producers), lifetime: lifetime) { signals in
                lifetime += Signal.zip(signals).observe(observer)
            }
        }
    }

    /// Attaches `setup` to the signals of runs of every producer, then starts the runs (the
    /// last producer first), so no synchronous event is missed.
    static func _startAll(
        _ producers: ArraySlice<SignalProducer<Value, Error>>,
        signals: [Signal<Value, Error>] = [],
        lifetime: Lifetime,
        _ setup: ([Signal<Value, Error>]) -> Void
    ) {
        guard let first = producers.first else { return setup(signals) }
        first.startWithSignal { signal, interrupter in
            lifetime += interrupter
            _startAll(producers.dropFirst(), signals: signals + [signal], lifetime: lifetime, setup)
        }
    }

    /// See `Signal.withLatest(from:)`.
    public func withLatest<U>(from samplee: Signal<U, Never>) -> SignalProducer<(Value, U), Error> {
        lift { $0.withLatest(from: samplee) }
    }

    /// See `Signal.withLatest(from:)`; `samplee` starts before each run of this producer.
    public func withLatest<U>(from samplee: SignalProducer<U, Never>) -> SignalProducer<(Value, U), Error> {
        lift { $0.withLatest(from: samplee) }
    }

    /// See `Signal.sample(with:)`.
    public func sample<T>(with sampler: SignalProducer<T, Never>) -> SignalProducer<(Value, T), Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (sampler: Signal<T, Never>) in signal.sample(with: sampler) } }(sampler)
    }

    /// See `Signal.sample(with:)`.
    public func sample<T>(with sampler: Signal<T, Never>) -> SignalProducer<(Value, T), Error> {
        lift { $0.sample(with: sampler) }
    }

    /// See `Signal.sample(on:)`.
    public func sample(on sampler: SignalProducer<(), Never>) -> SignalProducer<Value, Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (sampler: Signal<(), Never>) in signal.sample(on: sampler) } }(sampler)
    }

    /// See `Signal.sample(on:)`.
    public func sample(on sampler: Signal<(), Never>) -> SignalProducer<Value, Error> {
        lift { $0.sample(on: sampler) }
    }
}

@usableFromInline
struct _CombineLatestState<Left, Right> {
    var left: Left?
    var right: Right?
    var completed = 0
}

@usableFromInline
struct _ZipState<Left, Right> {
    var left: [Left] = []
    var right: [Right] = []
    var leftCompleted = false
    var rightCompleted = false

    mutating func drain<Error>(_ out: inout [Event<(Left, Right), Error>]) {
        while !left.isEmpty, !right.isEmpty {
            out.append(.value((left.removeFirst(), right.removeFirst())))
        }
        if (leftCompleted && left.isEmpty) || (rightCompleted && right.isEmpty) {
            out.append(.completed)
        }
    }
}

@usableFromInline
struct _CombineLatestManyState<Value> {
    var latest: [Value?]
    var completed = 0
}

@usableFromInline
struct _ZipManyState<Value> {
    var buffers: [[Value]]
    var completed: [Bool]
}

@usableFromInline
struct _SampleState<Value> {
    var latest: Value?
    var completed = 0
}
