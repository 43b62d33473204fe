import Dispatch
import Foundation

/// Runs actions: the one execution abstraction shared by actors (mailbox runs), streams (event
/// delivery), timers and time-outs.
///
/// Contract for every conforming type in Mailbox:
/// 1. An action scheduled is run exactly once, or never if the returned disposable is disposed
///    before it starts.
/// 2. A scheduler runs one action at a time, in the order scheduled, unless its documentation
///    says otherwise.
/// 3. Scheduling never blocks on the actions already scheduled.
///
/// The documented exceptions:
/// - `OperationQueueScheduler` with a width above 1 runs up to that many actions at once; they
///   start in scheduling order but may finish in any order.
/// - `PoolScheduler` runs actions in parallel, one per worker thread, and orders only what one
///   worker takes from one queue; and after `shutdown()` it releases scheduled work without
///   running it (an exception to rule 1).
/// - `ImmediateScheduler` runs each action on its caller's thread, so callers on several
///   threads run theirs at the same time.
///
/// Thread-safety: `schedule(_:)` may be called from any thread.
///
/// What keeps what alive: a scheduled action, with everything it captures, is retained by the
/// scheduler (or the queue behind it) until it has run or, once cancelled, until the scheduler
/// lets go of it: at once or when its turn comes, as each type documents. The returned
/// disposable is for cancelling: keep the scheduler itself referenced for as long as its
/// actions should run.
public protocol Scheduler: AnyObject, Sendable {
    /// Enqueues `action` to run on this scheduler.
    ///
    /// - Returns: A disposable that cancels the action if it has not started, or `nil` if the
    ///   action cannot be cancelled (for example because it has already run).
    @discardableResult
    func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)?
}
