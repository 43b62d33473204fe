// Static combineLatest and zip for 2 to 6 inputs, built by nesting the binary operators (same
// semantics: values once all have sent, completion rules as for the binary forms).

extension Signal {
    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>) -> Signal<(Value, B), Error> {
        a.combineLatest(with: b)
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>) -> Signal<(Value, B), Error> {
        a.zip(with: b)
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>) -> Signal<(Value, B, C), Error> {
        a.combineLatest(with: b).combineLatest(with: c).map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>) -> Signal<(Value, B, C), Error> {
        a.zip(with: b).zip(with: c).map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C, D>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>) -> Signal<(Value, B, C, D), Error> {
        a.combineLatest(with: b).combineLatest(with: c).combineLatest(with: d).map { ($0.0.0.0, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C, D>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>) -> Signal<(Value, B, C, D), Error> {
        a.zip(with: b).zip(with: c).zip(with: d).map { ($0.0.0.0, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C, D, E>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>, _ e: Signal<E, Error>) -> Signal<(Value, B, C, D, E), Error> {
        a.combineLatest(with: b).combineLatest(with: c).combineLatest(with: d).combineLatest(with: e).map { ($0.0.0.0.0, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C, D, E>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>, _ e: Signal<E, Error>) -> Signal<(Value, B, C, D, E), Error> {
        a.zip(with: b).zip(with: c).zip(with: d).zip(with: e).map { ($0.0.0.0.0, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C, D, E, F>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>, _ e: Signal<E, Error>, _ f: Signal<F, Error>) -> Signal<(Value, B, C, D, E, F), Error> {
        a.combineLatest(with: b).combineLatest(with: c).combineLatest(with: d).combineLatest(with: e).combineLatest(with: f).map { ($0.0.0.0.0.0, $0.0.0.0.0.1, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C, D, E, F>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>, _ e: Signal<E, Error>, _ f: Signal<F, Error>) -> Signal<(Value, B, C, D, E, F), Error> {
        a.zip(with: b).zip(with: c).zip(with: d).zip(with: e).zip(with: f).map { ($0.0.0.0.0.0, $0.0.0.0.0.1, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }
}

extension SignalProducer {
    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>) -> SignalProducer<(Value, B), Error> {
        a.combineLatest(with: b)
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>) -> SignalProducer<(Value, B), Error> {
        a.zip(with: b)
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>) -> SignalProducer<(Value, B, C), Error> {
        a.combineLatest(with: b).combineLatest(with: c).map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>) -> SignalProducer<(Value, B, C), Error> {
        a.zip(with: b).zip(with: c).map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C, D>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>) -> SignalProducer<(Value, B, C, D), Error> {
        a.combineLatest(with: b).combineLatest(with: c).combineLatest(with: d).map { ($0.0.0.0, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C, D>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>) -> SignalProducer<(Value, B, C, D), Error> {
        a.zip(with: b).zip(with: c).zip(with: d).map { ($0.0.0.0, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C, D, E>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>, _ e: SignalProducer<E, Error>) -> SignalProducer<(Value, B, C, D, E), Error> {
        a.combineLatest(with: b).combineLatest(with: c).combineLatest(with: d).combineLatest(with: e).map { ($0.0.0.0.0, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C, D, E>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>, _ e: SignalProducer<E, Error>) -> SignalProducer<(Value, B, C, D, E), Error> {
        a.zip(with: b).zip(with: c).zip(with: d).zip(with: e).map { ($0.0.0.0.0, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends the latest values of every input, once all have sent; completes when all have completed.
    public static func combineLatest<B, C, D, E, F>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>, _ e: SignalProducer<E, Error>, _ f: SignalProducer<F, Error>) -> SignalProducer<(Value, B, C, D, E, F), Error> {
        a.combineLatest(with: b).combineLatest(with: c).combineLatest(with: d).combineLatest(with: e).combineLatest(with: f).map { ($0.0.0.0.0.0, $0.0.0.0.0.1, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }

    /// Sends tuples of the n-th values of every input.
    public static func zip<B, C, D, E, F>(_ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>, _ e: SignalProducer<E, Error>, _ f: SignalProducer<F, Error>) -> SignalProducer<(Value, B, C, D, E, F), Error> {
        a.zip(with: b).zip(with: c).zip(with: d).zip(with: e).zip(with: f).map { ($0.0.0.0.0.0, $0.0.0.0.0.1, $0.0.0.0.1, $0.0.0.1, $0.0.1, $0.1) }
    }
}
