/// A read-only property: a constant, a view of another property, or the result of composing
/// properties (`map`, `combineLatest`, …).
///
/// A composed property (`Property(initial:then:)`, `map`, `combineLatest`, …) stores its
/// value, updated by a run of its source producer that lasts as long as this property does;
/// it completes when the source completes or the property goes away.
///
/// Thread-safety: every member may be used from any thread. `Sendable` whatever `Value` is,
/// like `Signal`.
@propertyWrapper
public final class Property<Value>: PropertyProtocol {
    private let getValue: @Sendable () -> Value
    private let makeProducer: @Sendable () -> SignalProducer<Value, Never>
    private let getSignal: @Sendable () -> Signal<Value, Never>
    /// Disposed on deinit: the source run of a composed property.
    private let disposable: (any Disposable)?
    /// Completed on deinit: the storage of a composed property.
    private let box: _PropertyBox<Value>?
    /// The properties a composed property was made from: composing retains its sources.
    private let sources: [any Sendable]

    /// The current value.
    public var value: Value { getValue() }

    /// Sends the current value, then every change.
    public var producer: SignalProducer<Value, Never> { makeProducer() }

    /// Sends every change from now on.
    public var signal: Signal<Value, Never> { getSignal() }

    /// A property that always has `value` (its producer sends it and completes; its signal
    /// is `empty`).
    public init(value: Value) where Value: Sendable {
        getValue = { value }
        makeProducer = { SignalProducer(value: value) }
        getSignal = { .empty }
        disposable = nil
        box = nil
        sources = []
    }

    /// A read-only view of `property` that retains it.
    public init<P: PropertyProtocol>(capturing property: P) where P.Value == Value {
        let source = _Carried(property)
        getValue = { source.value.value }
        makeProducer = { source.value.producer }
        getSignal = { source.value.signal }
        disposable = nil
        box = nil
        sources = []
    }

    /// A read-only view of `property` that does not retain it: it follows `property`'s
    /// producer and keeps the last value after `property` goes away.
    public convenience init<P: PropertyProtocol>(_ property: P) where P.Value == Value {
        self.init(unsafeProducer: property.producer)
    }

    /// A property that starts with `initial` and takes every value `values` sends.
    public convenience init(initial: Value, then values: SignalProducer<Value, Never>) {
        let initial = _Carried(initial)
        self.init(unsafeProducer: SignalProducer { observer, lifetime in
            observer.send(value: initial.value)
            lifetime += values.start(observer)
        })
    }

    /// A property that starts with `initial` and takes every value `values` sends.
    public convenience init(initial: Value, then values: Signal<Value, Never>) {
        self.init(initial: initial, then: SignalProducer(values))
    }

    /// A read-only view of `box`, whose owner sets and completes it (an actor's published
    /// state): no relay run, no second box.
    init(viewing box: _PropertyBox<Value>) {
        getValue = { box.value }
        makeProducer = { box.producer }
        getSignal = { box.signal }
        disposable = nil
        self.box = nil
        sources = []
    }

    /// A property backed by a run of `producer`, which must send a value synchronously when
    /// started (a precondition), retaining `sources`.
    init(unsafeProducer producer: SignalProducer<Value, Never>, retaining sources: [AnyObject] = []) {
        self.sources = sources.map { _Carried($0) }
        let holder = _Locked<_PropertyBox<Value>?>(nil)
        let run = producer.start { event in
            switch event {
            case let .value(value):
                let existing: _PropertyBox<Value>? = holder.withLock { box in
                    if let box { return box }
                    box = _PropertyBox(value)
                    return nil
                }
                existing?.set(value)
            case .completed, .interrupted:
                holder.withLock { $0 }?.complete()
            }
        }
        guard let box = holder.withLock({ $0 }) else {
            preconditionFailure("Property(unsafeProducer:) requires the producer to send a value synchronously on start")
        }
        self.box = box
        self.disposable = run
        getValue = { box.value }
        makeProducer = { box.producer }
        getSignal = { box.signal }
    }

    deinit {
        disposable?.dispose()
        box?.complete()
    }

    // `@Property` (ReactiveSwift's property wrapper). In the class body: the compiler does not
    // find a wrapper's `wrappedValue` in an extension.

    /// The value, for `@Property` (read-only: see `value`).
    public var wrappedValue: Value { value }

    /// The property itself, as `$name` of a `@Property var name`.
    public var projectedValue: Property<Value> { self }
}

// Every stored property is immutable; the box (locks inside) and the captured source
// property are thread-safe.
extension Property: @unchecked Sendable {}
