/// A supervisor's child, as `whichChildren` reports it.
public struct SupervisedChild: Sendable, CustomStringConvertible {
    /// The child's id.
    public let id: String
    /// The running child, or `nil` if it is not running (a transient child that stopped).
    public let ref: AnyActorRef?
    /// Its restart type.
    public let restart: ChildSpec.Restart

    public var description: String { "\(id) (\(restart)): \(ref?.path ?? "not running")" }
}
