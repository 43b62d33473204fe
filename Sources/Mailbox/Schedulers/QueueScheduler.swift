import Dispatch
import Foundation

/// A scheduler backed by a serial `DispatchQueue`.
///
/// - Actions run one at a time, in the order they were scheduled (the queue is serial; a
///   queue given with `targeting:` is used as the target of a private serial queue).
/// - Timed actions never run before their date: Dispatch may wake a timer slightly early, so
///   an early wake-up reschedules for the remainder.
/// - Repeating actions use a `DispatchSourceTimer`; disposing the returned disposable cancels
///   the timer, and no run starts after the disposal returns on the queue's own thread.
///
/// Thread-safety: schedule from any thread. `currentDate` is the wall clock.
///
/// What keeps what alive: each scheduled action is retained until it runs or is cancelled (a
/// cancelled timed action is released at once, not at its date); a repeating timer is retained
/// until its disposable is disposed.
public final class QueueScheduler: DateScheduler {
    /// The serial queue actions run on.
    public let queue: DispatchQueue

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

    /// Wraps an existing queue, which must be serial for the one-at-a-time guarantee to hold.
    init(internalQueue: DispatchQueue) {
        queue = internalQueue
    }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let disposable = AnyDisposable()
        queue.async {
            if !disposable.isDisposed {
                action()
            }
        }
        return disposable
    }

    @discardableResult
    public func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let pending = PendingAction(action)
        queue.asyncNotEarly(at: date, pending)
        return pending
    }

    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        precondition(interval.nanoseconds > 0, "a repeating interval must be positive, not \(interval)")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let disposable = AnyDisposable()
        timer.schedule(wallDeadline: DispatchWallTime(date), repeating: interval, leeway: leeway)
        timer.setEventHandler {
            if !disposable.isDisposed { action() }
        }
        timer.resume()
        // The disposable owns the timer: cancelling releases the handler and the timer.
        let source = DispatchSourceBox(timer)
        return AnyDisposable {
            disposable.dispose()
            source.source.cancel()
        }
    }
}

extension DispatchWallTime {
    /// `date` as a Dispatch wall-clock deadline; a date not in the future is "now".
    ///
    /// Dispatch reads a wall time at or before the Unix epoch (such as `Date.distantPast`) as
    /// `DISPATCH_TIME_FOREVER`, so such a deadline would never fire: past dates are clamped.
    init(_ date: Date) {
        let seconds = date.timeIntervalSince1970
        guard seconds > Date().timeIntervalSince1970 else {
            self = .now()
            return
        }
        let whole = seconds.rounded(.down)
        self.init(timespec: timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9)))
    }
}

extension DispatchQueue {
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
