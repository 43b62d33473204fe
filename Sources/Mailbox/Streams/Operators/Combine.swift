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
            let latest = _Locked<U?>(locking: nil)
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

    /// Pairs each value with the latest value of `samplee` (a producer — started at once —, a
    /// signal or a property).
    public func withLatest<Samplee: SignalProducerConvertible>(from samplee: Samplee) -> Signal<(Value, Samplee.Value), Error> where Samplee.Error == Never {
        withLatest(from: samplee.producer)
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
    /// See `Signal.combineLatest(with:)`. Both runs start once the operator is attached to
    /// both, this producer's first (ReactiveSwift's argument order).
    public func combineLatest<U>(with other: SignalProducer<U, Error>) -> SignalProducer<(Value, U), Error> {
        SignalProducer.combineLatest(self, other)
    }

    /// See `Signal.combineLatest(with:)`; `other` is a producer, a signal or a property.
    public func combineLatest<Other: SignalProducerConvertible>(with other: Other) -> SignalProducer<(Value, Other.Value), Error> where Other.Error == Error {
        combineLatest(with: other.producer)
    }

    /// See `Signal.zip(with:)`. Both runs start once the operator is attached to both, this
    /// producer's first.
    public func zip<U>(with other: SignalProducer<U, Error>) -> SignalProducer<(Value, U), Error> {
        SignalProducer.zip(self, other)
    }

    /// See `Signal.zip(with:)`; `other` is a producer, a signal or a property.
    public func zip<Other: SignalProducerConvertible>(with other: Other) -> SignalProducer<(Value, Other.Value), Error> where Other.Error == Error {
        zip(with: other.producer)
    }

    /// See `Signal.merge(with:)`; both runs start, this producer's first.
    public func merge(with other: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        SignalProducer.merge([self, other])
    }

    /// See `Signal.merge(with:)`; `other` is a producer, a signal or a property.
    public func merge<Other: SignalProducerConvertible>(with other: Other) -> SignalProducer<Value, Error> where Other.Value == Value, Other.Error == Error {
        merge(with: other.producer)
    }

    /// Starts every producer (in order) and forwards their values; see `Signal.merge(_:)`.
    /// The producers are read from `producers` when this is called.
    public static func merge<S: Sequence>(_ producers: S) -> SignalProducer<Value, Error> where S.Element == SignalProducer<Value, Error> {
        SignalProducer<SignalProducer<Value, Error>, Error>(Array(producers)).flatten(.merge)
    }

    /// Starts every input (in order) and sends arrays of their latest values once all have
    /// sent; see `Signal.combineLatest(_:)`. An empty sequence completes at once, sending
    /// nothing.
    ///
    /// The inputs (producers, signals or properties) are read from `producers` when this is
    /// called; each start asks each of them for a producer.
    public static func combineLatest<S: Sequence>(_ producers: S) -> SignalProducer<[Value], Error> where S.Element: SignalProducerConvertible, S.Element.Value == Value, S.Element.Error == Error {
        _startAll(producers, emptySentinel: nil) { Signal.combineLatest($0) }
    }

    /// Like `combineLatest(_:)`, but an empty sequence sends `emptySentinel`, then completes.
    public static func combineLatest<S: Sequence>(_ producers: S, emptySentinel: [S.Element.Value]) -> SignalProducer<[Value], Error> where S.Element: SignalProducerConvertible, S.Element.Value == Value, S.Element.Error == Error {
        _startAll(producers, emptySentinel: _Carried(emptySentinel)) { Signal.combineLatest($0) }
    }

    /// Starts every input (in order) and sends arrays of their n-th values; see
    /// `Signal.zip(_:)`. An empty sequence completes at once, sending nothing.
    public static func zip<S: Sequence>(_ producers: S) -> SignalProducer<[Value], Error> where S.Element: SignalProducerConvertible, S.Element.Value == Value, S.Element.Error == Error {
        _startAll(producers, emptySentinel: nil) { Signal.zip($0) }
    }

    /// Like `zip(_:)`, but an empty sequence sends `emptySentinel`, then completes.
    public static func zip<S: Sequence>(_ producers: S, emptySentinel: [S.Element.Value]) -> SignalProducer<[Value], Error> where S.Element: SignalProducerConvertible, S.Element.Value == Value, S.Element.Error == Error {
        _startAll(producers, emptySentinel: _Carried(emptySentinel)) { Signal.zip($0) }
    }

    /// A producer whose runs start a run of every input, in order, each into a pipe, once
    /// `combine` is attached to all the pipes (as ReactiveSwift does).
    static func _startAll<S: Sequence>(
        _ inputs: S,
        emptySentinel: _Carried<[Value]>?,
        _ combine: @escaping @Sendable ([Signal<Value, Error>]) -> Signal<[Value], Error>
    ) -> SignalProducer<[Value], Error> where S.Element: SignalProducerConvertible, S.Element.Value == Value, S.Element.Error == Error {
        let inputs = inputs.map { _Carried($0) }
        return SignalProducer<[Value], Error> { observer, lifetime in
            let setup = inputs.map { (producer: $0.value.producer, pipe: Signal<Value, Error>.pipe()) }
            guard !setup.isEmpty else {
                if let emptySentinel { observer.send(value: emptySentinel.value) }
                observer.sendCompleted()
                return
            }
            lifetime += combine(setup.map(\.pipe.output)).observe(observer)
            for (producer, pipe) in setup {
                lifetime += producer.start(pipe.input)
            }
        }
    }

    /// See `Signal.withLatest(from:)`.
    public func withLatest<U>(from samplee: Signal<U, Never>) -> SignalProducer<(Value, U), Error> {
        lift { $0.withLatest(from: samplee) }
    }

    /// See `Signal.withLatest(from:)`: `samplee`'s run starts before each run of this
    /// producer.
    public func withLatest<U>(from samplee: SignalProducer<U, Never>) -> SignalProducer<(Value, U), Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (samplee: Signal<U, Never>) in signal.withLatest(from: samplee) } }(samplee)
    }

    /// See `Signal.withLatest(from:)`; `samplee` is a producer, a signal or a property.
    public func withLatest<Samplee: SignalProducerConvertible>(from samplee: Samplee) -> SignalProducer<(Value, Samplee.Value), Error> where Samplee.Error == Never {
        withLatest(from: samplee.producer)
    }

    /// See `Signal.sample(with:)`: this producer's run starts first, then `sampler`'s.
    public func sample<T>(with sampler: SignalProducer<T, Never>) -> SignalProducer<(Value, T), Error> {
        _liftLeft(sampler) { $0.sample(with: $1) }
    }

    /// See `Signal.sample(with:)`; `sampler` is a producer, a signal or a property.
    public func sample<Sampler: SignalProducerConvertible>(with sampler: Sampler) -> SignalProducer<(Value, Sampler.Value), Error> where Sampler.Error == Never {
        sample(with: sampler.producer)
    }

    /// See `Signal.sample(with:)`.
    public func sample<T>(with sampler: Signal<T, Never>) -> SignalProducer<(Value, T), Error> {
        lift { $0.sample(with: sampler) }
    }

    /// See `Signal.sample(on:)`: this producer's run starts first, then `sampler`'s.
    public func sample(on sampler: SignalProducer<(), Never>) -> SignalProducer<Value, Error> {
        _liftLeft(sampler) { $0.sample(on: $1) }
    }

    /// See `Signal.sample(on:)`; `sampler` is a producer, a signal or a property.
    public func sample<Sampler: SignalProducerConvertible>(on sampler: Sampler) -> SignalProducer<Value, Error> where Sampler.Value == (), Sampler.Error == Never {
        sample(on: sampler.producer)
    }

    /// See `Signal.sample(on:)`.
    public func sample(on sampler: Signal<(), Never>) -> SignalProducer<Value, Error> {
        lift { $0.sample(on: sampler) }
    }

    /// Applies a binary signal operator to a run of this producer and one of `right`: both
    /// signals are set up (and the operator attached) first, then this producer's run starts,
    /// then `right`'s (ReactiveSwift's `liftLeft`; `lift` starts `right` first).
    @inlinable
    func _liftLeft<U, F, V, G>(
        _ right: SignalProducer<U, F>,
        _ transform: @escaping @Sendable (Signal<Value, Error>, Signal<U, F>) -> Signal<V, G>
    ) -> SignalProducer<V, G> {
        let left = self
        return SignalProducer<V, G> { observer, lifetime in
            right.startWithSignal { rightSignal, rightInterrupter in
                lifetime += rightInterrupter
                left.startWithSignal { leftSignal, leftInterrupter in
                    lifetime += leftInterrupter
                    lifetime += transform(leftSignal, rightSignal).observe(observer)
                }
            }
        }
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
