/// Messages a `Supervisor` understands.
public enum SupervisorMessage: Sendable {
    /// Replies with the children in start order.
    case whichChildren(replyTo: ActorRef<[SupervisedChild]>)
    /// Replies with the live child with this id, if any.
    case child(id: String, replyTo: ActorRef<AnyActorRef?>)
}
