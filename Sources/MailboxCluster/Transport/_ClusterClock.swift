import Dispatch
import Mailbox

/// Where a cluster node's time comes from: the membership's clock and the heartbeat's timer.
/// `_ClusterClock.wall` (the monotonic clock and a dispatch timer) for real nodes;
/// `_ClusterClock.virtual(_:)` (a `TestScheduler`) for the simulation, where every node of a
/// simulated cluster ticks on one virtual clock.
///
/// Thread-safety: immutable; every member may be called from any thread.
package struct _ClusterClock: Sendable {
    /// Monotonic time since an arbitrary origin.
    let now: @Sendable () -> Duration
    /// Calls `action` at once and then every `interval`, until the disposable is disposed.
    /// Disposing does not wait for a running call (`quiesce` does).
    let repeating: @Sendable (_ interval: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable
    /// Waits until no call of a `repeating` action runs (not from inside one).
    let quiesce: @Sendable () -> Void

    /// The monotonic clock, and a dispatch timer on a serial queue of its own.
    package static var wall: _ClusterClock {
        let queue = DispatchQueue(label: "mailbox.cluster.heartbeat")
        return _ClusterClock(
            now: { ContinuousClock.now - _wallOrigin },
            repeating: { interval, action in
                let timer = DispatchSource.makeTimerSource(queue: queue)
                let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
                timer.schedule(deadline: .now(), repeating: .nanoseconds(Int(max(1, nanoseconds))))
                timer.setEventHandler(handler: action)
                timer.resume()
                let box = _DispatchSourceBox(timer)
                return AnyDisposable { box.source.cancel() }
            },
            quiesce: { queue.sync {} })
    }

    /// Virtual time: `scheduler.elapsed`, and repeating actions on `scheduler`.
    package static func virtual(_ scheduler: TestScheduler) -> _ClusterClock {
        _ClusterClock(
            now: { scheduler.elapsed },
            repeating: { interval, action in
                let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
                return scheduler.schedule(
                    after: scheduler.currentDate, interval: .nanoseconds(Int(max(1, nanoseconds))), leeway: .nanoseconds(0), action: action)
                    ?? AnyDisposable {}
            },
            quiesce: {})
    }
}

private let _wallOrigin = ContinuousClock.now

/// A dispatch source shared with a disposable.
// Dispatch sources synchronise `cancel` themselves (libdispatch's atomics); `source` is a let.
final class _DispatchSourceBox: @unchecked Sendable {
    let source: any DispatchSourceTimer

    init(_ source: any DispatchSourceTimer) {
        self.source = source
    }
}
