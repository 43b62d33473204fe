/// How many user messages a mailbox holds, and what happens to one more.
///
/// System messages (start, stop, watch, terminated, …) never count against the capacity and are
/// never dropped.
public enum MailboxCapacity: Sendable, Equatable {
    /// No limit: `tell` always enqueues.
    case unbounded
    /// At most `capacity` queued user messages; `overflow` decides what happens beyond.
    case bounded(capacity: Int, overflow: OverflowPolicy)
}
