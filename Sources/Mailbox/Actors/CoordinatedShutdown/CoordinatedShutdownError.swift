/// Why `CoordinatedShutdown.addTask(phase:name:_:)` refused a task.
///
/// A struct with a private code, so new cases can be added without breaking users; compare
/// with the static members (`error.code == .phaseAlreadyStarted`).
public struct CoordinatedShutdownError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without details.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable { case unknownPhase, phaseAlreadyStarted }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The phase is not in the system's `Configuration.phases`.
        public static let unknownPhase = Code(.unknownPhase)
        /// Too late: the phase has started or passed, the system was shut down without its
        /// phases (`shutdown()`), or it has terminated. The task would never run. (Akka runs
        /// such a task never and only logs it.)
        public static let phaseAlreadyStarted = Code(.phaseAlreadyStarted)

        public var description: String { "\(value)" }
    }

    /// The kind of error.
    public let code: Code
    /// A human description naming the task, the phase and what was wrong.
    public let description: String

    static func unknownPhase(_ phase: CoordinatedShutdown.Phase, task: String, system: String, phases: [CoordinatedShutdown.Phase]) -> CoordinatedShutdownError {
        CoordinatedShutdownError(
            code: .unknownPhase,
            description: "cannot add shutdown task '\(task)' to actor system '\(system)': no phase '\(phase)' "
                + "(its phases: \(phases.map(\.name).joined(separator: ", ")))")
    }

    static func tooLate(_ phase: CoordinatedShutdown.Phase, task: String, system: String, why: String) -> CoordinatedShutdownError {
        CoordinatedShutdownError(
            code: .phaseAlreadyStarted,
            description: "cannot add shutdown task '\(task)' to phase '\(phase)' of actor system '\(system)': \(why); it would never run")
    }
}
