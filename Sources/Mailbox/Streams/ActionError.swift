/// The error an `Action`'s `apply` producer fails with.
public enum ActionError<Error: Swift.Error>: Swift.Error {
    /// The action was disabled (by its `enabledIf` state, or because it was executing).
    case disabled
    /// The unit of work failed with this error.
    case producerFailed(Error)
}

extension ActionError: Equatable where Error: Equatable {}
