/// A disposable that holds one inner disposable at a time and disposes it when replaced.
///
/// - Setting `inner` disposes the previous inner disposable, also when setting `nil`.
/// - Disposing the serial disposable disposes the current inner one; anything assigned after
///   that is disposed at once.
///
/// Thread-safety: all members may be used from any thread. The previous inner disposable is
/// disposed outside the internal lock.
///
/// What keeps what alive: the serial disposable retains its current inner disposable until that
/// is replaced (then disposed and released) or the serial disposable is disposed; once disposed
/// it retains nothing, as anything assigned afterwards is disposed and dropped at once. Nothing
/// here makes the inner disposable retain the serial one.
public final class SerialDisposable: Disposable {
    private struct State {
        var inner: (any Disposable)?
        var isDisposed = false
    }

    /// Protected by its own lock.
    private let state: LockedValueBox<State>

    /// Whether the serial disposable itself has been disposed (not whether `inner` has).
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

    /// Disposes and releases the current inner disposable (outside the lock); anything assigned
    /// later is disposed at once. Later calls do nothing.
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
