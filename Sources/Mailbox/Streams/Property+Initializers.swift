// More ways to make a read-only property, and `MutableProperty(wrappedValue:)` for
// `@MutableProperty var name = ""` (the wrapper's `wrappedValue`/`projectedValue` must be
// declared in the type's own file: see the ends of Property.swift and MutableProperty.swift).

extension Property {
    /// A property that starts with `initial` and takes every value `values` (a producer, a
    /// signal or a property) sends.
    public convenience init<Values: SignalProducerConvertible>(initial: Value, then values: Values) where Values.Value == Value, Values.Error == Never {
        self.init(initial: initial, then: values.producer)
    }
}

extension Property where Value: OptionalProtocol {
    /// A property of optional values that starts with `initial` and takes every value
    /// `values` sends (non-optional ones, wrapped).
    public convenience init(initial: Value, then values: SignalProducer<Value.Wrapped, Never>) {
        self.init(initial: initial, then: values.map { Value(reconstructing: $0) })
    }

    /// A property of optional values that starts with `initial` and takes every value
    /// `values` (a producer, a signal or a property of non-optional values) sends.
    public convenience init<Values: SignalProducerConvertible>(initial: Value, then values: Values) where Values.Value == Value.Wrapped, Values.Error == Never {
        self.init(initial: initial, then: values.producer)
    }
}

extension MutableProperty {
    /// Creates a property with `wrappedValue`, for `@MutableProperty var name = value`.
    public convenience init(wrappedValue: Value) {
        self.init(wrappedValue)
    }
}
