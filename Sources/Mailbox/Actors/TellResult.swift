/// What `tell` did with a message.
public enum TellResult: Sendable, Equatable {
    /// The message is in the mailbox.
    case enqueued
    /// The message was not enqueued and has been published as a dead letter.
    case dropped(DeadLetter.Reason)

    /// Whether the message is in the mailbox.
    public var isEnqueued: Bool { self == .enqueued }
}
