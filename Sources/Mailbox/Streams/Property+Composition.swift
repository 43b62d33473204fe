// Composition of properties: map, filter(initial:), combineLatest, zip, skipRepeats,
// flatMap/flatten. Each result is a composed `Property`: it stores its value, fed by a run of
// the sources' producers, and does not retain its sources; its signal and producer complete
// when the sources do (see `Property`).

extension PropertyProtocol {
    /// A property whose value is `transform(value)`.
    public func map<U>(_ transform: @escaping @Sendable (Value) -> U) -> Property<U> {
        Property(unsafeProducer: producer.map(transform))
    }

    /// A property whose value is the value at `keyPath`.
    public func map<U>(_ keyPath: any KeyPath<Value, U> & Sendable) -> Property<U> {
        Property(unsafeProducer: producer.map(keyPath))
    }

    /// A property that takes the values for which `predicate` is `true`, starting with
    /// `initial` if the current value does not pass.
    public func filter(initial: Value, _ predicate: @escaping @Sendable (Value) -> Bool) -> Property<Value> {
        let initial = _Carried(initial)
        let source = producer
        return Property(unsafeProducer: SignalProducer { observer, lifetime in
            observer.send(value: initial.value)
            lifetime += source.filter(predicate).start(observer)
        })
    }

    /// A property holding a tuple of both properties' values.
    public func combineLatest<P: PropertyProtocol>(with other: P) -> Property<(Value, P.Value)> {
        Property(unsafeProducer: producer.combineLatest(with: other.producer))
    }

    /// A property holding pairs of the n-th values of both properties.
    public func zip<P: PropertyProtocol>(with other: P) -> Property<(Value, P.Value)> {
        Property(unsafeProducer: producer.zip(with: other.producer))
    }

    /// A property that ignores changes to a value `isEquivalent` to the current one.
    public func skipRepeats(_ isEquivalent: @escaping @Sendable (Value, Value) -> Bool) -> Property<Value> {
        Property(unsafeProducer: producer.skipRepeats(isEquivalent))
    }

    /// A property following the property `transform` returns for the current value, switched
    /// by `strategy` (usually `.latest`).
    public func flatMap<P: PropertyProtocol>(_ strategy: FlattenStrategy, _ transform: @escaping @Sendable (Value) -> P) -> Property<P.Value> {
        Property(unsafeProducer: producer.flatMap(strategy) { transform($0).producer })
    }

    /// A property holding `value`, whatever this property's value (it changes when this
    /// property does, sending `value` again). Disfavoured: see `Signal.map(value:)`.
    @_disfavoredOverload
    public func map<U>(value: U) -> Property<U> where U: Sendable {
        Property(unsafeProducer: producer.map(value: value))
    }

    /// A property holding pairs of the previous and the current value, the first pairing
    /// `initial` with the current value.
    public func combinePrevious(_ initial: Value) -> Property<(Value, Value)> {
        let initial = _Carried(initial)
        return Property(unsafeProducer: producer.combinePrevious(initial.value))
    }

    /// A property that ignores values whose `transform` result it has held before.
    ///
    /// - Complexity: O(n) memory in the number of distinct identities.
    public func uniqueValues<Identity: Hashable & SendableMetatype>(_ transform: @escaping @Sendable (Value) -> Identity) -> Property<Value> {
        Property(unsafeProducer: producer.uniqueValues(transform))
    }
}

extension PropertyProtocol where Value: Hashable & SendableMetatype {
    /// A property that ignores values it has held before.
    ///
    /// - Complexity: O(n) memory in the number of distinct values.
    public func uniqueValues() -> Property<Value> {
        Property(unsafeProducer: producer.uniqueValues())
    }
}

extension PropertyProtocol where Value: Equatable & SendableMetatype {
    /// A property that ignores changes to an equal value.
    public func skipRepeats() -> Property<Value> {
        Property(unsafeProducer: producer.skipRepeats())
    }
}

extension PropertyProtocol where Value: PropertyProtocol {
    /// A property following the inner property, switched by `strategy`.
    public func flatten(_ strategy: FlattenStrategy) -> Property<Value.Value> {
        Property(unsafeProducer: producer.flatMap(strategy) { $0.producer })
    }
}
