/// How to run an actor: its mailbox, its scheduler and its run length.
///
/// ```swift
/// let props = Props(mailbox: .bounded(capacity: 1_000, overflow: .dropOldest), runLength: 16)
/// ```
public struct Props: Sendable {
    /// The mailbox's capacity and overflow policy. Default: unbounded.
    public var mailbox: MailboxCapacity

    /// Where the actor's mailbox runs; `nil` (the default) uses the system's default scheduler.
    public var scheduler: (any Scheduler)?

    /// How many user messages one mailbox run handles at most before it yields the thread to
    /// other actors; `nil` uses the system's default. System messages do not count.
    public var runLength: Int?

    /// How many messages the actor may stash; stashing one more throws `StashOverflowError`.
    public var stashCapacity: Int

    /// Creates props; every parameter has the default described on its property.
    public init(mailbox: MailboxCapacity = .unbounded, scheduler: (any Scheduler)? = nil, runLength: Int? = nil, stashCapacity: Int = 1_000) {
        precondition(runLength.map { $0 > 0 } ?? true, "runLength must be positive")
        precondition(stashCapacity >= 0, "stashCapacity must not be negative")
        self.mailbox = mailbox
        self.scheduler = scheduler
        self.runLength = runLength
        self.stashCapacity = stashCapacity
    }
}

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

/// What `tell` did with a message.
public enum TellResult: Sendable, Equatable {
    /// The message is in the mailbox.
    case enqueued
    /// The message was not enqueued and has been published as a dead letter.
    case dropped(DeadLetter.Reason)

    /// Whether the message is in the mailbox.
    public var isEnqueued: Bool { self == .enqueued }
}
