/// The failure of a parent whose child escalated a failure that the parent did not handle:
/// it names the child and carries the child's own error.
///
/// A child whose supervision escalates (`SupervisorStrategy.escalate`, or a restart limit with
/// `whenExceeded: .escalate`) stops and hands its failure to its parent as
/// `LifecycleEvent.childFailed(child, error:)`. A parent that handles neither that event nor
/// (if it watches the child) `.terminated` fails with this error, and its own supervision
/// decides: match it with `onFailure(of: ChildFailedError.self, …)`. Escalated again, the
/// grandparent's failure is a `ChildFailedError` whose `cause` is this one, so the chain of
/// children reads outwards.
///
/// Thread-safety: an immutable value, `Sendable`.
public struct ChildFailedError: Error, Sendable, CustomStringConvertible {
    /// The child that failed and escalated.
    public let child: AnyActorRef
    /// What the child failed with (itself a `ChildFailedError` when the child passed on its
    /// own child's escalation).
    public let cause: any Error

    /// An escalated failure of `child`, caused by `cause`.
    public init(child: AnyActorRef, cause: any Error) {
        self.child = child
        self.cause = cause
    }

    public var description: String {
        "child \(child.path) failed and escalated: \(cause)"
    }
}
