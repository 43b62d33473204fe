/// Thrown by `ActorContext.stash(_:)` when the stash is full.
public struct StashOverflowError: Error, Sendable, CustomStringConvertible {
    /// The actor whose stash overflowed.
    public let actor: ActorAddress
    /// The stash's capacity.
    public let capacity: Int

    public var description: String {
        "stash of \(actor.path) is full (capacity \(capacity))"
    }
}
