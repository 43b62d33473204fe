/// A supervisor's child, as `whichChildren` reports it.
public struct SupervisedChild: Sendable, CustomStringConvertible {
    /// The child's id.
    public let id: String
    /// The running child, or `nil` if it is not running (a transient child that stopped, or
    /// one stopped with `terminateChild`).
    public let ref: AnyActorRef?
    /// Its restart type.
    public let restart: ChildSpec.Restart
    /// Whether it is a worker or a supervisor.
    public let type: ChildSpec.ChildType

    public var description: String { "\(id) (\(restart)): \(ref?.path ?? "not running")" }
}
