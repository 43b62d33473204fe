precedencegroup BindingPrecedence {
    associativity: right
    // Binds tighter than assignment but looser than everything else, as in ReactiveSwift.
    higherThan: AssignmentPrecedence
}

infix operator <~ : BindingPrecedence

/// A source of values for `<~`: a stream that cannot fail (`Signal`, `SignalProducer`, any
/// property).
public protocol BindingSource<Value>: SignalProducerConvertible where Error == Never {}

extension Signal: BindingSource where Error == Never {}
extension SignalProducer: BindingSource where Error == Never {}

/// Something that can be the target of `<~`: a `BindingTarget`, a mutable property, an
/// `Action`, or an optional of any of them (`nil` ignores the binding).
public protocol BindingTargetProvider<Value> {
    /// The type of value the target accepts.
    associatedtype Value
    /// The target.
    var bindingTarget: BindingTarget<Value> { get }
}

/// A target for `<~`: an action to run for each value, and a lifetime that ends the binding.
///
/// Thread-safety: `action` runs on `scheduler` (at once, on the sending thread, by default).
public struct BindingTarget<Value>: BindingTargetProvider, Sendable {
    /// Ends every binding to this target.
    public let lifetime: Lifetime

    /// Runs for each value bound.
    public let action: @Sendable (Value) -> Void

    /// Creates a target that runs `action` on `scheduler` for each value, until `lifetime`
    /// ends.
    public init(on scheduler: any Scheduler = ImmediateScheduler(), lifetime: Lifetime, action: @escaping @Sendable (Value) -> Void) {
        self.lifetime = lifetime
        if scheduler is ImmediateScheduler {
            self.action = action
        } else {
            self.action = { value in
                let carried = _Carried(value)
                scheduler.schedule { action(carried.value) }
            }
        }
    }

    /// Creates a target that sets `object[keyPath:]`, until `lifetime` ends.
    public init<Object: AnyObject & Sendable>(
        on scheduler: any Scheduler = ImmediateScheduler(),
        lifetime: Lifetime,
        object: Object,
        keyPath: any ReferenceWritableKeyPath<Object, Value> & Sendable
    ) {
        self.init(on: scheduler, lifetime: lifetime) { [weak object] value in object?[keyPath: keyPath] = value }
    }

    /// `self`.
    public var bindingTarget: BindingTarget<Value> { self }
}

extension BindingTargetProvider {
    /// Binds `source` to `provider`: every value `source` sends (for a property: its current
    /// value, then every change) is handed to the target, until the target's lifetime ends or
    /// `source` terminates.
    ///
    /// - Returns: A disposable that ends the binding early. If the target's lifetime had
    ///   already ended, the binding ends at once (without starting `source`'s producer) and
    ///   the disposable is already disposed.
    @discardableResult
    public static func <~ <Source: BindingSource>(provider: Self, source: Source) -> (any Disposable)? where Source.Value == Value {
        let bindingTarget = provider.bindingTarget
        return source.producer
            .take(during: bindingTarget.lifetime)
            .startWithValues(bindingTarget.action)
    }

    /// Binds a source of non-optional values to a target of optional values; see `<~`.
    @discardableResult
    public static func <~ <Source: BindingSource>(provider: Self, source: Source) -> (any Disposable)? where Value == Source.Value? {
        let bindingTarget = provider.bindingTarget
        return source.producer
            .take(during: bindingTarget.lifetime)
            .startWithValues { bindingTarget.action($0) }
    }
}

extension Signal.Observer {
    /// Binds `source` to `observer`: every value `source` sends is sent to `observer`, until
    /// `source` terminates (its terminal event is not forwarded) or the binding is disposed.
    /// The binding does not keep `observer` alive.
    ///
    /// - Returns: A disposable that ends the binding.
    @discardableResult
    public static func <~ <Source: BindingSource>(observer: Signal<Value, Error>.Observer, source: Source) -> any Disposable where Source.Value == Value {
        let weakObserver = _WeakReference(observer)
        return source.producer.startWithValues { weakObserver.object?.send(value: $0) }
    }
}

extension Optional: BindingTargetProvider where Wrapped: BindingTargetProvider {
    /// The wrapped target's value type.
    public typealias Value = Wrapped.Value

    /// The wrapped target's binding target, or — for `nil` — one whose lifetime has ended, so
    /// a binding to it does nothing.
    public var bindingTarget: BindingTarget<Wrapped.Value> {
        switch self {
        case let .some(provider): return provider.bindingTarget
        case .none: return BindingTarget(lifetime: .empty) { _ in }
        }
    }
}

extension MutablePropertyProtocol {
    /// A binding target that sets `value`, for as long as the property's `lifetime` lasts;
    /// it does not keep the property alive.
    public var bindingTarget: BindingTarget<Value> {
        let property = _WeakReference(self)
        return BindingTarget(lifetime: lifetime) { property.object?.value = $0 }
    }
}

/// A weak reference that `@Sendable` closures can capture: bindings hold their targets weakly,
/// as ReactiveSwift's do.
@usableFromInline
final class _WeakReference<Object: AnyObject> {
    /// Written once, in `init`; cleared only by the runtime when the object goes away.
    @usableFromInline
    weak var object: Object?

    @inlinable
    init(_ object: Object) {
        self.object = object
    }
}

// `object` is never assigned after `init`; the runtime clears a weak reference atomically.
// What the holder does with the object is the holder's contract (a binding target's action
// may run on any thread, as in ReactiveSwift).
extension _WeakReference: @unchecked Sendable {}
