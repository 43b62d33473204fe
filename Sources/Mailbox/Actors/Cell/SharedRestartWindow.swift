import Foundation

/// A `Supervisor`'s intensity window, shared with its one-for-one children so that they restart
/// themselves without a round trip to it (see `SupervisionDecider`); thread-safe by its lock (a
/// `pthread_mutex_t`, which ThreadSanitizer understands).
@usableFromInline
final class SharedRestartWindow: Sendable {
    let intensity: Int
    let period: Duration
    private let window = LockedValueBox(RestartWindow())

    init(intensity: Int, period: Duration) {
        self.intensity = intensity
        self.period = period
    }

    /// Counts a restart at `now` if the window allows it; returns the restarts in the window
    /// including this one, or `nil` if refused.
    func admit(at now: Date) -> Int? {
        window.withLockedValue { $0.admit(at: now, window: period, limit: intensity) }
    }

    /// The restarts in the window at `now`.
    func count(at now: Date) -> Int {
        window.withLockedValue { $0.count(at: now, window: period) }
    }
}
