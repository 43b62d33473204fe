/// What `SignalProducer.drain(into:…)` does with a value that arrives while its buffer is full.
///
/// A producer pushes; the actor pulls by acknowledging. Between them the drain buffers the
/// values the actor has not asked for yet, up to `bufferLimit`; one more is an overflow.
public enum DrainOverflow: Sendable, Equatable, CustomStringConvertible {
    /// Stop the drain: the upstream run is interrupted, the actor is told the failure
    /// (`DrainFailure.Code.bufferOverflow`) and the drain fails with it. The default: a drain
    /// never loses a value silently.
    case fail
    /// Drop the value that just arrived and keep the buffered ones.
    case dropNewest
    /// Drop the oldest buffered value and buffer the new one.
    case dropOldest

    public var description: String {
        switch self {
        case .fail: return "fail"
        case .dropNewest: return "dropNewest"
        case .dropOldest: return "dropOldest"
        }
    }
}
