import Dispatch
import Foundation

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
    /// - Precondition: `interval` is at least one nanosecond (a zero interval would fire
    ///   without end at one instant); every scheduler here traps otherwise. An actor's timers
    ///   check their interval first and fail the actor instead (`ActorSystemError` code
    ///   `.invalidTimer`).
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
