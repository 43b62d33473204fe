/// A ref whose message type is erased: it can be watched, compared and printed, not told.
public struct AnyActorRef: Sendable, Hashable, CustomStringConvertible {
    let target: AnyTarget

    init(_ target: AnyTarget) {
        self.target = target
    }

    /// The actor's address.
    public var address: ActorAddress { target.address }

    /// The actor's path.
    public var path: String { target.address.path }

    public var description: String { "AnyActorRef(\(address.path))" }

    public static func == (lhs: AnyActorRef, rhs: AnyActorRef) -> Bool {
        lhs.target === rhs.target
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(target))
    }

    /// Whether this is `ref`, whatever `ref`'s message type.
    public func `is`<Message>(_ ref: ActorRef<Message>) -> Bool {
        target === ref.target.actorTarget
    }
}
