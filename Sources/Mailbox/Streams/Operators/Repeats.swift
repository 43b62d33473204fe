// skipRepeats, uniqueValues for Signal and SignalProducer.

extension Signal {
    /// Drops each value `isEquivalent` to the one before it.
    @inlinable
    public func skipRepeats(_ isEquivalent: @escaping @Sendable (Value, Value) -> Bool) -> Signal<Value, Error> {
        let previous = _SerialState<Value?>(nil)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            if let last = previous.value, isEquivalent(last, value) { return }
            previous.value = value
            downstream.send(value: value)
        } }
    }

    /// Drops values whose `transform` result was already seen.
    ///
    /// - Complexity: O(n) memory in the number of distinct keys.
    @inlinable
    public func uniqueValues<Identity: Hashable & SendableMetatype>(_ transform: @escaping @Sendable (Value) -> Identity) -> Signal<Value, Error> {
        let seen = _SerialState(Set<Identity>())
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            if seen.value.insert(transform(value)).inserted { downstream.send(value: value) }
        } }
    }
}

extension Signal where Value: Equatable & SendableMetatype {
    /// Drops each value equal to the one before it.
    @inlinable
    public func skipRepeats() -> Signal<Value, Error> {
        skipRepeats(==)
    }
}

extension Signal where Value: Hashable & SendableMetatype {
    /// Drops values that were already seen.
    @inlinable
    public func uniqueValues() -> Signal<Value, Error> {
        uniqueValues { $0 }
    }
}

extension SignalProducer {
    /// See `Signal.skipRepeats(_:)`.
    @inlinable
    public func skipRepeats(_ isEquivalent: @escaping @Sendable (Value, Value) -> Bool) -> SignalProducer<Value, Error> {
        lift { $0.skipRepeats(isEquivalent) }
    }

    /// See `Signal.uniqueValues(_:)`.
    @inlinable
    public func uniqueValues<Identity: Hashable & SendableMetatype>(_ transform: @escaping @Sendable (Value) -> Identity) -> SignalProducer<Value, Error> {
        lift { $0.uniqueValues(transform) }
    }
}

extension SignalProducer where Value: Equatable & SendableMetatype {
    /// See `Signal.skipRepeats()`.
    @inlinable
    public func skipRepeats() -> SignalProducer<Value, Error> {
        lift { $0.skipRepeats() }
    }
}

extension SignalProducer where Value: Hashable & SendableMetatype {
    /// See `Signal.uniqueValues()`.
    @inlinable
    public func uniqueValues() -> SignalProducer<Value, Error> {
        lift { $0.uniqueValues() }
    }
}
