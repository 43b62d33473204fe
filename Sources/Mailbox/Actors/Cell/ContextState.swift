/// What an actor's context keeps beyond the cell: children, watches, the stash, timers, message
/// adapters and the idle hook. Most actors (leaves that only handle messages) never need any of
/// it, so the cell creates it on first use (`ActorCell.contextState()`) rather than with every
/// actor: that is one allocation less per idle actor (its bytes are in docs/Performance.md).
///
/// Not thread-safe: touched only inside the actor's mailbox run, like the rest of the cell's
/// consumer state (the idle hook is set before the cell is published, and only read after).
@usableFromInline
final class ContextState<Message: Sendable> {
    /// The children, in start order.
    @usableFromInline
    @exclusivity(unchecked)
    var children = ChildRegistry()
    /// `Props.idleHook`, read by each mailbox run of an actor that has one.
    @usableFromInline
    var idleHook: (@Sendable (ObjectIdentifier) -> Void)?
    /// Actors watching this one.
    @usableFromInline
    @exclusivity(unchecked)
    var watchers: [ObjectIdentifier: AnyTarget] = [:]
    /// Actors this one watches, with the custom message to receive instead of `terminated`.
    @usableFromInline
    @exclusivity(unchecked)
    var watching: [ObjectIdentifier: Watch] = [:]
    /// Terminations of remote actors waiting for the user messages queued ahead of them
    /// (`SystemMessage.terminatedAfter`), in arrival order.
    @usableFromInline
    @exclusivity(unchecked)
    var queuedTerminations: [QueuedTermination] = []
    /// Messages set aside by `stash(_:)`, oldest first, from `stashHead`.
    @usableFromInline
    @exclusivity(unchecked)
    var stashed: [Message] = []
    /// The oldest stashed message still there.
    @usableFromInline
    @exclusivity(unchecked)
    var stashHead: Int32 = 0
    /// Failures of this actor so far (wrapping).
    var failureCount: UInt32 = 0
    /// Message adapters made so far (for their names). Wraps around instead of trapping after
    /// 2³² adapters (names may then repeat; a name is only an address's last component).
    var adapterCount: UInt32 = 0
    /// The message adapters, once one is registered (its entries have their own lock).
    var adapterRegistry: MessageAdapters<Message>?
    /// A misuse found inside the running handler (see `ActorContext.recordUsageError`).
    var usageError: (any Error)?
    /// Created on first use of `ActorContext.timers`.
    @usableFromInline
    @exclusivity(unchecked)
    var timerStorage: TimerScheduler<Message>?

    /// A termination waiting until the mailbox has taken the user messages below `userIndex`.
    @usableFromInline
    struct QueuedTermination {
        let userIndex: Int
        let ref: AnyTarget
        let failure: (any Error)?
    }

    @usableFromInline
    struct Watch {
        let target: AnyTarget
        let message: Message?
    }

    @usableFromInline
    init() {}

    deinit {
        children.removeAll()
    }

    /// Whether an actor watches this one or this one watches another.
    @inlinable
    var hasWatches: Bool { !watchers.isEmpty || !watching.isEmpty }
}
