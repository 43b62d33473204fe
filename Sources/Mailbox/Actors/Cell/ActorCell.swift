import Synchronization

/// An actor: its mailbox, its activation word and its run loop.
///
/// ## Activation
/// `pending` counts messages (user and system) enqueued and not yet handled. A sender enqueues
/// first, then increments `pending`; the sender that moves it from 0 to 1 schedules one
/// *mailbox run*. A run handles system messages first, then up to *run length* user messages,
/// then subtracts what it handled: if anything remains it schedules the next run, otherwise the
/// actor is idle. There is never more than one run scheduled or running, so the state below
/// "consumer only" needs no lock: each run hands it to the next through the acquire/release
/// read-modify-writes on `pending` and the scheduler's own queue.
///
/// A sender that enqueues after the actor terminated (racing its final drain) still counts in
/// `pending`, so a run is scheduled and turns the message into a dead letter: nothing accepted
/// is silently lost.
@usableFromInline
// Shared state is atomic or immutable; the rest is touched only inside the single mailbox run.
final class ActorCell<Message: Sendable>: ActorRefTarget<Message>, @unchecked Sendable {
    // MARK: Shared with senders (atomics and immutable values)

    /// Enqueued and not yet handled messages, user and system; the activation word.
    @usableFromInline
    let pending = Atomic<Int>(0)
    /// User messages: the producers' half of the mailbox queue (the consumer's half is
    /// `mailboxHead`, at the end of the object, so that senders and the run do not share cache
    /// lines).
    /// Timer messages travel here too, in mailbox order; their `TimerMarks` recognise them.
    @usableFromInline
    let mailboxTail = MPSCQueueTail<Message>()
    /// System messages, newest first: a lock-free stack drained (and reversed) by the run.
    @usableFromInline
    let systemMessages = Atomic<UnsafeMutableRawPointer?>(nil)
    /// A bounded mailbox or a scheduler other than the system's pool; `nil` for neither (see
    /// `CellOptions`).
    @usableFromInline
    let options: CellOptions?

    /// The options when the mailbox is bounded (`nil` when it is unbounded).
    @inlinable
    final var bounded: CellOptions? {
        if let options, options.isBounded { return options }
        return nil
    }
    /// Senders suspended in `send(_:)` waiting for room (`backpressure` only).
    @inlinable
    final var roomWaiters: RoomWaiters? { options?.roomWaiters }
    /// The pool the actor runs on, if any: it queues the cell itself, no closure per run.
    /// Unmanaged: `customScheduler` holds a pool given in `Props`, the system holds its own. A
    /// strong (or even an `unowned(unsafe)`) reference is retained and released on every
    /// activation, and the pool's reference count is one cache line that every worker would
    /// then write (measured on two cores with `pingpong-pairs`: see docs/Performance.md).
    @usableFromInline
    let poolReference: Unmanaged<PoolScheduler>?

    /// The pool the actor runs on, if any (a strong reference: not for the activation path).
    var pool: PoolScheduler? { poolReference?.takeUnretainedValue() }
    /// The scheduler the actor runs on, unless it is the system's own pool: `nil` then, as the
    /// system (which the cell holds) keeps its pool alive, and a retain per actor would have the
    /// spawning thread and the workers that free actors both write the pool's reference count.
    var customScheduler: (any Scheduler)? { options?.customScheduler }

    /// The scheduler the actor runs on.
    var scheduler: any Scheduler {
        if let customScheduler { return customScheduler }
        return poolReference!.takeUnretainedValue()
    }
    /// `runMailbox()`, specialised for `Message` where the actor was spawned (see
    /// `ActorSystem.spawn`): a run through the job's virtual `runJob()` would otherwise execute
    /// unspecialised generic code that looks up type metadata on every message.
    @usableFromInline
    let specializedRunMailbox: (ActorCell<Message>) -> Bool

    /// Timers and ask time-outs run on this scheduler's clock: the actor's own scheduler when
    /// it tells time, otherwise the system's timer scheduler.
    var dateScheduler: any DateScheduler {
        // The pool tells time: no protocol-conformance look-up for the common case.
        if let pool { return pool }
        return (scheduler as? any DateScheduler) ?? system.timerScheduler
    }


    // MARK: Consumer only (touched only inside a mailbox run)
    //
    // Exclusivity is not checked at run time for these: one mailbox run at a time is the
    // invariant that makes every access exclusive (checks cost every message: docs/Performance.md).

    /// The current behavior. Assign through `install(_:)`, which keeps `receiveHandler` in step.
    @usableFromInline
    @exclusivity(unchecked)
    var behavior: Behavior<Message>

    // MARK: Small immutable fields (shared), in the behavior's tail padding
    //
    // Declared here, after the 25-byte behavior, they fill the bytes it leaves before the next
    // word instead of padding to words of their own (16 bytes less per actor).

    /// Flags shared with senders, in one atomic byte, each behind named accessors that choose
    /// its memory ordering (see `CellFlags`).
    @usableFromInline
    let flags = CellFlags()

    /// Whether the actor has terminated.
    @inlinable
    final func isTerminated() -> Bool {
        flags.isTerminated
    }
    /// Whether the scheduled (or running) mailbox run holds a retain of the cell. Handed from
    /// whoever schedules a run to that run, like the rest of the consumer's state (see
    /// `scheduleRun`).
    @usableFromInline
    @exclusivity(unchecked)
    var runIsRetained = false
    /// User messages per mailbox run.
    @usableFromInline
    let runLength: Int32

    // MARK: Consumer only, continued

    /// The current behavior's message handler when it is a `receive` behavior: read on every
    /// message without copying the behavior enum.
    @usableFromInline
    @exclusivity(unchecked)
    var receiveHandler: ((ActorContext<Message>, Message) throws -> Behavior<Message>)?
    /// The same, for a `receiveMessage` behavior (at most one of the two is set).
    @usableFromInline
    @exclusivity(unchecked)
    var messageHandler: ((Message) throws -> Behavior<Message>)?
    @usableFromInline
    @exclusivity(unchecked)
    var lifecycle: Lifecycle = .new {
        willSet {
            // "Restarting" is the lifecycle's, copied into `flags` only here: `mailboxDepth` is
            // read from any thread, and `lifecycle` belongs to the mailbox run. (`willSet`: its
            // `newValue` is matched in place; reading `lifecycle` back would copy its payload.)
            let isRestarting = if case .restarting = newValue { true } else { false }
            if isRestarting != flags.isRestarting { flags.setRestarting(isRestarting) }
        }
    }
    /// Messages the stash may hold (`Props.stashCapacity`). After `lifecycle`, in its padding.
    @usableFromInline
    let stashCapacity: Int32
    /// The context's state (children, watches, stash, timers, adapters, idle hook), created on
    /// first use by `contextState()`: most actors never need it.
    @usableFromInline
    @exclusivity(unchecked)
    var contextStorage: ContextState<Message>?
    /// The parent, told `childTerminated` when this actor terminates. Cleared then.
    @usableFromInline
    @exclusivity(unchecked)
    var parent: AnyTarget?
    /// Run after post-stop, set by `Behavior.stopped(postStop:)`.
    @usableFromInline
    @exclusivity(unchecked)
    var postStopAction: (() -> Void)?
    /// Rules, restart counts and a restart in progress; `nil` for an unsupervised actor.
    @usableFromInline
    @exclusivity(unchecked)
    var supervision: SupervisionState<Message>?
    /// The consumer's half of the mailbox queue (see `mailboxTail`). Last, as far as the object
    /// allows from the producers' half near its start: in fan-in, senders keep writing that
    /// half while the run reads this one.
    @usableFromInline
    @exclusivity(unchecked)
    var mailboxHead = MPSCQueueHead<Message>()

    @usableFromInline
    enum Lifecycle {
        case new
        case running
        /// Between a failure and the rebuilt state (see `RestartStateMachine`, in `SupervisionState.restart`): user
        /// messages wait in the mailbox (the run parks), or during a back-off are stashed for
        /// the new state.
        case restarting
        /// The parent hears of `failure` as `childFailed` if `supervision.exit` is `escalated`.
        case stopping(failure: (any Error)?)
        case terminated
    }

    /// Inlinable, so that it is specialised where the actor is spawned (see
    /// `runSystemMessages`); what it reads from `props` and the system is computed out of line,
    /// once, by `CellSettings`.
    @inlinable
    init(
        system: ActorSystem,
        address: ActorAddress,
        parent: AnyTarget,
        behavior: sending Behavior<Message>,
        settings: CellSettings,
        specializedRunMailbox: @escaping (ActorCell<Message>) -> Bool
    ) {
        self.specializedRunMailbox = specializedRunMailbox
        options = settings.options
        poolReference = settings.pool
        runLength = settings.runLength
        stashCapacity = Int32(clamping: settings.stashCapacity)
        self.behavior = behavior
        self.parent = parent
        super.init(address: address, system: system, isActorCell: true, parent: parent)
        if let idleHook = settings.idleHook {
            // Before the cell is published.
            contextState().idleHook = idleHook
            flags.setHasIdleHook()
        }
    }

    /// The actor's context: a view of this cell, made where it is needed (it allocates nothing).
    @inlinable
    var context: ActorContext<Message> { ActorContext(cell: self) }

    /// Whether the actor has children that have not terminated.
    @inlinable
    final var hasChildren: Bool { !(contextStorage?.children.isEmpty ?? true) }

    /// The children that have not terminated, in start order.
    final var childrenInStartOrder: [AnyTarget] { contextStorage?.children.inStartOrder ?? [] }

    /// The context's state, created on first use. Mailbox run only (or before the cell is
    /// published).
    @usableFromInline
    final func contextState() -> ContextState<Message> {
        if let contextStorage { return contextStorage }
        let state = ContextState<Message>()
        contextStorage = state
        return state
    }

    deinit {
        if case .terminated = lifecycle {
            // The specialised `runMailbox` frees the queue (see `CellFlags.isReleasing`): the generic
            // `releaseAll` would look up the queue's type metadata several times.
            flags.setReleasing()
            _ = specializedRunMailbox(self)
        } else {
            mailboxHead.releaseAll(mailboxTail)
        }
        var node = systemMessages.load(ordering: .acquiring)
        while let current = node {
            let box = Unmanaged<SystemMessageNode>.fromOpaque(current).takeRetainedValue()
            node = box.next
        }
    }

    // MARK: Overrides of the target (declarations in extensions cannot override)

    @usableFromInline
    override func tell(_ message: Message) -> TellResult {
        tellCell(message)
    }

    override func send(_ message: Message) async throws {
        try await sendWaitingForRoom(message)
    }

    override func sendSystem(_ message: SystemMessage) {
        if case .start = message {
            flags.setStartRequested()
            activate()
        } else {
            pushSystemMessage(message)
        }
    }

    /// Every user message enqueued before this call has a position below the tail index read
    /// here (an enqueue takes its position before it returns).
    override func sendTerminatedAfterQueuedMessages(_ watched: AnyTarget, failure: (any Error)?) {
        pushSystemMessage(.terminatedAfter(watched, failure: failure, userIndex: mailboxTail.tailIndex.load(ordering: .sequentiallyConsistent)))
    }

    override var askScheduler: any DateScheduler { dateScheduler }

    @usableFromInline
    override var mailboxDepth: Int {
        // While restarting, messages may wait aside in the restart buffer, where `pending` no
        // longer counts them: the depth then reads at least 1.
        pending.load(ordering: .relaxed) + (flags.isRestarting ? 1 : 0)
    }

    @usableFromInline
    override var hasTerminated: Bool { isTerminated() }

    /// The job of an actor is one mailbox run (`runMailbox()`), here from a scheduler that keeps
    /// the cell alive through it. Only ever one at a time per actor (see the type's
    /// documentation).
    override func runJob() {
        _ = specializedRunMailbox(self)
    }

    /// One mailbox run from a pool worker; returns whether the worker must give back a retain.
    override func runJobOnWorker() -> Bool {
        specializedRunMailbox(self)
    }

    /// Whether a queued run of this cell holds a retain (read only while the run is queued).
    override var isRetainedByQueue: Bool { runIsRetained }
}
