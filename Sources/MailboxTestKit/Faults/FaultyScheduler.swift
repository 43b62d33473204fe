import Dispatch
import Foundation
import Mailbox

/// A `DateScheduler` that forwards to another one — usually a `TestScheduler` — and delays or
/// stalls actions as a `FaultPlan` says: a slow or stuck executor, on demand and replayable.
///
/// Each one-shot action scheduled (`schedule(_:)`, `schedule(after:)`) is a *hit* of the point
/// `point` (`FaultPlan.scheduler` by default), counted by `injector`:
/// - a `.delay(d)` rule that fires makes that action run `d` later than asked;
/// - a `.stall(d)` rule that fires starts a *stall*: that action and every action scheduled in
///   the next `d` (of the wrapped scheduler's time) are held back and released together when
///   the stall ends. `stall(for:)` starts one by hand.
///
/// ```
/// time       ─0────────────1s────────────▶
/// stall(for: 1s) at 0: actions a, b, c scheduled in [0, 1s) all run at 1s, in order a, b, c;
///                      an action scheduled at 1s or later is not held and runs after them.
/// ```
///
/// Order: actions forwarded undelayed keep the wrapped scheduler's order (FIFO for a
/// `TestScheduler` or `QueueScheduler`); held-back actions released at one instant keep their
/// scheduling order among themselves and run before anything scheduled at or after that
/// instant, on a `TestScheduler`. A delayed action is overtaken by later undelayed ones — that
/// is the fault. Repeating actions are forwarded unchanged.
///
/// Use it as an actor system's scheduler: `ActorSystem.Configuration(scheduler: faulty)`; a
/// `TestProbe` drives the `TestScheduler` inside.
///
/// Thread-safety: every member may be used from any thread. Decisions are taken under a lock;
/// the lock is not held while forwarding, so a wrapped `ImmediateScheduler` may re-enter.
public final class FaultyScheduler: DateScheduler {
    /// The scheduler actions are forwarded to.
    public let base: any DateScheduler
    /// The point each scheduled action counts as a hit of.
    public let point: String
    /// Counts hits and records the faults fired (one per delayed action or started stall).
    public let injector: FaultInjector

    private struct State {
        /// When the current stall ends, if one is on.
        var stallEnd: Date?
        var forwarded = 0
        var delayed = 0
        var heldBack = 0
    }

    /// Protected by its lock.
    private let state = LockedValueBox(State())

    /// Wraps `base`, applying `plan`'s rules for `point`.
    public init(wrapping base: any DateScheduler, plan: FaultPlan = FaultPlan(), point: String = FaultPlan.scheduler) {
        self.base = base
        self.point = point
        self.injector = FaultInjector(plan: plan)
    }

    /// The wrapped scheduler's time.
    public var currentDate: Date { base.currentDate }

    /// Actions forwarded without delay so far.
    public var forwardedCount: Int { state.withLockedValue { $0.forwarded } }
    /// Actions delayed by a `.delay` rule so far.
    public var delayedCount: Int { state.withLockedValue { $0.delayed } }
    /// Actions held back by a stall so far.
    public var heldBackCount: Int { state.withLockedValue { $0.heldBack } }

    /// Stalls the scheduler from now for `duration` of the wrapped scheduler's time: every
    /// action scheduled until then is held back and released, in order, when it ends. A stall
    /// already on is extended if this one ends later.
    public func stall(for duration: Duration) {
        precondition(duration >= .zero, "a stall cannot be negative (\(duration))")
        let end = base.currentDate.addingTimeInterval(Double(duration.nanosecondsValue) / 1e9)
        state.withLockedValue { $0.stallEnd = max($0.stallEnd ?? end, end) }
    }

    /// Whether a stall is on now.
    public var isStalled: Bool {
        let now = base.currentDate
        return state.withLockedValue { state in state.stallEnd.map { now < $0 } ?? false }
    }

    /// Forwards `action` at once, unless the plan delays it or a stall holds it back.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        forward(after: nil, action: action)
    }

    /// Forwards `action` for `date`, unless the plan delays it or a stall holds it back.
    @discardableResult
    public func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        forward(after: .date(date), action: action)
    }

    /// Forwards `action` for `delay` from now (exactly, on a `TestScheduler`), unless the plan
    /// delays it further or a stall holds it back.
    @discardableResult
    public func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        forward(after: .delay(delay), action: action)
    }

    /// Forwards a repeating action unchanged (not a hit; no faults apply).
    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        base.schedule(after: date, interval: interval, leeway: leeway, action: action)
    }

    private enum When {
        case date(Date)
        case delay(Duration)
    }

    private enum Plan {
        case asked
        case delayed(by: Duration)
        case held(until: Date)
    }

    private func forward(after when: When?, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let now = base.currentDate
        let (_, effect) = injector.hit(point)
        let plan: Plan = state.withLockedValue { state in
            if let stall = effect?.stall {
                let end = now.addingTimeInterval(Double(stall.nanosecondsValue) / 1e9)
                state.stallEnd = max(state.stallEnd ?? end, end)
            }
            if let end = state.stallEnd, now < end {
                let asked: Date
                switch when {
                case nil: asked = now
                case let .date(date): asked = date
                case let .delay(delay): asked = now.addingTimeInterval(Double(delay.nanosecondsValue) / 1e9)
                }
                if asked < end {
                    state.heldBack += 1
                    return .held(until: end)
                }
            }
            if let delay = effect?.delay {
                state.delayed += 1
                return .delayed(by: delay)
            }
            state.forwarded += 1
            return .asked
        }
        switch (plan, when) {
        case (.asked, nil):
            return base.schedule(action)
        case let (.asked, .date(date)?):
            return base.schedule(after: date, action: action)
        case let (.asked, .delay(delay)?):
            return base.schedule(after: delay, action: action)
        case let (.held(until), _):
            return base.schedule(after: until, action: action)
        case let (.delayed(extra), nil):
            return base.schedule(after: extra, action: action)
        case let (.delayed(extra), .delay(delay)?):
            return base.schedule(after: _adding(delay, extra), action: action)
        case let (.delayed(extra), .date(date)?):
            return base.schedule(after: date.addingTimeInterval(Double(extra.nanosecondsValue) / 1e9), action: action)
        }
    }
}
