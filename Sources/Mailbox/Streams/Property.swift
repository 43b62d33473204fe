/// A read-only property: a constant, a view of another property, or the result of composing
/// properties (`map`, `combineLatest`, …).
///
/// A *composed* property (`Property(_:)`, `Property(initial:then:)`, `map`, `combineLatest`, …)
/// stores its value, updated by a run of its sources' producers. As in ReactiveSwift it does
/// not own its lifetime and does not retain its sources:
/// - its `signal` and `producer` follow the *root* sources (the `MutableProperty`s, or the
///   producer or signal, it was ultimately composed from): they complete when those complete —
///   for a `MutableProperty`, when it deinitialises — whether or not the composed property is
///   still referenced; a composed property that outlives its sources keeps its last value;
/// - releasing a composed property changes nothing for the observers of its `signal` or of a
///   run of its `producer`; once nothing can observe it any more (the property, its `signal`
///   and every producer it handed out are gone, and nobody observes), its run of the sources
///   is interrupted, so an unobserved composition does no more work.
///
/// `Property(capturing:)` is a view that retains the property it wraps; `Property(value:)` a
/// constant.
///
/// Thread-safety: every member may be used from any thread. `Sendable` whatever `Value` is,
/// like `Signal`. Re-entrance: as for `MutableProperty` (a composed property's observers may
/// read it, start its producer, and set its sources).
@propertyWrapper
public final class Property<Value>: PropertyProtocol {
    private let getValue: @Sendable () -> Value
    private let makeProducer: @Sendable () -> SignalProducer<Value, Never>
    private let getSignal: @Sendable () -> Signal<Value, Never>

    /// The current value.
    public var value: Value { getValue() }

    /// Sends the current value, then every change; completes when the sources complete.
    public var producer: SignalProducer<Value, Never> { makeProducer() }

    /// Sends every change from now on; completes when the sources complete.
    public var signal: Signal<Value, Never> { getSignal() }

    /// A property that always has `value` (its producer sends it and completes; its signal
    /// is `empty`).
    public init(value: Value) where Value: Sendable {
        getValue = { value }
        makeProducer = { SignalProducer(value: value) }
        getSignal = { .empty }
    }

    /// A read-only view of `property` that retains it.
    public init<P: PropertyProtocol>(capturing property: P) where P.Value == Value {
        let source = _Carried(property)
        getValue = { source.value.value }
        makeProducer = { source.value.producer }
        getSignal = { source.value.signal }
    }

    /// A read-only view of `property` that does not retain it: it follows `property`'s
    /// producer, completes when `property` goes away, and keeps the last value then.
    public convenience init<P: PropertyProtocol>(_ property: P) where P.Value == Value {
        self.init(unsafeProducer: property.producer)
    }

    /// A property that starts with `initial` and takes every value `values` sends; its signal
    /// and producer complete when `values` terminates.
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
        let signal = box.makeSignal()
        getValue = { box.value }
        makeProducer = { box.producer(keeping: signal) }
        getSignal = { signal }
    }

    /// A composed property backed by a run of `producer`, which must send a value synchronously
    /// when started (a precondition).
    ///
    /// Ownership: the run's observer holds the box (value and signal core); the core's teardown
    /// holds the run's interrupter; the sources hold the run. So the run, the box and the
    /// composed signal live as long as the sources do, and end — completing every observer —
    /// when they complete; and when the core is torn down because nothing can observe it any
    /// more (see `Signal`), the run is interrupted and the whole chain goes.
    init(unsafeProducer producer: SignalProducer<Value, Never>) {
        let holder = _Locked<_PropertyBox<Value>?>(locking: nil)
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
        let signal = box.makeSignal()
        box.core.setDisposable(run)
        getValue = { box.value }
        makeProducer = { box.producer(keeping: signal) }
        getSignal = { signal }
    }

    // `@Property` (ReactiveSwift's property wrapper). In the class body: the compiler does not
    // find a wrapper's `wrappedValue` in an extension.

    /// The value, for `@Property` (read-only: see `value`).
    public var wrappedValue: Value { value }

    /// The property itself, as `$name` of a `@Property var name`.
    public var projectedValue: Property<Value> { self }
}

// Every stored property is an immutable closure over thread-safe objects (the box, with its
// locks inside; the captured source property; a constant value carried as a signal carries
// values).
extension Property: @unchecked Sendable {}
