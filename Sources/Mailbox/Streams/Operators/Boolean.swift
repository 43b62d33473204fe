// negate(), and(_:), or(_:), all(_:), any(_:) for boolean Signals and SignalProducers.
// `and`/`or`/`all`/`any` combine the *latest* values (`combineLatest`), so they send once every
// input has sent, and then on every change of any input.

extension Signal where Value == Bool {
    /// Sends the logical NOT of each value.
    @inlinable
    public func negate() -> Signal<Value, Error> {
        map { !$0 }
    }

    /// Sends the logical AND of the latest values of this signal and `signal`, once both
    /// have sent; terminates as `combineLatest(with:)` does.
    public func and(_ signal: Signal<Value, Error>) -> Signal<Value, Error> {
        Signal.all([self, signal])
    }

    /// Sends the logical OR of the latest values of this signal and `signal`, once both
    /// have sent; terminates as `combineLatest(with:)` does.
    public func or(_ signal: Signal<Value, Error>) -> Signal<Value, Error> {
        Signal.any([self, signal])
    }

    /// Sends the logical AND of the latest values of every signal, once all have sent;
    /// terminates as `combineLatest(_:)` does (an empty collection gives a signal that has
    /// completed).
    public static func all<BooleansCollection: Collection>(_ booleans: BooleansCollection) -> Signal<Value, Error> where BooleansCollection.Element == Signal<Value, Error> {
        combineLatest(booleans).map { $0.allSatisfy { $0 } }
    }

    /// Sends the logical AND of the latest values of every signal; see `all(_:)`.
    public static func all(_ booleans: Signal<Value, Error>...) -> Signal<Value, Error> {
        all(booleans)
    }

    /// Sends the logical OR of the latest values of every signal, once all have sent;
    /// terminates as `combineLatest(_:)` does (an empty collection gives a signal that has
    /// completed).
    public static func any<BooleansCollection: Collection>(_ booleans: BooleansCollection) -> Signal<Value, Error> where BooleansCollection.Element == Signal<Value, Error> {
        combineLatest(booleans).map { $0.contains(true) }
    }

    /// Sends the logical OR of the latest values of every signal; see `any(_:)`.
    public static func any(_ booleans: Signal<Value, Error>...) -> Signal<Value, Error> {
        any(booleans)
    }
}

extension SignalProducer where Value == Bool {
    /// Sends the logical NOT of each value.
    @inlinable
    public func negate() -> SignalProducer<Value, Error> {
        map { !$0 }
    }

    /// Sends the logical AND of the latest values of this producer's run and `booleans`'s,
    /// once both have sent (both start, this one first).
    public func and(_ booleans: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        SignalProducer.all([self, booleans])
    }

    /// Sends the logical AND of the latest values of this producer's run and of `booleans`
    /// (a producer, a signal or a property).
    public func and<Booleans: SignalProducerConvertible>(_ booleans: Booleans) -> SignalProducer<Value, Error> where Booleans.Value == Value, Booleans.Error == Error {
        and(booleans.producer)
    }

    /// Sends the logical OR of the latest values of this producer's run and `booleans`'s,
    /// once both have sent (both start, this one first).
    public func or(_ booleans: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        SignalProducer.any([self, booleans])
    }

    /// Sends the logical OR of the latest values of this producer's run and of `booleans`
    /// (a producer, a signal or a property).
    public func or<Booleans: SignalProducerConvertible>(_ booleans: Booleans) -> SignalProducer<Value, Error> where Booleans.Value == Value, Booleans.Error == Error {
        or(booleans.producer)
    }

    /// Starts every producer (in order) and sends the logical AND of their latest values once
    /// all have sent. An empty collection sends `true` and completes.
    public static func all<BooleansCollection: Collection>(_ booleans: BooleansCollection) -> SignalProducer<Value, Error> where BooleansCollection.Element == SignalProducer<Value, Error> {
        combineLatest(Array(booleans), emptySentinel: []).map { $0.allSatisfy { $0 } }
    }

    /// Starts every producer and sends the logical AND of their latest values; see
    /// `all(_:)`.
    public static func all(_ booleans: SignalProducer<Value, Error>...) -> SignalProducer<Value, Error> {
        all(booleans)
    }

    /// Starts every stream (producers, signals or properties) and sends the logical AND of
    /// their latest values; see `all(_:)`.
    public static func all<Booleans: SignalProducerConvertible, BooleansCollection: Collection>(_ booleans: BooleansCollection) -> SignalProducer<Value, Error> where Booleans.Value == Value, Booleans.Error == Error, BooleansCollection.Element == Booleans {
        all(booleans.map { $0.producer })
    }

    /// Starts every producer (in order) and sends the logical OR of their latest values once
    /// all have sent. An empty collection sends `false` and completes.
    public static func any<BooleansCollection: Collection>(_ booleans: BooleansCollection) -> SignalProducer<Value, Error> where BooleansCollection.Element == SignalProducer<Value, Error> {
        combineLatest(Array(booleans), emptySentinel: []).map { $0.contains(true) }
    }

    /// Starts every producer and sends the logical OR of their latest values; see `any(_:)`.
    public static func any(_ booleans: SignalProducer<Value, Error>...) -> SignalProducer<Value, Error> {
        any(booleans)
    }

    /// Starts every stream (producers, signals or properties) and sends the logical OR of
    /// their latest values; see `any(_:)`.
    public static func any<Booleans: SignalProducerConvertible, BooleansCollection: Collection>(_ booleans: BooleansCollection) -> SignalProducer<Value, Error> where Booleans.Value == Value, Booleans.Error == Error, BooleansCollection.Element == Booleans {
        any(booleans.map { $0.producer })
    }
}
