/// A read-only view of a value that changes over time: the current `value`, a `producer` of
/// the current value and every change, and a `signal` of the changes.
///
/// Conformers are classes. Thread-safety: every member may be used from any thread.
public protocol PropertyProtocol<Value>: AnyObject, BindingSource where Error == Never {
    /// The current value.
    var value: Value { get }

    /// Sends the current value, then every change; completes when the property goes away (for
    /// a composed property: when its sources do).
    var producer: SignalProducer<Value, Never> { get }

    /// Sends every change from now on; completes when the property goes away (for a composed
    /// property: when its sources do).
    var signal: Signal<Value, Never> { get }
}

/// A property whose value can be set.
public protocol MutablePropertyProtocol<Value>: PropertyProtocol, BindingTargetProvider {
    /// The type of the property's value.
    associatedtype Value

    /// The current value; setting it sends the new value.
    var value: Value { get set }

    /// Ends when the property goes away.
    var lifetime: Lifetime { get }
}

/// A mutable property that can also be modified and read in place, atomically.
public protocol ComposableMutablePropertyProtocol<Value>: MutablePropertyProtocol {
    /// Runs `action` with the current value.
    func withValue<Result>(_ action: (Value) throws -> Result) rethrows -> Result

    /// Modifies the value in place, atomically, then sends it.
    func modify<Result>(_ action: (inout Value) throws -> Result) rethrows -> Result
}
