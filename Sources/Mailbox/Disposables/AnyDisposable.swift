import Synchronization

/// A disposable that runs an action once, on its first disposal.
///
/// The action runs exactly once however often (and from however many threads) `dispose()` is
/// called, and never if the disposable is deallocated undisposed. The action is released as
/// soon as it has run, so what it captures is not kept alive by a disposed `AnyDisposable`.
public final class AnyDisposable: Disposable {
    /// Set once, by the first `dispose()`, with an atomic exchange: the single winner runs
    /// `action`.
    private let state: Atomic<Bool>

    /// Written in `init` and then only by the thread that won `state`'s exchange.
    private nonisolated(unsafe) var action: (@Sendable () -> Void)?

    /// Whether `dispose()` has been called (the action has run or is running).
    public var isDisposed: Bool {
        state.load(ordering: .acquiring)
    }

    /// Creates a disposable that runs `action` on its first disposal.
    public init(_ action: @escaping @Sendable () -> Void) {
        self.state = Atomic(false)
        self.action = action
    }

    /// Creates a disposable that does nothing when disposed, but records that it was.
    public init() {
        self.state = Atomic(false)
        self.action = nil
    }

    /// Creates a disposable that disposes `disposable` on its first disposal.
    public convenience init(_ disposable: any Disposable) {
        self.init { disposable.dispose() }
    }

    /// Runs the action on the first call, on the calling thread, then releases it; later calls
    /// (from any thread) do nothing and do not wait for the first call's action to finish.
    public func dispose() {
        if !state.exchange(true, ordering: .acquiringAndReleasing) {
            let action = self.action
            self.action = nil
            action?()
        }
    }
}
