/// A read-only view of a value that changes over time: the current `value`, a `producer` of
/// the current value and every change, and a `signal` of the changes.
///
/// Conformers are classes. Thread-safety: every member may be used from any thread.
public protocol PropertyProtocol: AnyObject, BindingSource where Error == Never {
    /// The current value.
    var value: Value { get }

    /// Sends the current value, then every change; completes when the property goes away.
    var producer: SignalProducer<Value, Never> { get }

    /// Sends every change from now on; completes when the property goes away.
    var signal: Signal<Value, Never> { get }
}

/// A property whose value can be set.
public protocol MutablePropertyProtocol: PropertyProtocol, BindingTargetProvider {
    /// The current value; setting it sends the new value.
    var value: Value { get set }

    /// Ends when the property goes away.
    var lifetime: Lifetime { get }
}

/// A mutable property that can also be modified and read in place, atomically.
public protocol ComposableMutablePropertyProtocol: MutablePropertyProtocol {
    /// Runs `action` with the current value.
    func withValue<Result>(_ action: (Value) throws -> Result) rethrows -> Result

    /// Modifies the value in place, atomically, then sends it.
    func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result
}

/// A read-only property: a constant, a view of another property, or the result of composing
/// properties (`map`, `combineLatest`, …).
///
/// A composed property (`Property(initial:then:)`, `map`, `combineLatest`, …) stores its
/// value, updated by a run of its source producer that lasts as long as this property does;
/// it completes when the source completes or the property goes away.
///
/// Thread-safety: every member may be used from any thread. `Sendable` whatever `Value` is,
/// like `Signal`.
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
}

/// A property whose value can be set from any thread.
///
/// Every set — including one to an equal value — sends the new value to the property's
/// observers (a `MutableProperty` never de-duplicates: use `skipRepeats()` for that).
///
/// Thread-safety: get, set and `modify` from any thread; sets are atomic and delivered in the
/// order they happened. Reading `value` inside an observer is fine; setting the property from
/// inside one of its own observers is a recursive send (a precondition failure).
///
/// What keeps what alive: the property's producers and signals do not retain it. When it
/// deinitialises its `lifetime` ends and its signal and running producers complete.
public final class MutableProperty<Value>: ComposableMutablePropertyProtocol {
    @usableFromInline
    let box: _PropertyBox<Value>

    private let token: Lifetime.Token

    /// Ends when the property deinitialises.
    public let lifetime: Lifetime

    /// Creates a property with `initialValue`.
    public init(_ initialValue: Value) {
        box = _PropertyBox(initialValue)
        (lifetime, token) = Lifetime.make()
    }

    deinit {
        box.complete()
        token.dispose()
    }

    /// The current value; setting it stores and sends the new value.
    public var value: Value {
        @inlinable get { box.value }
        @inlinable set { box.set(newValue) }
    }

    /// Sends the current value, then every change; completes when the property deinitialises.
    public var producer: SignalProducer<Value, Never> { box.producer }

    /// Sends every change from now on; completes when the property deinitialises.
    public var signal: Signal<Value, Never> { box.signal }

    /// Stores `newValue` and returns the previous value, atomically.
    @inlinable
    @discardableResult
    public func swap(_ newValue: Value) -> Value {
        box.modify { value in
            let old = value
            value = newValue
            return old
        }
    }

    /// Modifies the value in place, atomically, then sends it.
    @inlinable
    public func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        try withoutActuallyEscaping(action) { action in
            let outcome: Swift.Result<Result, any Swift.Error> = box.modify { value in
                Swift.Result { try action(&value) }
            }
            return try outcome.get()
        }
    }

    /// Runs `action` with the current value, holding the property's send lock: no set can
    /// happen meanwhile.
    @inlinable
    public func withValue<Result>(_ action: (Value) throws -> Result) rethrows -> Result {
        box.core.sendLock.lock()
        defer { box.core.sendLock.unlock() }
        return try action(box.value)
    }

    /// A binding target that sets the property, for `<~`.
    public var bindingTarget: BindingTarget<Value> {
        let box = self.box
        return BindingTarget(lifetime: lifetime) { box.set($0) }
    }
}

extension MutableProperty where Value: ExpressibleByNilLiteral {
    /// Creates a property whose value is `nil`.
    public convenience init() {
        self.init(nil)
    }
}

// Every stored property is immutable; the box (locks inside) and the captured source
// property are thread-safe.
extension Property: @unchecked Sendable {}

// Immutable references only; the value is protected by the box's `valueLock` and its
// delivery by the box signal's `sendLock`.
extension MutableProperty: @unchecked Sendable {}
