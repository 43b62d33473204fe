/// A disposable that disposes its inner disposable when it is deinitialised.
///
/// Keep one as a stored property to tie a resource (an observation, a binding) to the lifetime
/// of the owning object.
///
/// Thread-safety: as thread-safe as `Inner`; every Mailbox disposable is.
///
/// What keeps what alive: the scoped disposable retains `inner` for its whole life, also after
/// disposing it; whoever holds the scoped disposable (typically its owning object) decides when
/// the deinit disposes `inner`. It retains nothing else, in particular not its owner.
public final class ScopedDisposable<Inner: Disposable>: Disposable {
    /// The disposable this one disposes, on `dispose()` or on deinit.
    public let inner: Inner

    /// Whether `inner` has been disposed, through this disposable or directly.
    public var isDisposed: Bool { inner.isDisposed }

    /// Creates a scoped disposable that disposes `disposable` when it is deinitialised.
    public init(_ disposable: Inner) {
        inner = disposable
    }

    deinit {
        inner.dispose()
    }

    /// Disposes `inner` now rather than at deinit; `inner` stays retained until deinit.
    public func dispose() {
        inner.dispose()
    }
}

extension ScopedDisposable where Inner == AnyDisposable {
    /// Creates a scoped disposable that disposes `disposable` when it is deinitialised.
    public convenience init(_ disposable: any Disposable) {
        self.init(AnyDisposable(disposable))
    }
}

extension ScopedDisposable where Inner == CompositeDisposable {
    /// Adds `rhs` to the composite inside `lhs`; see `CompositeDisposable.add(_:)`.
    @discardableResult
    public static func += (lhs: ScopedDisposable<CompositeDisposable>, rhs: (any Disposable)?) -> (any Disposable)? {
        lhs.inner.add(rhs)
    }

    /// Adds an action to the composite inside `lhs`; see `CompositeDisposable.add(_:)`.
    @discardableResult
    public static func += (lhs: ScopedDisposable<CompositeDisposable>, rhs: @escaping @Sendable () -> Void) -> (any Disposable)? {
        lhs.inner.add(rhs)
    }
}

extension ScopedDisposable where Inner == SerialDisposable {
    /// The serial disposable's current inner disposable; setting it disposes the one it
    /// replaces (even when setting the same one again), as `SerialDisposable.inner` does.
    public var inner: (any Disposable)? {
        get { inner.inner }
        set { inner.inner = newValue }
    }
}
