import Foundation

/// Flood control by fake lag, as ircds do: each command costs `cost` of the client's virtual
/// clock, which starts at the real time and never falls behind it; a client more than `burst`
/// ahead of the real clock has its further commands held until the clock catches up.
///
/// A pure value: the session asks it before each command and arms the release timer it asks for.
/// Touched only by the session's actor.
struct FloodControl {
    /// Whether the next command may run now.
    enum Admission: Equatable {
        /// Run it (it is paid for).
        case run
        /// Hold it; start the release timer with this delay, unless `nil` (it runs already).
        case hold(releaseAfter: Duration?)
    }

    private let cost: TimeInterval
    private let burst: TimeInterval
    /// The virtual time up to which the client's commands have been paid for.
    private var paidUntil: Date
    /// The release timer runs.
    private var releasePending = false

    init(cost: Duration, burst: Duration, at now: Date) {
        self.cost = cost.timeInterval
        self.burst = burst.timeInterval
        paidUntil = now
    }

    /// The next command would run at `now`: charges it, or holds it.
    mutating func admit(at now: Date) -> Admission {
        if paidUntil < now { paidUntil = now }
        // A millisecond of slack absorbs rounding of dates.
        let wait = paidUntil.timeIntervalSince(now) - burst
        if wait > 0.001 {
            guard !releasePending else { return .hold(releaseAfter: nil) }
            releasePending = true
            return .hold(releaseAfter: .milliseconds(Int64((wait * 1000).rounded(.up))))
        }
        paidUntil.addTimeInterval(cost)
        return .run
    }

    /// The release timer fired: held commands may be admitted again.
    mutating func released() {
        releasePending = false
    }
}
