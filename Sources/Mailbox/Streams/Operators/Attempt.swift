// attempt(_:), attemptMap(_:) for Signal and SignalProducer: run a fallible action or transform
// for each value; the first failure fails the stream.

extension Signal {
    /// Runs `action` for each value and forwards the value if it succeeds; the first failure
    /// fails the returned signal with its error (and detaches it from this one, so `action`
    /// runs for no later value).
    ///
    /// `action` runs on the thread that delivers each value, serially; it may read other
    /// streams and properties (it is not called under any lock of this operator).
    @inlinable
    public func attempt(_ action: @escaping @Sendable (Value) -> Result<(), Error>) -> Signal<Value, Error> {
        _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            switch action(value) {
            case .success: downstream.send(value: value)
            case let .failure(error): downstream.send(error: error)
            }
        } }
    }

    /// Sends `transform(value)`'s success value for each value; the first failure fails the
    /// returned signal with its error (and detaches it from this one).
    ///
    /// `transform` runs on the thread that delivers each value, serially.
    @inlinable
    public func attemptMap<U>(_ transform: @escaping @Sendable (Value) -> Result<U, Error>) -> Signal<U, Error> {
        _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            switch transform(value) {
            case let .success(mapped): downstream.send(value: mapped)
            case let .failure(error): downstream.send(error: error)
            }
        } }
    }
}

extension Signal where Error == Never {
    /// Runs the throwing `action` for each value and forwards the value if it returns; the
    /// first error thrown fails the returned signal (typed `any Swift.Error`).
    @inlinable
    public func attempt(_ action: @escaping @Sendable (Value) throws -> Void) -> Signal<Value, any Swift.Error> {
        promoteError((any Swift.Error).self).attempt(action)
    }

    /// Sends what the throwing `transform` returns for each value; the first error thrown
    /// fails the returned signal (typed `any Swift.Error`).
    @inlinable
    public func attemptMap<U>(_ transform: @escaping @Sendable (Value) throws -> U) -> Signal<U, any Swift.Error> {
        promoteError((any Swift.Error).self).attemptMap(transform)
    }
}

extension Signal where Error == any Swift.Error {
    /// Runs the throwing `action` for each value and forwards the value if it returns; the
    /// first error thrown fails the returned signal.
    @inlinable
    public func attempt(_ action: @escaping @Sendable (Value) throws -> Void) -> Signal<Value, Error> {
        attempt { value in Result { try action(value) } }
    }

    /// Sends what the throwing `transform` returns for each value; the first error thrown
    /// fails the returned signal.
    @inlinable
    public func attemptMap<U>(_ transform: @escaping @Sendable (Value) throws -> U) -> Signal<U, Error> {
        attemptMap { value in Result { try transform(value) } }
    }
}

extension SignalProducer {
    /// See `Signal.attempt(_:)`: applied to every run.
    @inlinable
    public func attempt(_ action: @escaping @Sendable (Value) -> Result<(), Error>) -> SignalProducer<Value, Error> {
        lift { $0.attempt(action) }
    }

    /// See `Signal.attemptMap(_:)`: applied to every run.
    @inlinable
    public func attemptMap<U>(_ transform: @escaping @Sendable (Value) -> Result<U, Error>) -> SignalProducer<U, Error> {
        lift { $0.attemptMap(transform) }
    }
}

extension SignalProducer where Error == Never {
    /// See `Signal.attempt(_:)` (throwing form): applied to every run.
    @inlinable
    public func attempt(_ action: @escaping @Sendable (Value) throws -> Void) -> SignalProducer<Value, any Swift.Error> {
        lift { $0.attempt(action) }
    }

    /// See `Signal.attemptMap(_:)` (throwing form): applied to every run.
    @inlinable
    public func attemptMap<U>(_ transform: @escaping @Sendable (Value) throws -> U) -> SignalProducer<U, any Swift.Error> {
        lift { $0.attemptMap(transform) }
    }
}

extension SignalProducer where Error == any Swift.Error {
    /// See `Signal.attempt(_:)` (throwing form): applied to every run.
    @inlinable
    public func attempt(_ action: @escaping @Sendable (Value) throws -> Void) -> SignalProducer<Value, Error> {
        lift { $0.attempt(action) }
    }

    /// See `Signal.attemptMap(_:)` (throwing form): applied to every run.
    @inlinable
    public func attemptMap<U>(_ transform: @escaping @Sendable (Value) throws -> U) -> SignalProducer<U, Error> {
        lift { $0.attemptMap(transform) }
    }
}
