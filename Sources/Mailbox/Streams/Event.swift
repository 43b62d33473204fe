/// One event of a `Signal` or `SignalProducer`: a value, or one of the three terminal events.
///
/// Grammar (see `docs/StreamContracts.md`): a stream sends any number of `value`s followed by at
/// most one terminal event (`failed`, `completed` or `interrupted`); nothing follows a terminal
/// event.
///
/// `Sendable` when `Value` is (every `Swift.Error` is `Sendable` in Swift 6).
public enum Event<Value, Error: Swift.Error> {
    /// A value.
    case value(Value)
    /// The stream failed with an error. Terminal.
    case failed(Error)
    /// The stream finished successfully. Terminal.
    case completed
    /// The stream was interrupted (its producer was disposed, or it was observed after it had
    /// terminated). Terminal; not an error.
    case interrupted

    /// Whether this is a terminal event (`failed`, `completed` or `interrupted`).
    @inlinable
    public var isTerminating: Bool {
        if case .value = self { return false }
        return true
    }

    /// Whether this is `completed`.
    @inlinable
    public var isCompleted: Bool {
        if case .completed = self { return true }
        return false
    }

    /// The value, if this is a `value` event.
    @inlinable
    public var value: Value? {
        if case let .value(value) = self { return value }
        return nil
    }

    /// The error, if this is a `failed` event.
    @inlinable
    public var error: Error? {
        if case let .failed(error) = self { return error }
        return nil
    }

    /// Transforms the value of a `value` event; terminal events pass through.
    @inlinable
    public func map<U>(_ transform: (Value) throws -> U) rethrows -> Event<U, Error> {
        switch self {
        case let .value(value): return .value(try transform(value))
        case let .failed(error): return .failed(error)
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }

    /// Transforms the error of a `failed` event; other events pass through.
    @inlinable
    public func mapError<F>(_ transform: (Error) throws -> F) rethrows -> Event<Value, F> {
        switch self {
        case let .value(value): return .value(value)
        case let .failed(error): return .failed(try transform(error))
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }
}

extension Event: Sendable where Value: Sendable {}
extension Event: Equatable where Value: Equatable, Error: Equatable {
    /// Whether both are the same kind of event with equal payloads.
    public static func == (lhs: Event<Value, Error>, rhs: Event<Value, Error>) -> Bool {
        switch (lhs, rhs) {
        case let (.value(left), .value(right)): return left == right
        case let (.failed(left), .failed(right)): return left == right
        case (.completed, .completed), (.interrupted, .interrupted): return true
        default: return false
        }
    }
}

extension Event: CustomStringConvertible {
    /// `VALUE 1`, `FAILED error`, `COMPLETED` or `INTERRUPTED`, as ReactiveSwift prints them.
    public var description: String {
        switch self {
        case let .value(value): return "VALUE \(value)"
        case let .failed(error): return "FAILED \(error)"
        case .completed: return "COMPLETED"
        case .interrupted: return "INTERRUPTED"
        }
    }
}
