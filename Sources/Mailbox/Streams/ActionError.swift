/// The error an `Action`'s `apply` producer fails with.
public enum ActionError<Error: Swift.Error>: Swift.Error {
    /// The action was disabled (by its `enabledIf` state, or because it was executing).
    case disabled
    /// The unit of work failed with this error.
    case producerFailed(Error)
}

extension ActionError: Equatable where Error: Equatable {
    /// Whether both are `disabled`, or both `producerFailed` with equal errors.
    public static func == (lhs: ActionError<Error>, rhs: ActionError<Error>) -> Bool {
        switch (lhs, rhs) {
        case (.disabled, .disabled): return true
        case let (.producerFailed(left), .producerFailed(right)): return left == right
        default: return false
        }
    }
}
