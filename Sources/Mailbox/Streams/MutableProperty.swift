/// A property whose value can be set from any thread.
///
/// Every set — including one to an equal value — sends the new value to the property's
/// observers (a `MutableProperty` never de-duplicates: use `skipRepeats()` for that).
///
/// Thread-safety: get, set, `modify`, `withValue` and start `producer` from any thread; sets
/// are atomic and delivered in the order they happened, one at a time (a set from another
/// thread waits for the delivery under way).
///
/// Re-entrance, as in ReactiveSwift: inside an observer of the property (of its `signal` or of
/// a run of its `producer`) you may read `value`, call `withValue`, start `producer`, and set
/// the property (`value`, `modify`, `swap`). A set made there is delivered *depth-first*: the
/// observers see the new value before the delivery in progress goes on to the observers it has
/// not reached yet (so those see the nested value first, then the outer one); a run of
/// `producer` whose own observer made the set receives it right after its current value. Reading
/// or setting the property inside its own `modify` action is a precondition failure (the value
/// is being modified; ReactiveSwift traps too). See `docs/StreamContracts.md`, "Re-entrance".
///
/// What keeps what alive: the property's producers and signal do not retain it. When it
/// deinitialises its `lifetime` ends and its signal and running producers complete.
@propertyWrapper
public final class MutableProperty<Value>: ComposableMutablePropertyProtocol {
    @usableFromInline
    let box: _PropertyBox<Value>

    private let token: Lifetime.Token

    /// Ends when the property deinitialises.
    public let lifetime: Lifetime

    /// Sends every change from now on; completes when the property deinitialises.
    public let signal: Signal<Value, Never>

    /// Creates a property with `initialValue`.
    public init(_ initialValue: Value) {
        box = _PropertyBox(initialValue)
        signal = box.makeSignal()
        (lifetime, token) = Lifetime.make()
    }

    deinit {
        box.complete()
        token.dispose()
    }

    /// The current value; setting it stores and sends the new value (see the type's notes on
    /// re-entrance).
    public var value: Value {
        @inlinable get { box.value }
        @inlinable set { box.set(newValue) }
    }

    /// Sends the current value, then every change; completes when the property deinitialises.
    /// Each run starts with the value current at its start and misses no later change.
    public var producer: SignalProducer<Value, Never> { box.producer(keeping: signal) }

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
    ///
    /// - Precondition: `action` neither reads nor sets this property (it has the value as its
    ///   argument).
    @inlinable
    public func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result {
        try withoutActuallyEscaping(action) { action in
            let outcome: Swift.Result<Result, any Swift.Error> = box.modify { value in
                Swift.Result { try action(&value) }
            }
            return try outcome.get()
        }
    }

    /// Runs `action` with the current value while no other thread can set the property (their
    /// sets wait). `action` may set the property itself: such a set is delivered at once.
    @inlinable
    public func withValue<Result>(_ action: (Value) throws -> Result) rethrows -> Result {
        let isOutermost = box.core.sendLock.lockUnlessHeldByCurrentThread()
        defer { if isOutermost { box.core.unlockSendLock() } }
        return try action(box.value)
    }

    /// A binding target that sets the property, for `<~`.
    public var bindingTarget: BindingTarget<Value> {
        let box = self.box
        return BindingTarget(lifetime: lifetime) { box.set($0) }
    }

    // `@MutableProperty var name = value` (ReactiveSwift's property wrapper; `init(wrappedValue:)`
    // is in Property+Initializers.swift). In the class body: the compiler does not find a
    // wrapper's `wrappedValue` in an extension.

    /// The value, for `@MutableProperty`: getting and setting it is `value`'s.
    public var wrappedValue: Value {
        get { value }
        set { value = newValue }
    }

    /// The property itself, as `$name` of a `@MutableProperty var name`.
    public var projectedValue: MutableProperty<Value> { self }
}

extension MutableProperty where Value: ExpressibleByNilLiteral {
    /// Creates a property whose value is `nil`.
    public convenience init() {
        self.init(nil)
    }
}

// Immutable references only; the value is protected by the box's `valueLock` and its
// delivery by the box core's `sendLock`.
extension MutableProperty: @unchecked Sendable {}
