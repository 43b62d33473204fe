/// Represents the lifetime of an object: it ends exactly once, when its `Token` is disposed or
/// deinitialised, even if the `Lifetime` itself is still referenced.
///
/// Typical use: an object owns a `Lifetime.Token` (so the lifetime ends when the object goes
/// away) and hands out its `Lifetime`, to which observations and bindings are tied with
/// `observeEnded(_:)` or `+=`.
///
/// ```swift
/// final class ViewModel {
///     let lifetime: Lifetime
///     private let token: Lifetime.Token
///     init() { (lifetime, token) = Lifetime.make() }
/// }
/// ```
///
/// Thread-safety: all members may be used from any thread. Ending actions run on the thread
/// that ends the lifetime, in the order they were added.
///
/// What keeps what alive: the lifetime retains its ending actions until it ends; it does not
/// retain its token.
public final class Lifetime: Sendable {
    private let disposables: CompositeDisposable

    /// Whether the lifetime has ended.
    public var hasEnded: Bool {
        disposables.isDisposed
    }

    /// Creates a lifetime that ends when `token` is disposed or deinitialised.
    public init(_ token: Token) {
        disposables = token.disposables
    }

    private init(ended: Void) {
        disposables = CompositeDisposable()
        disposables.dispose()
    }

    /// Runs `action` when the lifetime ends; at once if it has ended already.
    ///
    /// - Returns: A disposable that cancels the observation, or `nil` if the lifetime had ended
    ///   (and `action` has run).
    @discardableResult
    public func observeEnded(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        disposables.add(action)
    }

    /// Disposes `disposable` when the lifetime ends; at once if it has ended already.
    @discardableResult
    public func add(_ disposable: (any Disposable)?) -> (any Disposable)? {
        disposables.add(disposable)
    }

    /// Creates a lifetime and the token that ends it.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let token = Token()
        return (Lifetime(token), token)
    }

    /// A lifetime that has already ended.
    public static let empty = Lifetime(ended: ())

    /// Ends a `Lifetime` when disposed or deinitialised, whichever comes first.
    ///
    /// Thread-safety: may be disposed from any thread; only the first disposal has an effect.
    public final class Token: Sendable {
        fileprivate let disposables = CompositeDisposable()

        /// Creates a token for a new lifetime (see `Lifetime.init(_:)`).
        public init() {}

        deinit {
            disposables.dispose()
        }

        /// Ends the lifetime now.
        public func dispose() {
            disposables.dispose()
        }
    }
}

/// Disposes `disposable` when `lifetime` ends; see `Lifetime.add(_:)`.
@discardableResult
public func += (lifetime: Lifetime, disposable: (any Disposable)?) -> (any Disposable)? {
    lifetime.add(disposable)
}
