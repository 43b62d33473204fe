/// A disposable that disposes a collection of disposables together.
///
/// - Disposing the composite disposes every disposable it holds, in the order they were added,
///   and then releases them.
/// - Adding to a composite that is already disposed disposes the addition at once and returns
///   `nil`.
/// - `add(_:)` returns a handle; disposing the handle removes that one disposable from the
///   composite without disposing it.
///
/// Thread-safety: all members may be called from any thread. Disposables are disposed outside
/// the internal lock, so a disposal action may add to or dispose the same composite.
///
/// What keeps what alive: the composite retains each disposable it holds (and so whatever that
/// one retains) until the composite is disposed or that disposable's handle removes it. A
/// removal handle refers to the composite *weakly*: keeping a handle keeps neither the composite
/// nor its contents alive, and disposing a handle after the composite is gone does nothing.
/// Nothing the composite holds is disposed when it is deinitialised undisposed (use
/// `ScopedDisposable` for that).
///
/// - Complexity: `add` is amortised O(1); removal through a handle is O(n) at worst, O(1) for
///   the most recent addition.
public final class CompositeDisposable: Disposable {
    private struct State {
        /// `nil` once disposed.
        var disposables: Bag<any Disposable>? = Bag()
    }

    /// Protected by its own lock.
    private let state: LockedValueBox<State>

    /// Whether the composite has been disposed.
    public var isDisposed: Bool {
        state.withLockedValue { $0.disposables == nil }
    }

    /// Creates a composite holding `disposables`.
    public init<S: Sequence>(_ disposables: S) where S.Element == any Disposable {
        var initial = State()
        for disposable in disposables {
            initial.disposables!.insert(disposable)
        }
        state = LockedValueBox(initial)
    }

    /// Creates a composite holding the non-nil `disposables`.
    public convenience init<S: Sequence>(_ disposables: S) where S.Element == (any Disposable)? {
        self.init(disposables.compactMap { $0 })
    }

    /// Creates an empty composite.
    public convenience init() {
        self.init([any Disposable]())
    }

    /// Disposes every disposable held, in the order they were added, outside the lock, and
    /// releases them; later calls do nothing.
    public func dispose() {
        let taken = state.withLockedValue { state -> Bag<any Disposable>? in
            let taken = state.disposables
            state.disposables = nil
            return taken
        }
        guard let taken else { return }
        for disposable in taken {
            disposable.dispose()
        }
    }

    /// Adds `disposable` to the composite.
    ///
    /// - Returns: A handle that removes `disposable` from the composite (without disposing it)
    ///   when disposed, or `nil` if `disposable` is `nil` or the composite was already disposed
    ///   (in which case `disposable` has been disposed at once).
    @discardableResult
    public func add(_ disposable: (any Disposable)?) -> (any Disposable)? {
        guard let disposable else { return nil }
        let token: Bag<any Disposable>.Token? = state.withLockedValue { state in
            state.disposables?.insert(disposable)
        }
        guard let token else {
            disposable.dispose()
            return nil
        }
        return AnyDisposable { [weak self] in
            self?.state.withLockedValue { _ = $0.disposables?.remove(using: token) }
        }
    }

    /// Adds an action to run when the composite is disposed.
    ///
    /// - Returns: A handle that removes the action (without running it), or `nil` if the
    ///   composite was already disposed (in which case `action` has run at once).
    @discardableResult
    public func add(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        add(AnyDisposable(action))
    }
}

extension CompositeDisposable {
    /// Adds `disposable` to `lhs`; see `CompositeDisposable.add(_:)`.
    @discardableResult
    public static func += (lhs: CompositeDisposable, rhs: (any Disposable)?) -> (any Disposable)? {
        lhs.add(rhs)
    }

    /// Adds an action to run when `lhs` is disposed; see `CompositeDisposable.add(_:)`.
    @discardableResult
    public static func += (lhs: CompositeDisposable, rhs: @escaping @Sendable () -> Void) -> (any Disposable)? {
        lhs.add(rhs)
    }
}
