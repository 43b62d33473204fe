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
    /// How many restarts the deciding rule holds in its current window: for a restart, counting
    /// this one (1 for the first); for a restart refused by its limit, the restarts that filled
    /// it; for other directives, the restarts so far. The window is the rule's
    /// `restart(limit:within:)` window, or a one-for-one `Supervisor`'s intensity period, or,
    /// for a back-off or a limit without window, the consecutive restarts since the last reset.
    /// 0 when nothing counts restarts (no rule; a `Supervisor`'s child waiting for its
    /// supervisor, which counts them itself). A `Supervisor` that exceeded its intensity reports
    /// its intensity.
    public let restartCount: Int

    public var description: String {
        var text = "\(actor.path) failed (\(error)): \(directive) by \(decider)"
        if restartCount > 0 { text += directive == .restart ? " (restart \(restartCount))" : " (after \(restartCount) restarts)" }
        if let backoff { text += " after \(backoff)" }
        return text
    }
}
