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

    /// Called after each mailbox run that leaves the actor with nothing queued, with the
    /// actor's identity (a balancing pool's routees pull their next message with it). Internal.
    @usableFromInline
    var idleHook: (@Sendable (ObjectIdentifier) -> Void)?

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
