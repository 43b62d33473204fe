// map, mapError, filter, compactMap, skipNil, lazy key-path maps, for Signal and SignalProducer.

extension Signal {
    /// Creates a signal fed by an observer of this one: `makeAction` receives the new
    /// signal's input and returns what to do with each event of this signal. The building
    /// block of the single-input operators; the action runs serially, under this signal's
    /// delivery, and is one closure call per event.
    @inlinable
    func _lift<U, F>(
        _ makeAction: (_ downstream: Signal<U, F>.Observer) -> Observer.Action
    ) -> Signal<U, F> {
        Signal<U, F>(_unsafeGenerator: { downstream in
            core.observe(Observer(makeAction(downstream)))
        })
    }

    /// Sends `transform(value)` for each value.
    ///
    /// `transform` runs on the thread that delivers each value, serially.
    @inlinable
    public func map<U>(_ transform: @escaping @Sendable (Value) -> U) -> Signal<U, Error> {
        _lift { downstream in { event in
            switch event {
            case let .value(value): downstream.send(value: transform(value))
            case let .failed(error): downstream.send(error: error)
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }

    /// Sends the value at `keyPath` of each value.
    @inlinable
    public func map<U>(_ keyPath: any KeyPath<Value, U> & Sendable) -> Signal<U, Error> {
        map { $0[keyPath: keyPath] }
    }

    /// Sends `value` for every value this signal sends.
    @inlinable
    public func map<U: Sendable>(value: U) -> Signal<U, Error> {
        map { _ in value }
    }

    /// Fails with `transform(error)` where this signal fails.
    @inlinable
    public func mapError<F>(_ transform: @escaping @Sendable (Error) -> F) -> Signal<Value, F> {
        _lift { downstream in { event in
            switch event {
            case let .value(value): downstream.send(value: value)
            case let .failed(error): downstream.send(error: transform(error))
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }

    /// Sends only the values for which `isIncluded` is `true`.
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> Signal<Value, Error> {
        _lift { downstream in { event in
            switch event {
            case let .value(value):
                if isIncluded(value) { downstream.send(value: value) }
            case let .failed(error): downstream.send(error: error)
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }

    /// Sends the non-nil results of `transform`.
    @inlinable
    public func compactMap<U>(_ transform: @escaping @Sendable (Value) -> U?) -> Signal<U, Error> {
        _lift { downstream in { event in
            switch event {
            case let .value(value):
                if let mapped = transform(value) { downstream.send(value: mapped) }
            case let .failed(error): downstream.send(error: error)
            case .completed: downstream.sendCompleted()
            case .interrupted: downstream.sendInterrupted()
            }
        } }
    }

    /// Sends events unchanged; lets `Event`-level transforms be written once.
    @inlinable
    func _forward<U>(_ event: Event, to downstream: Signal<U, Error>.Observer) {
        switch event {
        case .value: break
        case let .failed(error): downstream.send(error: error)
        case .completed: downstream.sendCompleted()
        case .interrupted: downstream.sendInterrupted()
        }
    }
}

extension Signal where Value: OptionalProtocol {
    /// Drops `nil` values and unwraps the rest.
    @inlinable
    public func skipNil() -> Signal<Value.Wrapped, Error> {
        compactMap { $0.optional }
    }
}

/// Lets operators be constrained to optional values (`skipNil`, `promoteValue`).
public protocol OptionalProtocol: SendableMetatype {
    /// The wrapped type.
    associatedtype Wrapped
    /// `self` as an `Optional`.
    var optional: Wrapped? { get }
}

extension Optional: OptionalProtocol {
    /// `self`.
    @inlinable
    public var optional: Wrapped? { self }
}

extension SignalProducer {
    /// Sends `transform(value)` for each value; see `Signal.map(_:)`.
    @inlinable
    public func map<U>(_ transform: @escaping @Sendable (Value) -> U) -> SignalProducer<U, Error> {
        lift { $0.map(transform) }
    }

    /// Sends the value at `keyPath` of each value.
    @inlinable
    public func map<U>(_ keyPath: any KeyPath<Value, U> & Sendable) -> SignalProducer<U, Error> {
        lift { $0.map(keyPath) }
    }

    /// Sends `value` for every value.
    @inlinable
    public func map<U: Sendable>(value: U) -> SignalProducer<U, Error> {
        lift { $0.map(value: value) }
    }

    /// Fails with `transform(error)`; see `Signal.mapError(_:)`.
    @inlinable
    public func mapError<F>(_ transform: @escaping @Sendable (Error) -> F) -> SignalProducer<Value, F> {
        lift { $0.mapError(transform) }
    }

    /// Sends only the values for which `isIncluded` is `true`.
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> SignalProducer<Value, Error> {
        lift { $0.filter(isIncluded) }
    }

    /// Sends the non-nil results of `transform`.
    @inlinable
    public func compactMap<U>(_ transform: @escaping @Sendable (Value) -> U?) -> SignalProducer<U, Error> {
        lift { $0.compactMap(transform) }
    }
}

extension SignalProducer where Value: OptionalProtocol {
    /// Drops `nil` values and unwraps the rest.
    @inlinable
    public func skipNil() -> SignalProducer<Value.Wrapped, Error> {
        lift { $0.skipNil() }
    }
}
