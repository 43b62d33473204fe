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
    ///
    /// Disfavoured: a trailing closure can fill the `value:` parameter too, and with the
    /// `Sendable` requirement Swift 6 needs here, `map { a, b in … }` on a stream of tuples
    /// would otherwise fail to type-check instead of picking `map(_:)`.
    @_disfavoredOverload
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

    /// Sends a terminal `event` on to `downstream` (a value is dropped); lets `Event`-level
    /// transforms be written once. See the static form, which operators' event closures use.
    @inlinable
    func _forward<U>(_ event: Event, to downstream: Signal<U, Error>.Observer) {
        Signal._forward(event, to: downstream)
    }

    /// Sends a terminal `event` on to `downstream` (a value is dropped).
    ///
    /// Static so that an operator's event closure need not capture `self`, the upstream
    /// `Signal`. An observer holding the last reference to the signal it observes would
    /// release it when the signal drops the observer — which a `_SignalCore` does while
    /// holding its state lock, so the release re-entered that lock (`map {…}.take(first: 1)`
    /// sent a second value crashed in debug builds and deadlocked in release builds).
    @inlinable
    static func _forward<U>(_ event: Event, to downstream: Signal<U, Error>.Observer) {
        switch event {
        case .value: break
        case let .failed(error): downstream.send(error: error)
        case .completed: downstream.sendCompleted()
        case .interrupted: downstream.sendInterrupted()
        }
    }
}

extension Signal {
    /// Sends the non-nil results of `transform`: the old name of `compactMap(_:)`, deprecated
    /// in ReactiveSwift too.
    @available(*, deprecated, renamed: "compactMap")
    public func filterMap<U>(_ transform: @escaping @Sendable (Value) -> U?) -> Signal<U, Error> {
        compactMap(transform)
    }
}

extension Signal where Value: OptionalProtocol {
    /// Drops `nil` values and unwraps the rest.
    @inlinable
    public func skipNil() -> Signal<Value.Wrapped, Error> {
        compactMap { $0.optional }
    }
}

/// Lets operators be constrained to optional values (`skipNil`, `promoteValue`, optional
/// bindings).
public protocol OptionalProtocol: ExpressibleByNilLiteral, SendableMetatype {
    /// The wrapped type.
    associatedtype Wrapped

    /// Makes the conforming type from an `Optional`.
    init(reconstructing value: Wrapped?)

    /// `self` as an `Optional`.
    var optional: Wrapped? { get }
}

extension Optional: OptionalProtocol {
    /// `self`.
    @inlinable
    public var optional: Wrapped? { self }

    /// `value`.
    @inlinable
    public init(reconstructing value: Wrapped?) {
        self = value
    }
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

    /// Sends `value` for every value (disfavoured: see `Signal.map(value:)`).
    @_disfavoredOverload
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

extension SignalProducer {
    /// Sends the non-nil results of `transform`: the old name of `compactMap(_:)`, deprecated
    /// in ReactiveSwift too.
    @available(*, deprecated, renamed: "compactMap")
    public func filterMap<U>(_ transform: @escaping @Sendable (Value) -> U?) -> SignalProducer<U, Error> {
        compactMap(transform)
    }
}

extension SignalProducer where Value: OptionalProtocol {
    /// Drops `nil` values and unwraps the rest.
    @inlinable
    public func skipNil() -> SignalProducer<Value.Wrapped, Error> {
        lift { $0.skipNil() }
    }
}
