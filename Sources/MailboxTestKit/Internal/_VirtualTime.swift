import Foundation
import Mailbox

/// The `TestScheduler` whose virtual clock drives a system's actors, if any: the system's
/// scheduler itself, or the one a `FaultyScheduler` wraps.
func _virtualClock(of system: ActorSystem) -> TestScheduler? {
    _virtualClock(of: system.configuration.scheduler)
}

func _virtualClock(of scheduler: (any Scheduler)?) -> TestScheduler? {
    switch scheduler {
    case let test as TestScheduler:
        return test
    case let faulty as FaultyScheduler:
        return _virtualClock(of: faulty.base)
    default:
        return nil
    }
}

extension TestScheduler {
    /// Runs what is due now, then steps from action to action (never past `deadline`, elapsed
    /// virtual time from `startDate`) until `poll` returns a value or the deadline has been
    /// reached; in the latter case the clock is left exactly at the deadline.
    ///
    /// Must not be called from inside one of this scheduler's actions.
    func _drive<T>(until deadline: Duration, poll: () -> T?) -> T? {
        while true {
            advance(by: .nanoseconds(0))
            if let value = poll() { return value }
            guard let next = nextActionElapsed, next <= deadline else {
                let now = elapsed
                if now < deadline { advance(by: deadline - now) }
                return poll()
            }
            let now = elapsed
            if next > now { advance(by: next - now) }
        }
    }
}

/// Saturating addition of durations (a deadline far in the future stays representable).
func _adding(_ lhs: Duration, _ rhs: Duration) -> Duration {
    let (sum, overflow) = lhs.nanosecondsValue.addingReportingOverflow(rhs.nanosecondsValue)
    return .nanoseconds(overflow ? (rhs > .zero ? Int64.max : Int64.min) : sum)
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64`'s range.
    var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds > 0 ? .max : .min }
        return sum
    }
}
