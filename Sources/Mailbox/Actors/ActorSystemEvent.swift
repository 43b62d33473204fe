/// What happens in an actor system, published on its event stream for monitoring.
public enum ActorSystemEvent: Sendable, CustomStringConvertible {
    /// An actor was spawned.
    case spawned(ActorAddress)
    /// An actor terminated (stopped, failed, or stopped by its parent or the system).
    case stopped(ActorAddress)
    /// An actor's handler (or `setup`) threw. Followed by `supervised`, saying what was done.
    case failed(ActorAddress, error: any Error)
    /// Supervision decided what to do with a failed actor (see `SupervisionDecision`).
    case supervised(SupervisionDecision)
    /// A message was not delivered for lack of a recipient: the recipient had terminated, there
    /// was none, or a reply came too late.
    case deadLetter(DeadLetter)
    /// A message was dropped for lack of room: a full bounded mailbox or back-off stash.
    case dropped(Dropped)
    /// A behavior returned `.unhandled` for a message.
    case unhandled(ActorAddress, message: any Sendable)
    /// A pool router's resizer changed its number of routees.
    case poolResized(PoolResized)

    public var description: String {
        switch self {
        case let .spawned(address): return "spawned \(address.path)"
        case let .stopped(address): return "stopped \(address.path)"
        case let .failed(address, error): return "failed \(address.path): \(error)"
        case let .supervised(decision): return decision.description
        case let .deadLetter(letter): return letter.description
        case let .dropped(drop): return drop.description
        case let .unhandled(address, message): return "unhandled by \(address.path): \(message)"
        case let .poolResized(resize): return resize.description
        }
    }
}
