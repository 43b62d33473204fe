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

/// A scheduler that can also run actions at a point in time, once or repeatedly.
///
/// Time is the scheduler's own: wall-clock time for `QueueScheduler` and
/// `OperationQueueScheduler`, virtual time for `TestScheduler`. Code that reads the time from
/// `currentDate` and schedules through these methods runs unchanged on virtual time.
///
/// Contract, in addition to `Scheduler`'s: a timed action never runs before its date, and the
/// first run of a repeating action never runs before its start date either.
///
/// What keeps what alive: a timed action is retained until it runs or is cancelled; a repeating
/// action, with everything it captures, until its disposable is disposed. Dispose every
/// repeating action you start: one that is never disposed may stay retained, and keep running,
/// for as long as the scheduler's timer exists.
public protocol DateScheduler: Scheduler {
    /// The scheduler's notion of now.
    var currentDate: Date { get }

    /// Schedules `action` to run at or after `date`.
    ///
    /// - Returns: A disposable that cancels the action if it has not started.
    @discardableResult
    func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)?

    /// Schedules `action` to run first at `date`, then every `interval`, until the returned
    /// disposable is disposed.
    ///
    /// - Parameters:
    ///   - leeway: How late each run may be, giving the system room to coalesce wake-ups.
    /// - Returns: A disposable that stops the repetition.
    @discardableResult
    func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)?

    /// Schedules `action` to run once `delay` has passed on this scheduler's clock.
    ///
    /// The default implementation schedules at `currentDate + delay`; `TestScheduler` counts
    /// the delay exactly, in nanoseconds of virtual time.
    @discardableResult
    func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> (any Disposable)?
}

extension DateScheduler {
    /// Schedules `action` at `currentDate + delay`: wall-clock schedulers read the clock once,
    /// now, so the action runs no earlier than `delay` from this call.
    @discardableResult
    public func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        schedule(after: currentDate.addingTimeInterval(delay.timeInterval), action: action)
    }

    /// Schedules a repeating action with a leeway of 10% of `interval`.
    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        schedule(after: date, interval: interval, leeway: interval * 0.1, action: action)
    }

    /// Schedules a repeating action, with the interval and leeway in seconds.
    @discardableResult
    public func schedule(
        after date: Date,
        interval: TimeInterval,
        leeway: TimeInterval = 0,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        schedule(
            after: date,
            interval: .nanoseconds(Int(clamping: TimeConversion.nanoseconds(interval))),
            leeway: .nanoseconds(Int(clamping: TimeConversion.nanoseconds(leeway))),
            action: action
        )
    }

    /// Schedules a repeating action, with the interval and leeway as `Duration`s.
    @_disfavoredOverload
    @discardableResult
    public func schedule(
        after date: Date,
        interval: Duration,
        leeway: Duration = .zero,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        schedule(
            after: date,
            interval: .nanoseconds(Int(clamping: interval.nanoseconds)),
            leeway: .nanoseconds(Int(clamping: leeway.nanoseconds)),
            action: action
        )
    }

    /// Schedules a repeating action that runs first after `delay`, then every `interval`.
    @discardableResult
    public func schedule(
        after delay: Duration,
        interval: Duration,
        leeway: Duration = .zero,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        schedule(after: currentDate.addingTimeInterval(delay.timeInterval), interval: interval, leeway: leeway, action: action)
    }
}
