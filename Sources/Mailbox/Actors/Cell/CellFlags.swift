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
/// (An `OptionSet` of names over an `Atomic<UInt8>`. The ordering of an atomic operation must
/// be a constant where it is called, so each accessor spells out its own operation.)
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
    var isParked: Bool { byte.load(ordering: .sequentiallyConsistent) & Flag.parked.rawValue != 0 }

    @inlinable
    func setParked() { byte.bitwiseOr(Flag.parked.rawValue, ordering: .sequentiallyConsistent) }

    /// Clears the flag; whether this call cleared it (and so must schedule the run).
    @inlinable
    func clearParked() -> Bool {
        byte.bitwiseAnd(~Flag.parked.rawValue, ordering: .sequentiallyConsistent).oldValue & Flag.parked.rawValue != 0
    }

    // MARK: timerMessage

    /// Whether a timer's message may be queued (see `TimerMarks`). Relaxed: set before the
    /// message's enqueue (whose slot store releases it), so the run that dequeued the message
    /// sees it; a stale `true` only costs a look-up under the `TimerMarks` lock.
    @inlinable
    var mayHoldTimerMessage: Bool { byte.load(ordering: .relaxed) & Flag.timerMessage.rawValue != 0 }

    /// Set and cleared under the `TimerMarks` lock (which alone orders the two), sequentially
    /// consistent.
    @inlinable
    func setTimerMessageQueued() { byte.bitwiseOr(Flag.timerMessage.rawValue, ordering: .sequentiallyConsistent) }

    @inlinable
    func clearTimerMessageQueued() { byte.bitwiseAnd(~Flag.timerMessage.rawValue, ordering: .sequentiallyConsistent) }

    // MARK: usageError

    // Relaxed: set by a context mutator inside the handler, read and cleared by the run once the
    // handler returns, all on the run's thread.

    /// Whether the handler that is running misused its context (see
    /// `ActorContext.recordUsageError`): it fails once it returns.
    @inlinable
    var hasUsageError: Bool { byte.load(ordering: .relaxed) & Flag.usageError.rawValue != 0 }

    @inlinable
    func setUsageError() { byte.bitwiseOr(Flag.usageError.rawValue, ordering: .relaxed) }

    @inlinable
    func clearUsageError() { byte.bitwiseAnd(~Flag.usageError.rawValue, ordering: .relaxed) }

    // MARK: restarting

    /// Whether the actor is restarting: `lifecycle == .restarting`, copied here (only by
    /// `lifecycle`'s observer) for `mailboxDepth`, which routers read from any thread while
    /// `lifecycle` belongs to the mailbox run. Relaxed: a hint for load balancing.
    @inlinable
    var isRestarting: Bool { byte.load(ordering: .relaxed) & Flag.restarting.rawValue != 0 }

    @inlinable
    func setRestarting(_ restarting: Bool) {
        if restarting {
            byte.bitwiseOr(Flag.restarting.rawValue, ordering: .relaxed)
        } else {
            byte.bitwiseAnd(~Flag.restarting.rawValue, ordering: .relaxed)
        }
    }

    // MARK: idleHook

    /// Whether the actor has an idle hook (`Props.idleHook`): the end of a run looks for the
    /// hook only then. Set before the cell is published, never cleared: relaxed.
    @inlinable
    var hasIdleHook: Bool { byte.load(ordering: .relaxed) & Flag.idleHook.rawValue != 0 }

    @inlinable
    func setHasIdleHook() { byte.bitwiseOr(Flag.idleHook.rawValue, ordering: .relaxed) }

    // MARK: releasing

    /// Set by `deinit` of a terminated actor before it calls the mailbox run one last time:
    /// that call frees the mailbox's memory, in code specialised for `Message`, instead of
    /// running. Relaxed: one thread, nothing else can reach the cell.
    @inlinable
    var isReleasing: Bool { byte.load(ordering: .relaxed) & Flag.releasing.rawValue != 0 }

    @inlinable
    func setReleasing() { byte.bitwiseOr(Flag.releasing.rawValue, ordering: .relaxed) }

    // MARK: startRequested

    // Relaxed: set by the spawning thread before it activates the actor, whose `pending`
    // increment (acquire-release) hands it to the run with the rest.

    /// Set by `sendSystem(.start)` (once, at spawn), cleared by the first run, which handles
    /// the start before any other system message: the start needs no message node. A stop
    /// that overtook it (a spawn racing a shutdown) leaves it to `drainAfterTermination`.
    @inlinable
    var isStartRequested: Bool { byte.load(ordering: .relaxed) & Flag.startRequested.rawValue != 0 }

    @inlinable
    func setStartRequested() { byte.bitwiseOr(Flag.startRequested.rawValue, ordering: .relaxed) }

    @inlinable
    func clearStartRequested() { byte.bitwiseAnd(~Flag.startRequested.rawValue, ordering: .relaxed) }
}
