/// The system messages actors exchange: handled before user messages, never dropped, never
/// counted against a mailbox's capacity.
@usableFromInline
enum SystemMessage {
    /// Run `setup` and start handling messages.
    case start
    /// Stop: children first, then post-stop, then tell watchers.
    case stop
    /// `watcher` wants `terminated` when this actor terminates.
    case watch(AnyTarget)
    /// `watcher` no longer wants `terminated`.
    case unwatch(AnyTarget)
    /// A watched actor terminated (with the failure that stopped it, if any).
    case terminated(AnyTarget, failure: (any Error)?)
    /// As `terminated`, handled only once the user messages enqueued before it (positions
    /// below `userIndex` of the mailbox) have been taken: Erlang's order, for a remote actor
    /// whose last messages reached this mailbox before its termination did.
    case terminatedAfter(AnyTarget, failure: (any Error)?, userIndex: Int)
    /// A child terminated (with the failure that stopped it, if any, and how it ended, see
    /// `ChildExit`): remove it, and finish stopping or restarting if this actor was waiting
    /// for it.
    case childTerminated(AnyTarget, failure: (any Error)?, exit: ChildExit)
    /// A message adapter's function threw converting `message`: a failure of this actor.
    case adapterFailed(any Error, message: any Sendable)
    /// A restart's back-off delay has passed (for the restart with this generation).
    case backoffElapsed(generation: UInt64)
    /// To a `Supervisor`: its child failed and waits, suspended, for a decision.
    case childFailed(AnyTarget, error: any Error)
    /// From a `Supervisor` to its child: first half of a restart; stop the children, run
    /// `preRestart`, then answer `restartStepDone`.
    case restartStop
    /// From a `Supervisor` to its child: second half of a restart; rebuild the state from the
    /// spawn behavior, then answer `restartStepDone`.
    case restartStart
    /// From a `Supervisor` to a child it restarts alone: both halves, one answer.
    case restartNow
    /// To a `Supervisor`: a child finished a `restartStop` or `restartStart` (or its first
    /// start), with the error its `setup` threw, if it threw (its failure follows).
    case restartStepDone(AnyTarget, setupFailure: (any Error)?)
    /// From a `Supervisor` to itself: it exceeded its restart intensity; shut down (see
    /// `ActorCell.shutDownAfterExceedingIntensity`).
    case intensityExceeded(SupervisorIntensityError)
}

/// How a child ended, as its parent hears of it (with `childTerminated`).
@usableFromInline
enum ChildExit {
    /// It stopped: by itself, from outside, or failed and stopped by its supervision.
    case stopped
    /// Its supervision escalated its failure: the parent receives `childFailed`.
    case escalated
    /// A `Supervisor` that exceeded its restart intensity: OTP's `shutdown` exit, which a
    /// parent `Supervisor` treats as normal for a transient child.
    case shutdown
}
