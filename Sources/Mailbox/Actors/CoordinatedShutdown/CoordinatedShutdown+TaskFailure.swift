extension CoordinatedShutdown {
    /// A coordinated-shutdown task that did not finish well: it threw, or it was still running
    /// when its phase timed out (it was then cancelled, and the next phase started without it).
    /// Listed in `ActorSystem.ShutdownReport.failedTasks` and logged.
    public struct TaskFailure: Sendable, CustomStringConvertible {
        /// What happened to the task.
        public enum Cause: Sendable, CustomStringConvertible {
            /// The task threw this error.
            case threw(any Error)
            /// The task had not finished when its phase's time-out expired.
            case timedOut(after: Duration)

            public var description: String {
                switch self {
                case let .threw(error): return "failed: \(error)"
                case let .timedOut(after): return "timed out after \(after)"
                }
            }
        }

        /// The task's phase.
        public let phase: Phase
        /// The task's name, as given to `addTask`.
        public let name: String
        /// What happened.
        public let cause: Cause

        /// Whether the task timed out (rather than threw).
        public var timedOut: Bool {
            if case .timedOut = cause { return true }
            return false
        }

        public var description: String { "shutdown task '\(name)' in phase \(phase) \(cause)" }
    }
}
