// materialize, dematerialize, materializeResults, dematerializeResults, promoteError,
// promoteValue for Signal and SignalProducer.

/// Lets `dematerialize()` be constrained to signals of events.
public protocol EventProtocol: SendableMetatype {
    /// The value type of the event.
    associatedtype Value
    /// The error type of the event.
    associatedtype Error: Swift.Error
    /// `self` as an `Event`.
    var event: Event<Value, Error> { get }
}

extension Event: EventProtocol {
    /// `self`.
    @inlinable
    public var event: Event<Value, Error> { self }
}

/// Lets `dematerializeResults()` be constrained to signals of results.
public protocol ResultProtocol: SendableMetatype {
    /// The success type.
    associatedtype Success
    /// The failure type.
    associatedtype Failure: Swift.Error
    /// `self` as a `Result`.
    var result: Result<Success, Failure> { get }
}

extension Result: ResultProtocol {
    /// `self`.
    @inlinable
    public var result: Result<Success, Failure> { self }
}

extension Signal {
    /// Sends every event as a value — the terminal event included — and then completes.
    /// Never fails.
    @inlinable
    public func materialize() -> Signal<Event, Never> {
        _lift { downstream in { event in
            downstream.send(value: event)
            if event.isTerminating { downstream.sendCompleted() }
        } }
    }

    /// Sends each value as `.success`, a failure as `.failure` followed by completion;
    /// completion and interruption pass through. Never fails.
    @inlinable
    public func materializeResults() -> Signal<Result<Value, Error>, Never> {
        _lift { downstream in { event in
            switch event {
            case let .value(value): downstream.send(value: .success(value))
            case let .failed(error):
                downstream.send(value: .failure(error))
                downstream.sendCompleted()
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }
}

extension Signal where Error == Never {
    /// Sends this signal's values and terminal events as failable events: the inverse of
    /// `materialize()`. Same as `promoteError(_:)`.
    @inlinable
    public func promoteError<F>(_: F.Type = F.self) -> Signal<Value, F> {
        _lift { downstream in { event in
            switch event {
            case let .value(value): downstream.send(value: value)
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }
}

extension Signal where Value == Never {
    /// Changes the value type of a signal that sends no values.
    @inlinable
    public func promoteValue<U>(_: U.Type = U.self) -> Signal<U, Error> {
        _lift { downstream in { event in
            switch event {
            case let .failed(error): downstream.send(error: error)
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }
}

extension Signal where Value: EventProtocol, Error == Never {
    /// Sends the events carried as values: the inverse of `materialize()`.
    @inlinable
    public func dematerialize() -> Signal<Value.Value, Value.Error> {
        _lift { downstream in { event in
            switch event {
            case let .value(inner): downstream.send(inner.event)
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }
}

extension Signal where Value: ResultProtocol, Error == Never {
    /// Sends success values and fails with the first failure: the inverse of
    /// `materializeResults()`.
    @inlinable
    public func dematerializeResults() -> Signal<Value.Success, Value.Failure> {
        _lift { downstream in { event in
            switch event {
            case let .value(inner):
                switch inner.result {
                case let .success(value): downstream.send(value: value)
                case let .failure(error): downstream.send(error: error)
                }
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }
}

extension SignalProducer {
    /// See `Signal.materialize()`.
    @inlinable
    public func materialize() -> SignalProducer<Event, Never> {
        lift { $0.materialize() }
    }

    /// See `Signal.materializeResults()`.
    @inlinable
    public func materializeResults() -> SignalProducer<Result<Value, Error>, Never> {
        lift { $0.materializeResults() }
    }
}

extension SignalProducer where Error == Never {
    /// See `Signal.promoteError(_:)`.
    @inlinable
    public func promoteError<F>(_: F.Type = F.self) -> SignalProducer<Value, F> {
        lift { $0.promoteError(F.self) }
    }
}

extension SignalProducer where Value == Never {
    /// See `Signal.promoteValue(_:)`.
    @inlinable
    public func promoteValue<U>(_: U.Type = U.self) -> SignalProducer<U, Error> {
        lift { $0.promoteValue(U.self) }
    }
}

extension SignalProducer where Value: EventProtocol, Error == Never {
    /// See `Signal.dematerialize()`.
    @inlinable
    public func dematerialize() -> SignalProducer<Value.Value, Value.Error> {
        lift { $0.dematerialize() }
    }
}

extension SignalProducer where Value: ResultProtocol, Error == Never {
    /// See `Signal.dematerializeResults()`.
    @inlinable
    public func dematerializeResults() -> SignalProducer<Value.Success, Value.Failure> {
        lift { $0.dematerializeResults() }
    }
}

// ReactiveSwift's identity overloads: `promoteError()`/`promoteValue()` with nothing to infer
// the new type from keep the type as it is (instead of failing to type-check).

extension Signal where Error == Never {
    /// `self`: promoting a signal that cannot fail to one that cannot fail.
    @inlinable
    public func promoteError(_: Error.Type = Error.self) -> Signal<Value, Error> {
        self
    }
}

extension Signal where Value == Never {
    /// `self`: promoting a signal that sends no values to one that sends no values.
    @inlinable
    public func promoteValue(_: Value.Type = Value.self) -> Signal<Value, Error> {
        self
    }
}

extension SignalProducer where Error == Never {
    /// `self`: promoting a producer that cannot fail to one that cannot fail.
    @inlinable
    public func promoteError(_: Error.Type = Error.self) -> SignalProducer<Value, Error> {
        self
    }
}

extension SignalProducer where Value == Never {
    /// `self`: promoting a producer that sends no values to one that sends no values.
    @inlinable
    public func promoteValue(_: Value.Type = Value.self) -> SignalProducer<Value, Error> {
        self
    }
}

extension Result: SignalProducerConvertible {
    /// A producer whose runs send the success value and complete, or fail with the failure.
    public var producer: SignalProducer<Success, Failure> {
        let result = _Carried(self)
        return SignalProducer { observer, _ in
            switch result.value {
            case let .success(value):
                observer.send(value: value)
                observer.sendCompleted()
            case let .failure(error):
                observer.send(error: error)
            }
        }
    }
}
