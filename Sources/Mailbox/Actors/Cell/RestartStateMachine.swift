/// Where a restart comes from, and therefore what it rebuilds.
///
/// (Not nested in the generic cell or supervision state: non-generic types need no metadata
/// look-ups at run time.)
enum RestartSource: Equatable {
    /// The actor's rule at this index rebuilds its own behavior.
    case rule(Int)
    /// The guardian strategy rebuilds the spawn behavior.
    case guardian
    /// The managing `Supervisor` rebuilds the spawn behavior.
    case parent
    /// A one-for-one `Supervisor`'s child rebuilds its spawn behavior itself, the restart
    /// counted in the supervisor's shared window.
    case delegated
}

/// The restart of one actor, as a pure state machine: events in (named after what happened),
/// an action out for the cell to perform. It holds no reference to the actor and performs
/// nothing itself, so it is tested alone, every event in every state
/// (`RestartStateMachineTests`).
///
/// ```
///  idle ──restartDecided──────────────────────► stopping ──(children gone, back-off over)──► idle
///   │                                    ▲        │                                  (complete)
///   └──suspendedForSupervisor──► suspended         └──(children gone; a supervisor's stop order)──┐
///                 stopOrdered ──────────┘                                                         ▼
///  idle ◄──(complete)── startOrdered ◄──────────────────────────────────────────────── awaitingStart
///  any state ──stopped──► idle    (the actor stops instead; a back-off timer is cancelled)
/// ```
///
/// - A restart the actor's own rules (or the guardian strategy, or a one-for-one `Supervisor`'s
///   shared window) decided: `restartDecided` → run the stop half (pre-restart, timers, stash,
///   children) → wait for the children told to stop and for the back-off, if any → complete.
/// - A `Supervisor`'s child with no rule of its own: `suspendedForSupervisor` → the supervisor
///   orders `stopOrdered(thenStart: true)` (restart alone: stop half, children, complete) or
///   `stopOrdered(thenStart: false)` (stop half, children, acknowledge) and later `startOrdered`
///   (complete).
/// - A supervisor's stop order replaces a restart the actor had begun by its own rules (its
///   back-off timer is cancelled; the stop half, already run, is not run again).
///
/// Illegal transitions are runtime bugs, caught by `preconditionFailure` naming the state and
/// the event. Events that can legitimately arrive late (a back-off timer that fired after it was
/// replaced, a child terminating while nobody waits for it) do nothing.
///
/// Touched only inside the actor's mailbox run (it lives in the actor's `SupervisionState`).
struct RestartStateMachine {
    /// A back-off delay between the stop half and the rebuild.
    struct Backoff {
        /// Identifies the timer's `backoffElapsed` event (a replaced timer's event is stale).
        let generation: UInt64
        /// The timer that sends `backoffElapsed`; cancelled if the restart is replaced or the
        /// actor stops.
        let timer: (any Disposable)?
        /// Messages arriving meanwhile are kept for the new state up to this bound.
        let stashCapacity: Int
    }

    /// What follows once nothing more is awaited.
    enum Step: Equatable {
        /// Nothing yet: children or the back-off are still awaited.
        case wait
        /// Tell the supervisor that the stop it ordered is done, then wait for its start order.
        case acknowledgeStop
        /// Rebuild the state from what `source` restarts, then replay what was kept.
        case complete(RestartSource)
    }

    /// What the cell must do after an event.
    enum Action {
        /// Nothing.
        case none
        /// Suspend: user messages wait in the mailbox, timers are cancelled, the stash is kept
        /// for the new state, and the supervisor is told of the failure.
        case suspend
        /// Run the stop half of a restart (pre-restart, timers, stash; stop the children when
        /// `stopsChildren`), then `then`.
        case stopHalf(stopsChildren: Bool, then: Step)
        /// Cancel the back-off timer of a replaced restart, if any, then `then`.
        case replaceBackoff(cancelling: (any Disposable)?, then: Step)
        /// `then` (never `.wait`).
        case proceed(Step)
        /// Cancel the back-off timer of the restart the actor abandons by stopping.
        case cancelBackoff(any Disposable)
    }

    /// The restart in progress, if any.
    enum State {
        /// No restart in progress (the actor runs, or was never restarted).
        case idle
        /// A `Supervisor`'s child failed and waits for its supervisor's order; the stop half has
        /// not run.
        case suspended
        /// The stop half has run; waiting for the children told to stop and for the back-off.
        case stopping(Stopping)
        /// A `Supervisor`'s child stopped for the restart its supervisor ordered, and
        /// acknowledged it; waiting for the start order.
        case awaitingStart
    }

    /// The stop half has run; what is still awaited, and what then.
    struct Stopping {
        var source: RestartSource
        /// Children were told to stop and have not all terminated yet.
        var waitingForChildren: Bool
        /// The back-off not elapsed yet, if any.
        var backoff: Backoff?
        /// Messages arriving while restarting are kept up to this bound (a restart with
        /// back-off); `nil`: they wait in the mailbox.
        var stashCapacity: Int?
        /// After the children and the back-off: complete, or (a supervisor's stop order)
        /// acknowledge and wait for the start order.
        var thenAwaitsStartOrder: Bool

        /// The step once what is awaited now has happened.
        var next: Step {
            if waitingForChildren || backoff != nil { return .wait }
            return thenAwaitsStartOrder ? .acknowledgeStop : .complete(source)
        }
    }

    private(set) var state: State = .idle
    /// The last back-off generation handed out.
    private var backoffGenerations: UInt64 = 0

    /// Whether a restart is in progress.
    var isRestarting: Bool {
        if case .idle = state { return false }
        return true
    }

    /// The bound on user messages kept for the new state while restarting: set for a restart
    /// with back-off (messages are taken out of the mailbox and kept); `nil` otherwise (they
    /// wait in the mailbox, and the mailbox run parks).
    var stashCapacity: Int? {
        if case let .stopping(stopping) = state { return stopping.stashCapacity }
        return nil
    }

    /// A fresh generation for the back-off timer of the restart about to be decided.
    mutating func nextBackoffGeneration() -> UInt64 {
        backoffGenerations += 1
        return backoffGenerations
    }

    // MARK: Events

    /// The actor's own rules (or the guardian strategy, or a one-for-one supervisor's shared
    /// window) decided to restart it after a failure.
    mutating func restartDecided(source: RestartSource, stopsChildren: Bool, hasChildren: Bool, backoff: Backoff?) -> Action {
        guard case .idle = state else {
            preconditionFailure("restart state machine: restartDecided in state \(state)")
        }
        let stopping = Stopping(
            source: source, waitingForChildren: stopsChildren && hasChildren, backoff: backoff,
            stashCapacity: backoff?.stashCapacity, thenAwaitsStartOrder: false)
        return enter(stopping, .stopHalf(stopsChildren: stopsChildren, then: stopping.next))
    }

    /// A `Supervisor`'s child failed and no rule of its own decided: it waits for its supervisor.
    mutating func suspendedForSupervisor() -> Action {
        guard case .idle = state else {
            preconditionFailure("restart state machine: suspendedForSupervisor in state \(state)")
        }
        state = .suspended
        return .suspend
    }

    /// The supervisor ordered the stop half of a restart (`restartStop`), or a whole restart of
    /// this child alone (`restartNow`, `thenStart`).
    mutating func stopOrdered(thenStart: Bool, hasChildren: Bool) -> Action {
        switch state {
        case .idle, .suspended:
            // A running sibling in the restarted set, or the suspended child that failed.
            let stopping = Stopping(
                source: .parent, waitingForChildren: hasChildren, backoff: nil, stashCapacity: nil,
                thenAwaitsStartOrder: !thenStart)
            return enter(stopping, .stopHalf(stopsChildren: true, then: stopping.next))
        case let .stopping(current) where current.source != .parent:
            // The actor was restarting itself by its own rules: the supervisor's restart replaces
            // that one. Its stop half has run; its children may still be stopping.
            let stopping = Stopping(
                source: .parent, waitingForChildren: current.waitingForChildren, backoff: nil,
                stashCapacity: nil, thenAwaitsStartOrder: !thenStart)
            return enter(stopping, .replaceBackoff(cancelling: current.backoff?.timer, then: stopping.next))
        case .stopping, .awaitingStart:
            // A supervisor sends one order per child and waits for its answer before the next.
            preconditionFailure("restart state machine: stopOrdered(thenStart: \(thenStart)) in state \(state)")
        }
    }

    /// The supervisor ordered the start half of the restart it stopped (`restartStart`).
    mutating func startOrdered() -> Action {
        guard case .awaitingStart = state else {
            // The supervisor orders the start only after this actor acknowledged the stop.
            preconditionFailure("restart state machine: startOrdered in state \(state)")
        }
        state = .idle
        return .proceed(.complete(.parent))
    }

    /// A child terminated while restarting; `allChildrenGone` when it was the last one.
    mutating func childTerminated(allChildrenGone: Bool) -> Action {
        guard case var .stopping(stopping) = state, stopping.waitingForChildren, allChildrenGone else {
            // Nobody waits for it: children of a suspended actor, or one that was not told to stop.
            return .none
        }
        stopping.waitingForChildren = false
        return enter(stopping, nil)
    }

    /// The back-off timer of generation `generation` fired.
    mutating func backoffElapsed(generation: UInt64) -> Action {
        guard case var .stopping(stopping) = state, stopping.backoff?.generation == generation else {
            // Stale: the restart it belonged to was replaced or abandoned.
            return .none
        }
        stopping.backoff = nil
        return enter(stopping, nil)
    }

    /// The actor stops (it was stopped, or escalated) instead of completing the restart.
    mutating func stopped() -> Action {
        let timer: (any Disposable)?
        if case let .stopping(stopping) = state { timer = stopping.backoff?.timer } else { timer = nil }
        state = .idle
        return timer.map { .cancelBackoff($0) } ?? .none
    }

    // MARK: Transitions

    /// Moves to `stopping`, or past it when nothing is awaited, and returns `action` (or, with
    /// `nil`, the step that follows).
    private mutating func enter(_ stopping: Stopping, _ action: Action?) -> Action {
        let next = stopping.next
        switch next {
        case .wait: state = .stopping(stopping)
        case .acknowledgeStop: state = .awaitingStart
        case .complete: state = .idle
        }
        if let action { return action }
        return next == .wait ? .none : .proceed(next)
    }
}
