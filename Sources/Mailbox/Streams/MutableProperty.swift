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
@propertyWrapper
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
// delivery by the box signal's `sendLock`.
extension MutableProperty: @unchecked Sendable {}
