/// A timed action waiting for its date, released as soon as it runs or is cancelled.
///
/// Dispatch keeps a timer's block until its deadline even when the work is no longer wanted, so
/// an action cancelled long before its date would otherwise stay alive, with everything it
/// captures, until then. The timer's block holds only this small box instead: `dispose()`
/// releases the action at once, and `take()` hands it out to run at most once.
///
/// Thread-safety: all members may be called from any thread.
final class PendingAction: Disposable {
    private struct State {
        /// `nil` once taken or disposed.
        var action: (@Sendable () -> Void)?
        var isDisposed = false
    }

    /// Protected by its own lock.
    private let state: LockedValueBox<State>

    init(_ action: @escaping @Sendable () -> Void) {
        state = LockedValueBox(State(action: action))
    }

    var isDisposed: Bool {
        state.withLockedValue { $0.isDisposed }
    }

    /// Cancels the action if it has not been taken yet, and releases it.
    func dispose() {
        let released = state.withLockedValue { state -> (@Sendable () -> Void)? in
            state.isDisposed = true
            defer { state.action = nil }
            return state.action
        }
        // The last reference goes here, outside the lock: deinits of captures may run any code.
        withExtendedLifetime(released) {}
    }

    /// The action to run without taking it (a repeating action runs again): `nil` if it was
    /// disposed or has been taken.
    func peek() -> (@Sendable () -> Void)? {
        state.withLockedValue { $0.isDisposed ? nil : $0.action }
    }

    /// Takes the action to run it: `nil` if it was disposed or has been taken already.
    func take() -> (@Sendable () -> Void)? {
        state.withLockedValue { state in
            guard !state.isDisposed else { return nil }
            defer { state.action = nil }
            return state.action
        }
    }
}
