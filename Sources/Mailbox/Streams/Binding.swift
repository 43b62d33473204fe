precedencegroup BindingPrecedence {
    associativity: right
    // Binds tighter than assignment but looser than everything else, as in ReactiveSwift.
    higherThan: AssignmentPrecedence
}

infix operator <~ : BindingPrecedence

/// A source of values for `<~`: a stream that cannot fail (`Signal`, `SignalProducer`, any
/// property).
public protocol BindingSource: SignalProducerConvertible where Error == Never {}

extension Signal: BindingSource where Error == Never {}
extension SignalProducer: BindingSource where Error == Never {}

/// Something that can be the target of `<~`.
public protocol BindingTargetProvider {
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

/// Binds `source` to `target`: every value `source` sends (for a property: its current value,
/// then every change) is handed to the target, until the target's lifetime ends or
/// `source` terminates.
///
/// - Returns: A disposable that ends the binding early, or `nil` if the target's lifetime had
///   already ended.
@discardableResult
public func <~ <Target: BindingTargetProvider, Source: BindingSource>(target: Target, source: Source) -> (any Disposable)? where Source.Value == Target.Value {
    let bindingTarget = target.bindingTarget
    guard !bindingTarget.lifetime.hasEnded else { return nil }
    return source.producer
        .take(during: bindingTarget.lifetime)
        .startWithValues(bindingTarget.action)
}

/// Binds a source of non-optional values to a target of optional values; see `<~`.
@discardableResult
public func <~ <Target: BindingTargetProvider, Source: BindingSource>(target: Target, source: Source) -> (any Disposable)? where Target.Value == Source.Value? {
    let bindingTarget = target.bindingTarget
    guard !bindingTarget.lifetime.hasEnded else { return nil }
    return source.producer
        .take(during: bindingTarget.lifetime)
        .startWithValues { bindingTarget.action($0) }
}
