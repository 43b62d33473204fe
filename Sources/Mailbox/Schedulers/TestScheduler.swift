import Dispatch
import Foundation

/// A scheduler on virtual time, for deterministic tests of anything that runs on a scheduler:
/// streams, timers, time-outs, back-off, and whole actor systems.
///
/// Nothing runs until the test moves the clock with `advance()`, `advance(by:)`,
/// `advance(to:)` or `run()`. Then every action due by the new time runs, on the calling thread,
/// earliest first:
///
/// 1. Actions due at the same instant run in the order they were scheduled.
/// 2. An action scheduled while advancing runs in the same advance if it is due by its end.
/// 3. `currentDate` is, while an action runs, the instant that action was due; after the
///    advance, the advance's target.
/// 4. A disposed (cancelled) action never runs; a repeating action stops once disposed.
///
/// Virtual time is counted in whole nanoseconds from `startDate`, so durations add up exactly
/// and runs are reproducible. A `Date` given to `schedule(after:)` or `advance(to:)` becomes the
/// first whole nanosecond whose `currentDate` is not before it, so an action never sees a
/// `currentDate` earlier than the date it was scheduled at.
///
/// ```
/// let scheduler = TestScheduler()
/// scheduler.schedule(after: .seconds(2)) { print("two") }
/// scheduler.advance(by: .seconds(1))   // nothing yet
/// scheduler.advance(by: .seconds(1))   // prints "two"
/// ```
///
/// Thread-safety: actions may be scheduled from any thread. Advancing is the test's job: one
/// advance at a time, and never from inside an action this scheduler is running (that is a
/// precondition failure).
///
/// What keeps what alive: the scheduler retains each action, with everything it captures, until
/// it has run (a repeating action: until it is disposed). Disposing releases the action at once,
/// not when the clock reaches its date; only a small cancelled entry waits in the queue until
/// then (it still counts in `pendingActionCount`). The returned disposables do not retain the
/// scheduler.
public final class TestScheduler: DateScheduler {
    private struct Entry: Comparable {
        /// When the action is due, in nanoseconds since `startDate`.
        var due: Int64
        /// Breaks ties: lower runs first (scheduling order).
        var sequence: UInt64
        /// For repeating actions, the period in nanoseconds.
        let interval: Int64?
        /// The action, and the disposable that cancels it (shared by a repeating action's runs).
        let action: PendingAction

        /// Runs before: earlier due, then earlier scheduled.
        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.due != rhs.due ? lhs.due < rhs.due : lhs.sequence < rhs.sequence
        }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.due == rhs.due && lhs.sequence == rhs.sequence
        }
    }

    private struct State {
        var now: Int64 = 0
        var nextSequence: UInt64 = 0
        var isAdvancing = false
        var queue = MinHeap<Entry>()

        mutating func insert(due: Int64, interval: Int64?, action: @escaping @Sendable () -> Void) -> PendingAction {
            let scheduled = PendingAction(action)
            queue.insert(Entry(due: max(due, now), sequence: nextSequence, interval: interval, action: scheduled))
            nextSequence += 1
            return scheduled
        }
    }

    /// Protected by its lock; never held while an action runs.
    private let state: LockedValueBox<State>

    /// The virtual time at which the scheduler was created.
    public let startDate: Date

    /// Creates a scheduler whose virtual clock starts at `startDate`.
    public init(startDate: Date = Date(timeIntervalSinceReferenceDate: 0)) {
        self.startDate = startDate
        self.state = LockedValueBox(State())
    }

    /// The current virtual time.
    public var currentDate: Date {
        date(atNanoseconds: state.withLockedValue { $0.now })
    }

    /// Virtual time elapsed since `startDate`.
    public var elapsed: Duration {
        .nanoseconds(state.withLockedValue { $0.now })
    }

    /// The number of actions waiting to run, including cancelled ones not yet discarded and
    /// each repeating action once.
    public var pendingActionCount: Int {
        state.withLockedValue { $0.queue.count }
    }

    /// Virtual time from `startDate` at which the earliest waiting action is due (possibly a
    /// cancelled one not yet discarded), or `nil` when nothing waits. For the test kit's probes,
    /// which advance to the next action instead of jumping to a deadline.
    package var nextActionElapsed: Duration? {
        state.withLockedValue { $0.queue.first.map { .nanoseconds($0.due) } }
    }

    /// Schedules `action` at the current virtual instant; it runs on the next advance (or in the
    /// current one, after the actions already due, if scheduled from an action).
    ///
    /// - Returns: A disposable that cancels the action and releases it at once.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        state.withLockedValue { $0.insert(due: $0.now, interval: nil, action: action) }
    }

    /// Schedules `action` at the first virtual nanosecond not before `date` (or now, if `date`
    /// has passed).
    ///
    /// - Returns: A disposable that cancels the action and releases it at once.
    @discardableResult
    public func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let due = nanoseconds(at: date)
        return state.withLockedValue { $0.insert(due: due, interval: nil, action: action) }
    }

    /// Schedules `action` exactly `delay` after the current virtual instant, counted in whole
    /// nanoseconds (no round trip through `Date`).
    ///
    /// - Returns: A disposable that cancels the action and releases it at once.
    @discardableResult
    public func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        state.withLockedValue { state in
            state.insert(due: Self.adding(state.now, delay.nanoseconds), interval: nil, action: action)
        }
    }

    /// Schedules `action` first at the first virtual nanosecond not before `date`, then exactly
    /// every `interval`. `leeway` is ignored: virtual time is never late.
    ///
    /// - Returns: A disposable that stops the repetition and releases `action` at once.
    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        let period = interval.nanoseconds
        precondition(period > 0, "a repeating interval must be positive, not \(interval)")
        let due = nanoseconds(at: date)
        return state.withLockedValue { $0.insert(due: due, interval: period, action: action) }
    }

    /// Advances the clock by one nanosecond, running everything due by then.
    public func advance() {
        advance(by: .nanoseconds(1))
    }

    /// Advances the clock by `interval`, running everything due by the new time.
    public func advance(by interval: DispatchTimeInterval) {
        advance(toNanoseconds: Self.adding(state.withLockedValue { $0.now }, interval.nanoseconds))
    }

    /// Advances the clock by `interval` seconds, running everything due by the new time.
    public func advance(by interval: TimeInterval) {
        advance(toNanoseconds: Self.adding(state.withLockedValue { $0.now }, TimeConversion.nanoseconds(interval)))
    }

    /// Advances the clock by `duration`, running everything due by the new time.
    @_disfavoredOverload
    public func advance(by duration: Duration) {
        advance(toNanoseconds: Self.adding(state.withLockedValue { $0.now }, duration.nanoseconds))
    }

    /// Advances the clock to `date`, running everything due by then.
    ///
    /// - Precondition: `date` is not earlier than `currentDate`.
    public func advance(to date: Date) {
        advance(toNanoseconds: nanoseconds(at: date))
    }

    /// Runs every scheduled action, advancing the clock as far as virtual time goes: to
    /// `startDate` plus `Int64.max` nanoseconds (about 292 years), where `currentDate` is left.
    ///
    /// That is the end of virtual time (ReactiveSwift's `run()` goes to `Date.distantFuture`;
    /// here a date beyond the end is scheduled at the end, so it still runs). A repeating action
    /// that is never disposed keeps this running for a very long time: dispose repeating
    /// actions first, or advance by a bounded amount instead.
    public func run() {
        advance(toNanoseconds: .max)
    }

    private func advance(toNanoseconds target: Int64) {
        state.withLockedValue { state in
            precondition(!state.isAdvancing, "TestScheduler advanced from inside one of its own actions, or from two threads at once")
            precondition(target >= state.now, "TestScheduler cannot move back in time (from \(state.now) ns to \(target) ns)")
            state.isAdvancing = true
        }
        while let action = nextDueAction(by: target) {
            action()
        }
        state.withLockedValue { state in
            state.now = target
            state.isAdvancing = false
        }
    }

    /// Takes the earliest action due by `target`, moves the clock to its instant and re-queues
    /// it if it repeats. Cancelled actions are discarded on the way.
    private func nextDueAction(by target: Int64) -> (@Sendable () -> Void)? {
        state.withLockedValue { state in
            while let first = state.queue.first, first.due <= target {
                var entry = state.queue.removeFirst()
                // A one-shot action is taken out of its box, so it is released once it has run.
                guard let action = entry.interval != nil ? entry.action.peek() : entry.action.take() else { continue }
                state.now = entry.due
                if let interval = entry.interval {
                    entry.due = Self.adding(entry.due, interval)
                    entry.sequence = state.nextSequence
                    state.nextSequence += 1
                    state.queue.insert(entry)
                }
                return action
            }
            return nil
        }
    }

    /// The earliest virtual instant, in nanoseconds since `startDate`, whose `currentDate` is
    /// not before `date`.
    ///
    /// Plain rounding is not enough: `date` may lie between two whole nanoseconds, and far from
    /// `startDate` a `Date` cannot represent every nanosecond, so the rounded instant could read
    /// back one step *before* `date` and an action would see a `currentDate` earlier than the
    /// date it was scheduled at. The loops step to the first instant at or after `date` (a few
    /// hundred steps at most for present-day dates, where a `Date` resolves about 100 ns).
    private func nanoseconds(at date: Date) -> Int64 {
        var nanoseconds = TimeConversion.nanoseconds(date.timeIntervalSince(startDate))
        while nanoseconds < .max, self.date(atNanoseconds: nanoseconds) < date {
            nanoseconds += 1
        }
        while nanoseconds > .min, self.date(atNanoseconds: nanoseconds - 1) >= date {
            nanoseconds -= 1
        }
        return nanoseconds
    }

    /// The `currentDate` at `nanoseconds` since `startDate`.
    private func date(atNanoseconds nanoseconds: Int64) -> Date {
        startDate.addingTimeInterval(Double(nanoseconds) / 1e9)
    }

    private static func adding(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? (rhs > 0 ? .max : .min) : sum
    }
}

extension TestScheduler {
    /// Moves the virtual clock back by `interval`, as if the device's clock had been changed.
    /// Actions already scheduled keep their instants (they run when the clock reaches them
    /// again).
    ///
    /// - Precondition: not called while the scheduler is advancing; `interval` is not negative
    ///   and does not move the clock before `startDate`.
    public func rewind(by interval: DispatchTimeInterval) {
        let nanoseconds = interval.nanoseconds
        state.withLockedValue { state in
            precondition(!state.isAdvancing, "TestScheduler rewound while advancing")
            precondition(nanoseconds >= 0 && nanoseconds <= state.now, "TestScheduler cannot rewind by \(interval) from \(state.now) ns")
            state.now -= nanoseconds
        }
    }
}
