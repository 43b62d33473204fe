@testable import Mailbox

extension Event {
    /// Whether this is `interrupted`.
    var isInterruption: Bool {
        if case .interrupted = self { return true }
        return false
    }
}

extension EventRecorder {
    /// Whether a terminal event was recorded.
    var hasTerminated: Bool { events.contains { $0.isTerminating } }
}
