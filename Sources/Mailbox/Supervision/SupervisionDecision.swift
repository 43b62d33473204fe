/// What supervision did with one failure of an actor.
public struct SupervisionDecision: Sendable, CustomStringConvertible {
    /// Who decided.
    public enum Decider: Sendable, Equatable {
        /// A `Behavior.supervise(_:).onFailure(_:)` rule of the actor itself.
        case actor
        /// The system's `guardianStrategy` (top-level actors without a deciding rule).
        case guardian
        /// The `Supervisor` the actor is a child of.
        case supervisor
        /// Nobody: the default for an actor without supervision, stop.
        case none
    }

    /// The actor that failed.
    public let actor: ActorAddress
    /// What it threw.
    public let error: any Error
    /// The message whose handling failed, if the failure came from a message (it is dropped:
    /// neither retried nor dead-lettered). `nil` for failures in `setup` or lifecycle handlers.
    public let message: (any Sendable)?
    /// What was done: `restart` (possibly after a back-off), `resume`, `stop` or `escalate`.
    /// A restart refused by its limit is reported as the limit's `stop` or `escalate`; a
    /// `Supervisor`'s child reports `escalate` (the supervisor decides next), except that a
    /// one-for-one supervisor's child whose restart its supervisor's window admits restarts
    /// at once and reports `restart` by `.supervisor`.
    public let directive: SupervisorDirective
    /// Who decided.
    public let decider: Decider
    /// The back-off before the restart, for `restartWithBackoff`.
    public let backoff: Duration?

    public var description: String {
        var text = "\(actor.path) failed (\(error)): \(directive) by \(decider)"
        if let backoff { text += " after \(backoff)" }
        return text
    }
}
