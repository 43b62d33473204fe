import Synchronization

/// The flags of an actor cell, in one atomic byte that senders share with the mailbox run.
///
/// Each flag is read and written only through the accessors below, and each accessor chooses
/// its memory ordering here, once, with the reason beside it:
///
/// | Flag | Set | Cleared | Read | Ordering |
/// |---|---|---|---|---|
/// | `terminated` | `finishTermination` | never | senders (`tell`, `send`, `scheduleRun`) | release / acquire |
/// | `parked` | `park()` (the run) | `unpark()` (whoever wins) | `pushSystemMessage` | sequentially consistent |
/// | `timerMessage` | `tellTimer` | `takeTimerMark` | the run | set and cleared sequentially consistent under the `TimerMarks` lock; read relaxed |
/// | `usageError` | a context mutator | the run | the run | relaxed (one thread) |
/// | `restarting` | `lifecycle` becomes `.restarting` | `lifecycle` leaves it | `mailboxDepth` (any thread) | relaxed (a hint) |
/// | `idleHook` | `init` | never | the run | relaxed (before publication) |
/// | `releasing` | `deinit` | never | the last call of the run | relaxed (one thread) |
/// | `startRequested` | `sendSystem(.start)` | the first run | the run | relaxed (handed over by `pending`) |
///
/// (An `OptionSet` of names over an `Atomic<UInt8>`. Code outside this type uses the named
/// accessors only.)
@usableFromInline
struct CellFlags: ~Copyable {
    /// The bits of the byte.
    @usableFromInline
    struct Flag: OptionSet, Sendable {
        @usableFromInline
        let rawValue: UInt8

        @inlinable
        init(rawValue: UInt8) { self.rawValue = rawValue }

        @inlinable static var terminated: Flag { Flag(rawValue: 1) }
        @inlinable static var parked: Flag { Flag(rawValue: 2) }
        @inlinable static var timerMessage: Flag { Flag(rawValue: 4) }
        @inlinable static var usageError: Flag { Flag(rawValue: 8) }
        @inlinable static var restarting: Flag { Flag(rawValue: 16) }
        @inlinable static var idleHook: Flag { Flag(rawValue: 32) }
        @inlinable static var releasing: Flag { Flag(rawValue: 64) }
        @inlinable static var startRequested: Flag { Flag(rawValue: 128) }
    }

    @usableFromInline
    let byte = Atomic<UInt8>(0)

    @inlinable
    init() {}

    // The operations the accessors below choose from. (An atomic operation's ordering must be
    // a constant where it is called: one helper per ordering.)

    @inlinable
    func loadRelaxed(_ flag: Flag) -> Bool { byte.load(ordering: .relaxed) & flag.rawValue != 0 }

    @inlinable
    func insertRelaxed(_ flag: Flag) { byte.bitwiseOr(flag.rawValue, ordering: .relaxed) }

    @inlinable
    func removeRelaxed(_ flag: Flag) { byte.bitwiseAnd(~flag.rawValue, ordering: .relaxed) }

    @inlinable
    func loadSequentiallyConsistent(_ flag: Flag) -> Bool {
        byte.load(ordering: .sequentiallyConsistent) & flag.rawValue != 0
    }

    @inlinable
    func insertSequentiallyConsistent(_ flag: Flag) { byte.bitwiseOr(flag.rawValue, ordering: .sequentiallyConsistent) }

    /// Whether this call cleared the flag.
    @inlinable
    @discardableResult
    func removeSequentiallyConsistent(_ flag: Flag) -> Bool {
        byte.bitwiseAnd(~flag.rawValue, ordering: .sequentiallyConsistent).oldValue & flag.rawValue != 0
    }

    // MARK: terminated

    /// Whether the actor has terminated (set once, never cleared): senders then dead-letter
    /// directly. Acquiring, paired with `setTerminated`'s release: a sender that sees the flag
    /// sees what the run wrote before. (A sender waiting for room reads it after registering
    /// under the `RoomWaiters` lock, which `recipientTerminated` takes after the flag is set:
    /// the lock orders that pair, so acquiring is enough there too.)
    @inlinable
    var isTerminated: Bool { byte.load(ordering: .acquiring) & Flag.terminated.rawValue != 0 }

    /// Sets `isTerminated`, releasing what the run wrote before.
    @inlinable
    func setTerminated() { byte.bitwiseOr(Flag.terminated.rawValue, ordering: .releasing) }

    // MARK: parked

    // Every access is sequentially consistent: the store-buffer pattern of `park()` (set, then
    // look for a system message) and `pushSystemMessage` (push, then look for the flag): either
    // the parking run sees the new system message or its sender sees the flag.

    /// Whether a run ended leaving user messages queued, waiting for a system message.
    @inlinable
    var isParked: Bool { loadSequentiallyConsistent(.parked) }

    @inlinable
    func setParked() { insertSequentiallyConsistent(.parked) }

    /// Clears the flag; whether this call cleared it (and so must schedule the run).
    @inlinable
    func clearParked() -> Bool { removeSequentiallyConsistent(.parked) }

    // MARK: timerMessage

    /// Whether a timer's message may be queued (see `TimerMarks`). Relaxed: set before the
    /// message's enqueue (whose slot store releases it), so the run that dequeued the message
    /// sees it; a stale `true` only costs a look-up under the `TimerMarks` lock.
    @inlinable
    var mayHoldTimerMessage: Bool { loadRelaxed(.timerMessage) }

    /// Set and cleared under the `TimerMarks` lock (which alone orders the two), sequentially
    /// consistent.
    @inlinable
    func setTimerMessageQueued() { insertSequentiallyConsistent(.timerMessage) }

    @inlinable
    func clearTimerMessageQueued() { removeSequentiallyConsistent(.timerMessage) }

    // MARK: usageError

    // Relaxed: set by a context mutator inside the handler, read and cleared by the run once the
    // handler returns, all on the run's thread.

    /// Whether the handler that is running misused its context (see
    /// `ActorContext.recordUsageError`): it fails once it returns.
    @inlinable
    var hasUsageError: Bool { loadRelaxed(.usageError) }

    @inlinable
    func setUsageError() { insertRelaxed(.usageError) }

    @inlinable
    func clearUsageError() { removeRelaxed(.usageError) }

    // MARK: restarting

    /// Whether the actor is restarting: `lifecycle == .restarting`, copied here (only by
    /// `lifecycle`'s observer) for `mailboxDepth`, which routers read from any thread while
    /// `lifecycle` belongs to the mailbox run. Relaxed: a hint for load balancing.
    @inlinable
    var isRestarting: Bool { loadRelaxed(.restarting) }

    @inlinable
    func setRestarting(_ restarting: Bool) {
        if restarting {
            insertRelaxed(.restarting)
        } else {
            removeRelaxed(.restarting)
        }
    }

    // MARK: idleHook

    /// Whether the actor has an idle hook (`Props.idleHook`): the end of a run looks for the
    /// hook only then. Set before the cell is published, never cleared: relaxed.
    @inlinable
    var hasIdleHook: Bool { loadRelaxed(.idleHook) }

    @inlinable
    func setHasIdleHook() { insertRelaxed(.idleHook) }

    // MARK: releasing

    /// Set by `deinit` of a terminated actor before it calls the mailbox run one last time:
    /// that call frees the mailbox's memory, in code specialised for `Message`, instead of
    /// running. Relaxed: one thread, nothing else can reach the cell.
    @inlinable
    var isReleasing: Bool { loadRelaxed(.releasing) }

    @inlinable
    func setReleasing() { insertRelaxed(.releasing) }

    // MARK: startRequested

    // Relaxed: set by the spawning thread before it activates the actor, whose `pending`
    // increment (acquire-release) hands it to the run with the rest.

    /// Set by `sendSystem(.start)` (once, at spawn), cleared by the first run, which handles
    /// the start before any other system message: the start needs no message node. A stop
    /// that overtook it (a spawn racing a shutdown) leaves it to `drainAfterTermination`.
    @inlinable
    var isStartRequested: Bool { loadRelaxed(.startRequested) }

    @inlinable
    func setStartRequested() { insertRelaxed(.startRequested) }

    @inlinable
    func clearStartRequested() { removeRelaxed(.startRequested) }
}
