// negate(), and(_:), or(_:), all(_:), any(_:) for boolean properties.

extension PropertyProtocol where Value == Bool {
    /// A property holding the logical NOT of this property's value.
    public func negate() -> Property<Value> {
        Property(unsafeProducer: producer.negate())
    }

    /// A property holding the logical AND of this property's value and `property`'s.
    public func and<P: PropertyProtocol>(_ property: P) -> Property<Value> where P.Value == Value {
        Property(unsafeProducer: producer.and(property.producer))
    }

    /// A property holding the logical OR of this property's value and `property`'s.
    public func or<P: PropertyProtocol>(_ property: P) -> Property<Value> where P.Value == Value {
        Property(unsafeProducer: producer.or(property.producer))
    }

    /// A property holding the logical AND of every property's value (`true` for an empty
    /// collection).
    public static func all<P: PropertyProtocol, Properties: Collection>(_ properties: Properties) -> Property<Value> where P.Value == Value, Properties.Element == P {
        Property(unsafeProducer: SignalProducer.all(properties.map(\.producer)))
    }

    /// A property holding the logical AND of every property's value.
    public static func all<P: PropertyProtocol>(_ properties: P...) -> Property<Value> where P.Value == Value {
        all(properties)
    }

    /// A property holding the logical OR of every property's value (`false` for an empty
    /// collection).
    public static func any<P: PropertyProtocol, Properties: Collection>(_ properties: Properties) -> Property<Value> where P.Value == Value, Properties.Element == P {
        Property(unsafeProducer: SignalProducer.any(properties.map(\.producer)))
    }

    /// A property holding the logical OR of every property's value.
    public static func any<P: PropertyProtocol>(_ properties: P...) -> Property<Value> where P.Value == Value {
        any(properties)
    }
}
