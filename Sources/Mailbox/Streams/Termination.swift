/// How a stream ended: the terminal half of `Event`, for `Signal.Observer.terminate(_:)`.
public enum Termination<Error: Swift.Error>: Sendable {
    /// The stream failed with an error.
    case failed(Error)
    /// The stream finished successfully.
    case completed
    /// The stream was interrupted.
    case interrupted
}

extension Signal.Observer {
    /// Sends a value: the same as `send(value:)` (ReactiveSwift's name for operator authors).
    @inlinable
    public func receive(_ value: Value) {
        send(value: value)
    }

    /// Sends the terminal event `termination` describes.
    @inlinable
    public func terminate(_ termination: Termination<Error>) {
        switch termination {
        case let .failed(error): send(error: error)
        case .completed: sendCompleted()
        case .interrupted: sendInterrupted()
        }
    }
}
