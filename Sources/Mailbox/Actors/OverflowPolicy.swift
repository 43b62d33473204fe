/// What a full bounded mailbox does with one more message. Every dropped message is counted
/// and published as a dead letter (`DeadLetter.Reason.mailboxFull`).
public enum OverflowPolicy: Sendable, Equatable {
    /// Drop the new message; `tell` returns `.dropped`.
    case dropNewest
    /// Accept the new message and drop the oldest queued one when the actor next runs;
    /// `tell` returns `.enqueued`.
    case dropOldest
    /// Refuse the new message: like `dropNewest`, for senders that check `tell`'s result.
    case fail
    /// `send(_:)` suspends until there is room; `tell` (which never suspends) drops the new
    /// message as `dropNewest` does.
    case backpressure
}
