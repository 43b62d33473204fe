import Dispatch
import Foundation
import Synchronization

/// A scheduler backed by a serial `DispatchQueue`.
///
/// - Actions run one at a time, in the order they were scheduled (the queue is serial; a
///   queue given with `targeting:` is used as the target of a private serial queue).
/// - Timed actions never run before their date: Dispatch may wake a timer slightly early, so
///   an early wake-up reschedules for the remainder.
/// - Repeating actions use a `DispatchSourceTimer` whose first run, like a timed action, never
///   comes before its date; disposing the returned disposable cancels the timer, and no run
///   starts after the disposal returns on the queue's own thread.
///
/// Thread-safety: schedule from any thread. `currentDate` is the wall clock.
///
/// Batching: actions from `schedule(_:)` wait in a lock-free queue of the scheduler's own and
/// run in *drains*, dispatch blocks on `queue` that run up to 64 of them each, in order. Blocks
/// that other code submits straight to `queue` interleave with whole drains, not with each
/// action.
///
/// What keeps what alive: each scheduled action (and the scheduler) is retained until its turn
/// comes, when it runs or, if cancelled, is dropped; a cancelled timed action is released at
/// once, not at its date; a repeating timer is retained until its disposable is disposed.
public final class QueueScheduler: DateScheduler {
    /// The serial queue actions run on.
    public let queue: DispatchQueue

    /// Actions from `schedule(_:)` not yet run, in order; consumed only by `drain()` on `queue`.
    private let pending = MPSCQueue<ScheduledAction>()

    /// Whether a `drain()` is scheduled or running on `queue`. Set by the producer that finds it
    /// clear (that producer dispatches the drain); cleared by the drain when `pending` is empty.
    private let drainScheduled = Atomic<Bool>(false)

    /// A scheduler on the main queue.
    public static let main = QueueScheduler(internalQueue: .main)

    /// The wall clock.
    public var currentDate: Date { Date() }

    /// Creates a scheduler on a new serial queue.
    ///
    /// - Parameters:
    ///   - qos: The quality of service of the new queue.
    ///   - name: The queue's label, shown in debuggers and crash reports.
    ///   - targetQueue: A queue the new serial queue targets, if any.
    public convenience init(
        qos: DispatchQoS = .default,
        name: String = "Mailbox.QueueScheduler",
        targeting targetQueue: DispatchQueue? = nil
    ) {
        self.init(internalQueue: DispatchQueue(label: name, qos: qos, target: targetQueue))
    }

    /// Creates a scheduler on a new serial queue named `name` that targets `queue`
    /// (ReactiveSwift's older initialiser; `init(qos:name:targeting:)` says the same with the
    /// quality of service too).
    public convenience init(queue: DispatchQueue, name: String = "Mailbox.QueueScheduler") {
        self.init(internalQueue: DispatchQueue(label: name, target: queue))
    }

    /// Wraps an existing queue, which must be serial for the one-at-a-time guarantee to hold.
    init(internalQueue: DispatchQueue) {
        queue = internalQueue
    }

    /// Enqueues `action` to run on `queue` after the actions scheduled before it.
    ///
    /// - Returns: A disposable that makes the action be skipped if disposed before it starts;
    ///   the action stays retained until its turn comes either way.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        // One object is both the returned disposable and the queued entry. Actions wait in
        // `pending` and a single drain block on `queue` runs them in order, so the common case
        // costs one allocation and two atomics instead of a dispatch block per action
        // (`mailbox-bench schedule-queue`; the figures before and after are in
        // docs/Performance.md).
        let scheduled = ScheduledAction(action)
        pending.enqueue(scheduled)
        if !drainScheduled.exchange(true, ordering: .acquiringAndReleasing) {
            queue.async { self.drain() }
        }
        return scheduled
    }

    /// Runs pending actions on `queue`, at most `drainRunLength` per dispatch block so that
    /// other work on the same queue (timers, the caller's own blocks) keeps its turn.
    ///
    /// Only one drain is scheduled or running at a time (`drainScheduled`), and drains run on
    /// the serial `queue`, so `pending` has one consumer.
    private func drain() {
        var ran = 0
        while true {
            while ran < Self.drainRunLength, let scheduled = pending.dequeue() {
                scheduled.runUnlessDisposed()
                ran &+= 1
            }
            if ran == Self.drainRunLength {
                // Yield the queue; the flag stays set, so the next block is the one drain.
                queue.async { self.drain() }
                return
            }
            // Empty: clear the flag (acquiring what any producer that saw it set published),
            // then look again so an action enqueued just before the clear is not stranded.
            _ = drainScheduled.exchange(false, ordering: .acquiringAndReleasing)
            if pending.isEmpty || drainScheduled.exchange(true, ordering: .acquiringAndReleasing) {
                return
            }
        }
    }

    /// Actions run per dispatch block before the drain yields the queue.
    private static var drainRunLength: Int { 64 }

    /// Runs `action` on `queue` at or after `date`, never before it.
    ///
    /// - Returns: A disposable that cancels the action and releases it at once, not at `date`.
    @discardableResult
    public func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let pending = PendingAction(action)
        queue.asyncNotEarly(at: date, pending)
        return pending
    }

    /// Runs `action` on `queue` first at or after `date` (never before it), then every
    /// `interval`, with a `DispatchSourceTimer`.
    ///
    /// - Returns: A disposable that cancels the timer and releases `action`; no run starts after
    ///   the disposal has been observed on `queue`.
    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        queue.repeatingSchedule(from: date, interval: interval, leeway: leeway) { stopped in
            if !stopped.isDisposed { action() }
        }
    }
}

extension DispatchWallTime {
    /// `date` as a Dispatch wall-clock deadline; a date not in the future is "now".
    ///
    /// Dispatch reads a wall time at or before the Unix epoch (such as `Date.distantPast`) as
    /// `DISPATCH_TIME_FOREVER`, so such a deadline would never fire: past dates are clamped.
    /// Dates beyond `latestSeconds` (about the year 2116; say an ask with a time-out of
    /// `.seconds(Int64.max)`) are clamped to it: their seconds would not fit an `Int` (a trap)
    /// or their nanoseconds Dispatch's 64-bit clock.
    init(_ date: Date) {
        let seconds = min(date.timeIntervalSince1970, Self.latestSeconds)
        guard seconds > Date().timeIntervalSince1970 else {
            self = .now()
            return
        }
        let whole = seconds.rounded(.down)
        self.init(timespec: timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9)))
    }

    /// The latest wall time a deadline is set to: its nanoseconds since the epoch fit in half
    /// of `Int64`'s range.
    static var latestSeconds: Double { Double(Int64.max / 2 / 1_000_000_000) }
}

extension DispatchQueue {
    /// Starts a `DispatchSourceTimer` on this queue that calls `tick` first at or after `date`
    /// (never before it), then every `interval`; disposing the result cancels the timer and
    /// releases `tick`.
    ///
    /// Like `asyncNotEarly`, the first wake-up re-checks the clock: Dispatch may wake a timer
    /// slightly early, and then the timer is set again for `date` instead of ticking. Later
    /// ticks follow the timer's own cadence.
    ///
    /// - Parameter now: The clock the first wake-up is checked against (tests replace it).
    /// - Precondition: `interval` is positive.
    func repeatingTimer(
        from date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        now: @escaping @Sendable () -> Date = { Date() },
        tick: @escaping @Sendable () -> Void
    ) -> AnyDisposable {
        precondition(interval.nanoseconds > 0, "a repeating interval must be positive, not \(interval)")
        let timer = DispatchSource.makeTimerSource(queue: self)
        let source = DispatchSourceBox(timer)
        let firstTick = FirstTick()
        timer.schedule(wallDeadline: DispatchWallTime(date), repeating: interval, leeway: leeway)
        // `source` is captured weakly: the timer owns its handler, and a strong reference back
        // would keep an abandoned timer alive.
        timer.setEventHandler { [weak source] in
            if !firstTick.hasHappened {
                if now() < date {
                    source?.source.schedule(wallDeadline: DispatchWallTime(date), repeating: interval, leeway: leeway)
                    return
                }
                firstTick.markHappened()
            }
            tick()
        }
        timer.resume()
        return AnyDisposable { source.source.cancel() }
    }

    /// The repeating `schedule(after:interval:leeway:action:)` shared by the schedulers timed by
    /// Dispatch (queue, operation queue, pool): a timer on this queue (`repeatingTimer`) whose
    /// every tick calls `tick` with the schedule's stop handle. Disposing the result disposes the
    /// handle first (a tick already handed on checks it and skips the action), runs `onStop`,
    /// then stops the timer and releases `tick`.
    func repeatingSchedule(
        from date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        onStop: @escaping @Sendable () -> Void = {},
        tick: @escaping @Sendable (_ stopped: AnyDisposable) -> Void
    ) -> any Disposable {
        let stopped = AnyDisposable()
        let timer = repeatingTimer(from: date, interval: interval, leeway: leeway) { tick(stopped) }
        return AnyDisposable {
            stopped.dispose()
            onStop()
            timer.dispose()
        }
    }

    /// Runs `pending`'s action on this queue at or after `date` (never before: an early
    /// wake-up waits again for the remainder), unless `pending` has been disposed by then.
    func asyncNotEarly(at date: Date, _ pending: PendingAction) {
        asyncAfter(wallDeadline: DispatchWallTime(date)) {
            guard !pending.isDisposed else { return }
            if Date() < date {
                self.asyncNotEarly(at: date, pending)
            } else {
                pending.take()?()
            }
        }
    }
}

/// An action waiting in a queue, and the disposable that cancels it: one allocation per
/// `schedule(_:)`.
///
/// Disposing before the queue reaches it means the action never runs; the action stays
/// retained until the queue reaches it either way (as with a plain closure in the queue).
final class ScheduledAction: Disposable {
    /// Set by the first `dispose()`.
    private let disposed = Atomic<Bool>(false)
    private let action: @Sendable () -> Void

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    func dispose() { disposed.store(true, ordering: .releasing) }

    /// Runs the action unless the disposable was disposed first. Called once, by the drain.
    func runUnlessDisposed() {
        if !disposed.load(ordering: .acquiring) { action() }
    }
}

/// Whether a repeating timer has ticked yet. Written and read by the timer's event handler,
/// which Dispatch never runs concurrently with itself; atomic so that holds without proof.
final class FirstTick: Sendable {
    private let happened = Atomic<Bool>(false)

    var hasHappened: Bool { happened.load(ordering: .relaxed) }

    func markHappened() { happened.store(true, ordering: .relaxed) }
}

/// Carries a dispatch source into a `@Sendable` cancellation closure.
final class DispatchSourceBox {
    let source: any DispatchSourceTimer

    init(_ source: any DispatchSourceTimer) {
        self.source = source
    }
}

// Dispatch sources are internally synchronised (`cancel()` is safe from any thread); the
// reference itself is immutable.
extension DispatchSourceBox: @unchecked Sendable {}
