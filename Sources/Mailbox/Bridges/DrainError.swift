/// How a `SignalProducer.drain(into:…)` failed: its upstream failed, or the drain itself ended
/// the stream.
///
/// The actor is told the same error through `onFailure` (except `.targetTerminated`, which has
/// nobody to tell).
public enum DrainError<Error: Swift.Error>: Swift.Error {
    /// The upstream producer failed with this error.
    case producerFailed(Error)
    /// The drain ended the stream: see `DrainFailure.code`.
    case drainFailed(DrainFailure)

    /// The drain's own failure, if it is one.
    public var drainFailure: DrainFailure? {
        if case let .drainFailed(failure) = self { return failure }
        return nil
    }
}

extension DrainError: Equatable where Error: Equatable {
    /// Whether both are the same upstream error, or the same drain failure.
    public static func == (lhs: DrainError<Error>, rhs: DrainError<Error>) -> Bool {
        switch (lhs, rhs) {
        case let (.producerFailed(left), .producerFailed(right)): return left == right
        case let (.drainFailed(left), .drainFailed(right)): return left == right
        default: return false
        }
    }
}

extension DrainError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .producerFailed(error): return "producer failed: \(error)"
        case let .drainFailed(failure): return failure.description
        }
    }
}
