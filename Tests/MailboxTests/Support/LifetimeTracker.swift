import Foundation

/// Counts the live instances of `Tracked` it made, to prove that something released what it
/// held (swift-collections' `LifetimeTracker`, in small).
final class LifetimeTracker: Sendable {
    private let live = Locked(0)
    private let made = Locked(0)

    /// Instances made by this tracker and not yet deinitialised.
    var liveCount: Int { live.snapshot }

    /// Instances made by this tracker so far.
    var instanceCount: Int { made.snapshot }

    /// Makes a tracked instance carrying `payload`.
    func instance(_ payload: Int = 0) -> Tracked {
        live.increment()
        made.increment()
        return Tracked(payload: payload, tracker: self)
    }

    fileprivate func deinitialised() {
        live.withLock { $0 -= 1 }
    }
}

/// One tracked object; its deinit tells its tracker.
final class Tracked: Sendable {
    let payload: Int
    private let tracker: LifetimeTracker

    fileprivate init(payload: Int, tracker: LifetimeTracker) {
        self.payload = payload
        self.tracker = tracker
    }

    deinit {
        tracker.deinitialised()
    }
}
