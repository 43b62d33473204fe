/// A message that was accepted by a send but discarded for lack of room: a full bounded
/// mailbox (under its overflow policy) or a full back-off stash. Akka's `Dropped`.
///
/// Published as `ActorSystemEvent.dropped` (observe it with `ActorSystem.drops`) and counted in
/// `ActorSystem.droppedCount`, never as a dead letter: every message that is not delivered is
/// accounted for exactly once, either here or as a `DeadLetter`.
public struct Dropped: Sendable, CustomStringConvertible {
    /// Who the message was for.
    public let recipient: ActorAddress
    /// The message itself (for `dropOldest`, the oldest queued message, not the new one).
    public let message: any Sendable
    /// Why it was dropped: `.mailboxFull(policy)` or `.backoffStashFull`.
    public let reason: DeadLetter.Reason

    public var description: String {
        "dropped message to \(recipient.path) (\(reason)): \(message)"
    }
}
