#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutable property that validates every value set through it before storing it in an inner
/// property, and publishes the outcome of the last attempt as `result`.
///
/// Setting `value` runs the validator on the proposed value:
/// - `.valid`: the value is stored in the inner property; `result` is `.valid(value)`.
/// - `.coerced(replacement, error)`: `replacement` is stored instead; `result` is
///   `.coerced(replacement:proposed:error:)`.
/// - `.invalid(error)`: nothing is stored; `result` is `.invalid(proposed, error)`.
///
/// A change made directly to the inner property is validated too (`result` follows it) but
/// never rewritten. The variants `init(_:with:_:)` validate against another property, and
/// validate the last proposed value again whenever the other property changes.
///
/// ```
/// let age = ValidatingProperty(0) { $0 >= 0 ? .valid : .invalid(AgeError.negative) }
/// age.value = -3      // age.value is still 0; age.result.value is .invalid(-3, .negative)
/// ```
///
/// `value`, `producer`, `signal` and `lifetime` are the inner property's.
///
/// Thread-safety: use from any thread. A set's validation, its `result` and its store are one
/// step with respect to the inner property's other changes: `result` describes the inner
/// property's last change in the order those changes are delivered. A set made from inside the
/// validator or from an observer of a set made through this property (on the same thread) is
/// queued and made, in order, once the current one is done — it cannot deadlock. Setting this
/// property from inside an observer of a change made *directly* to the inner property is a
/// recursive set of the inner property, delivered depth-first (contract 16).
///
/// What keeps what alive: the validating property retains its inner property (and, for the
/// `with:` variants, a view of the other property that does not retain it).
public final class ValidatingProperty<Value, ValidationError: Swift.Error>: MutablePropertyProtocol {
    /// What a validator decides about a proposed value.
    public enum Decision {
        /// The proposed value is valid and is stored as it is.
        case valid
        /// The proposed value is replaced by this value (and an optional error says why)
        /// before it is stored.
        case coerced(Value, ValidationError?)
        /// The proposed value is rejected; the inner property keeps its value.
        case invalid(ValidationError)
    }

    /// The outcome of the last attempt to change the value.
    public enum Result {
        /// The value was valid and is stored.
        case valid(Value)
        /// `replacement` was stored instead of `proposed`.
        case coerced(replacement: Value, proposed: Value, error: ValidationError?)
        /// The value was rejected with the error.
        case invalid(Value, ValidationError)

        /// Whether the value was rejected.
        public var isInvalid: Bool {
            if case .invalid = self { return true }
            return false
        }

        /// The stored value: the valid one or the replacement; `nil` if it was rejected.
        public var value: Value? {
            switch self {
            case let .valid(value): return value
            case let .coerced(replacement, _, _): return replacement
            case .invalid: return nil
            }
        }

        /// The rejection's error, if the value was rejected. (A coercion's error is in the
        /// `coerced` case.)
        public var error: ValidationError? {
            if case let .invalid(_, error) = self { return error }
            return nil
        }

        /// The value proposed: what the next validation against a changed other property
        /// starts from.
        var proposed: Value {
            switch self {
            case let .valid(value): return value
            case let .coerced(_, proposed, _): return proposed
            case let .invalid(value, _): return value
            }
        }

        init(_ value: Value, _ decision: Decision) {
            switch decision {
            case .valid: self = .valid(value)
            case let .coerced(replacement, error): self = .coerced(replacement: replacement, proposed: value, error: error)
            case let .invalid(error): self = .invalid(value, error)
            }
        }
    }

    /// The outcome of the last attempt to change the value (through this property or directly
    /// to the inner one).
    public let result: Property<Result>

    /// The inner property's current value; setting validates the new value first (see the
    /// type's documentation).
    public var value: Value {
        get { getValue() }
        set { storage.set(newValue) }
    }

    /// The inner property's producer: its current value, then every change.
    public let producer: SignalProducer<Value, Never>

    /// The inner property's signal of changes.
    public let signal: Signal<Value, Never>

    /// The inner property's lifetime.
    public let lifetime: Lifetime

    private let getValue: @Sendable () -> Value
    private let storage: _ValidatingStorage<Value, ValidationError>
    /// Observes the inner property's changes for as long as this property lives.
    private let observation: ScopedDisposable<AnyDisposable>

    /// Creates a validating property storing its values in `inner`; `inner`'s current value
    /// is validated at once (and not rewritten).
    public init<Inner: ComposableMutablePropertyProtocol>(
        _ inner: Inner,
        _ validator: @escaping @Sendable (Value) -> Decision
    ) where Inner.Value == Value {
        let carried = _Carried(inner)
        getValue = { carried.value.value }
        producer = inner.producer
        signal = inner.signal
        lifetime = inner.lifetime
        storage = _ValidatingStorage(
            initial: Result(inner.value, validator(inner.value)),
            validator: validator,
            write: { carried.value.value = $0 }
        )
        result = Property(capturing: storage.result)
        // Weak: the inner property's signal must not keep the storage (which writes to the
        // inner property) alive — that would be a cycle.
        let weakStorage = _WeakReference(storage)
        observation = ScopedDisposable(AnyDisposable(inner.signal.observeValues { weakStorage.object?.innerChanged(to: $0) } ?? AnyDisposable()))
    }

    /// Creates a validating property storing its values in a new `MutableProperty(initial)`.
    public convenience init(_ initial: Value, _ validator: @escaping @Sendable (Value) -> Decision) {
        self.init(MutableProperty(initial), validator)
    }

    /// Creates a validating property storing its values in `inner`, validated together with
    /// `other`'s value; when `other` changes, the last proposed value is validated again.
    public convenience init<Other: PropertyProtocol>(
        _ inner: MutableProperty<Value>,
        with other: Other,
        _ validator: @escaping @Sendable (Value, Other.Value) -> Decision
    ) {
        // A view of `other` that does not keep it alive.
        let other = Property(other)
        self.init(inner) { validator($0, other.value) }
        revalidate(whenever: other.signal)
    }

    /// Creates a validating property storing its values in a new `MutableProperty(initial)`,
    /// validated together with `other`'s value; see `init(_:with:_:)`.
    public convenience init<Other: PropertyProtocol>(
        _ initial: Value,
        with other: Other,
        _ validator: @escaping @Sendable (Value, Other.Value) -> Decision
    ) {
        self.init(MutableProperty(initial), with: other, validator)
    }

    /// Creates a validating property storing its values in a new `MutableProperty(initial)`,
    /// validated together with the value last proposed to `other`.
    public convenience init<U, E>(
        _ initial: Value,
        with other: ValidatingProperty<U, E>,
        _ validator: @escaping @Sendable (Value, U) -> Decision
    ) {
        self.init(MutableProperty(initial), with: other, validator)
    }

    /// Creates a validating property storing its values in `inner`, validated together with
    /// the value last proposed to `other` (valid or not); when `other`'s `result` changes, the
    /// last proposed value is validated again.
    public convenience init<U, E>(
        _ inner: MutableProperty<Value>,
        with other: ValidatingProperty<U, E>,
        _ validator: @escaping @Sendable (Value, U) -> Decision
    ) {
        // Only `other.result`, not `other` itself.
        let otherResults = other.result
        self.init(inner) { validator($0, otherResults.value.proposed) }
        revalidate(whenever: otherResults.signal)
    }

    /// Validates the last proposed value again whenever `trigger` sends, for as long as this
    /// property's lifetime lasts (without keeping this property alive).
    private func revalidate<T>(whenever trigger: Signal<T, Never>) {
        let weakSelf = _WeakReference(self)
        trigger.take(during: lifetime).observeValues { _ in
            guard let property = weakSelf.object else { return }
            property.value = property.result.value.proposed
        }
    }
}

/// The moving parts of a `ValidatingProperty`: the published result, and the bookkeeping that
/// lets a set publish its own result when the inner property delivers the value it stored.
///
/// No lock is held while user code runs (the validator, observers of `result` or of the inner
/// property). `state` tracks, per thread, the sets under way and the sets queued behind them.
final class _ValidatingStorage<Value, ValidationError: Swift.Error>: Sendable {
    typealias Result = ValidatingProperty<Value, ValidationError>.Result

    private struct State {
        /// Threads inside a set of this property, with the sets queued behind theirs.
        var queued: [UInt: [_Carried<Value>]] = [:]
        /// A result to publish when the inner property delivers the value stored for it, by
        /// the thread storing it.
        var stored: [UInt: _Carried<Result>] = [:]
    }

    let result: MutableProperty<Result>
    private let validator: @Sendable (Value) -> ValidatingProperty<Value, ValidationError>.Decision
    private let write: @Sendable (Value) -> Void
    /// Protected by its lock; never held while user code runs.
    private let state = _Locked(locking: State())

    init(
        initial: Result,
        validator: @escaping @Sendable (Value) -> ValidatingProperty<Value, ValidationError>.Decision,
        write: @escaping @Sendable (Value) -> Void
    ) {
        result = MutableProperty(initial)
        self.validator = validator
        self.write = write
    }

    /// Validates and stores `value` — or, if this thread is already setting the property,
    /// queues it for that set to make afterwards.
    func set(_ value: Value) {
        let thread = _currentThreadID()
        let queued = state.withLock { state -> Bool in
            if state.queued[thread] != nil {
                state.queued[thread]!.append(_Carried(value))
                return true
            }
            state.queued[thread] = []
            return false
        }
        if queued { return }
        var next: Value? = value
        while let value = next {
            apply(value, on: thread)
            next = state.withLock { state -> Value? in
                if let first = state.queued[thread]?.first {
                    state.queued[thread]!.removeFirst()
                    return first.value
                }
                state.queued[thread] = nil
                return nil
            }
        }
    }

    private func apply(_ value: Value, on thread: UInt) {
        let outcome = Result(value, validator(value))
        guard let stored = outcome.value else {
            result.value = outcome
            return
        }
        state.withLock { $0.stored[thread] = _Carried(outcome) }
        write(stored)
        // Normally taken by `innerChanged` during the write; cleared here if the inner
        // property did not deliver (it had gone away).
        state.withLock { _ = $0.stored.removeValue(forKey: thread) }
    }

    /// The inner property delivered `value`: publishes the result of the set that stored it,
    /// or — for a change made directly to the inner property — validates it.
    func innerChanged(to value: Value) {
        let stored = state.withLock { $0.stored.removeValue(forKey: _currentThreadID()) }
        result.value = stored?.value ?? Result(value, validator(value))
    }
}

/// An identifier of the calling thread, unique among live threads.
@inline(__always)
func _currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

// Every stored property is immutable after `init`: `@Sendable` closures, the inner property's
// producer, signal and lifetime, and `storage`, whose mutable state is behind its `_Locked`.
extension ValidatingProperty: @unchecked Sendable {}

extension ValidatingProperty.Decision: Sendable where Value: Sendable {}
extension ValidatingProperty.Result: Sendable where Value: Sendable {}
