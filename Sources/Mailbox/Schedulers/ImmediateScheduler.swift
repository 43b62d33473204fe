/// A scheduler that runs each action at once, on the calling thread, before `schedule` returns.
///
/// Nothing is queued, so there is nothing to cancel: `schedule(_:)` returns `nil`. An action
/// that schedules another action on this scheduler runs it nested, as a function call.
///
/// Thread-safety: stateless; use it from any thread. Two threads scheduling at once run their
/// actions at once, each on its own thread.
public final class ImmediateScheduler: Scheduler {
    /// Creates an immediate scheduler.
    public init() {}

    /// Runs `action` now, on the calling thread, and returns `nil`: there is nothing left to
    /// cancel, and nothing is retained after it returns.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        action()
        return nil
    }
}
