/// A disposable that holds one inner disposable at a time and disposes it when replaced.
///
/// - Setting `inner` disposes the previous inner disposable, also when setting `nil`.
/// - Disposing the serial disposable disposes the current inner one; anything assigned after
///   that is disposed at once.
///
/// Thread-safety: all members may be used from any thread. The previous inner disposable is
/// disposed outside the internal lock.
public final class SerialDisposable: Disposable {
    private struct State {
        var inner: (any Disposable)?
        var isDisposed = false
    }

    /// Protected by its own lock.
    private let state: LockedValueBox<State>

    public var isDisposed: Bool {
        state.withLockedValue { $0.isDisposed }
    }

    /// The current inner disposable. Assigning disposes the one it replaces.
    public var inner: (any Disposable)? {
        get { state.withLockedValue { $0.inner } }
        set {
            let toDispose: (any Disposable)? = state.withLockedValue { state in
                if state.isDisposed { return newValue }
                let previous = state.inner
                state.inner = newValue
                return previous
            }
            toDispose?.dispose()
        }
    }

    /// Creates a serial disposable holding `disposable`.
    public init(_ disposable: (any Disposable)? = nil) {
        state = LockedValueBox(State(inner: disposable))
    }

    public func dispose() {
        let inner: (any Disposable)? = state.withLockedValue { state in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            let inner = state.inner
            state.inner = nil
            return inner
        }
        inner?.dispose()
    }
}
