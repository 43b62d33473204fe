/// What a supervisor does with an actor whose handler threw.
public enum SupervisorDirective: Sendable, Equatable, CustomStringConvertible {
    /// Keep the actor's state and go on with the next message; the failing message is dropped.
    case resume
    /// Rebuild the actor's state from its `setup`, keeping its mailbox; the failing message is
    /// dropped.
    case restart
    /// Stop the actor (children first); queued messages become dead letters.
    case stop
    /// Stop the actor and hand the failure to its parent, which receives
    /// `LifecycleEvent.childFailed(ref, error:)`; unhandled there (and, if the parent watches
    /// the child, as `terminated` too), it fails the parent with a `ChildFailedError` naming the
    /// child and carrying the error. For a top-level actor the system's guardian strategy
    /// decides instead.
    case escalate

    public var description: String {
        switch self {
        case .resume: return "resume"
        case .restart: return "restart"
        case .stop: return "stop"
        case .escalate: return "escalate"
        }
    }
}
