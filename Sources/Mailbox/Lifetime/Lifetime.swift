import Synchronization

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
///
/// Cost: a lifetime is one object (a token two) until something observes it; the first
/// `observeEnded`/`add` allocates the locked list of ending actions. A lifetime that ends
/// unobserved (the common case for a producer's run) never allocates it.
public final class Lifetime: Sendable {
    /// Bit 0 (`endedBit`): the lifetime has ended. The other bits: the address of the ending
    /// actions' storage (`_LifetimeActions`, retained +1 by this lifetime), or zero while
    /// nothing has observed the lifetime. Both live in one word so that "end" and "install the
    /// storage" are ordered by the same atomic: whichever comes second sees the first.
    private let state: Atomic<UInt>

    /// For a lifetime made with `init(_:)`: the token's own lifetime, which holds the state.
    /// `nil` when this object holds the state itself.
    private let owner: Lifetime?

    private static var endedBit: UInt { 1 }

    /// Whether the lifetime has ended.
    public var hasEnded: Bool {
        (owner ?? self).state.load(ordering: .acquiring) & Self.endedBit != 0
    }

    /// Creates a lifetime that ends when `token` is disposed or deinitialised.
    public convenience init(_ token: Token) {
        self.init(owner: token.lifetime)
    }

    private init(owner: Lifetime?) {
        self.state = Atomic(0)
        self.owner = owner
    }

    /// A lifetime with no token: it ends when `_end()` is called or, at the latest, when it is
    /// deinitialised (what a token's deinit would do). A producer's run uses one, ended by its
    /// signal's termination, which saves the token.
    @usableFromInline
    convenience init() {
        self.init(owner: nil)
    }

    private init(ended: Void) {
        self.state = Atomic(Self.endedBit)
        self.owner = nil
    }

    deinit {
        // Only a lifetime that holds its own state can end here. One with a token is retained by
        // the token, so by now the token's deinit has ended it; a tokenless one ends now.
        guard owner == nil else { return }
        if state.load(ordering: .acquiring) & Self.endedBit == 0 {
            _end()
        }
        let bits = state.load(ordering: .acquiring) & ~Self.endedBit
        if bits != 0 {
            Unmanaged<_LifetimeActions>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
        }
    }

    /// Ends the lifetime: the first call runs the ending actions, in the order they were
    /// added, on this thread; later calls do nothing.
    @usableFromInline
    func _end() {
        // Not `owner ?? self`: that copies a strong reference (a retain/release per end, on
        // every producer run); each branch here uses a borrowed one.
        let old: UInt
        if let owner {
            old = owner.state.bitwiseOr(Self.endedBit, ordering: .acquiringAndReleasing).oldValue
        } else {
            old = state.bitwiseOr(Self.endedBit, ordering: .acquiringAndReleasing).oldValue
        }
        guard old & Self.endedBit == 0, old != 0 else { return }
        Unmanaged<_LifetimeActions>.fromOpaque(UnsafeRawPointer(bitPattern: old)!)
            ._withUnsafeGuaranteedRef { $0.end() }
    }

    /// Adds `ending`, or runs it at once if the lifetime has ended.
    private func add(_ ending: _LifetimeEnding) -> (any Disposable)? {
        let target = owner ?? self
        var bits = target.state.load(ordering: .acquiring)
        while bits == 0 {
            // First observer: install the storage, unless another observer or the end beat us.
            let actions = _LifetimeActions.make(_LifetimeActionList())
            let address = UInt(bitPattern: Unmanaged.passUnretained(actions).toOpaque())
            let (exchanged, original) = target.state.compareExchange(
                expected: 0, desired: address, ordering: .acquiringAndReleasing
            )
            if exchanged {
                // The lifetime's +1; `actions` (a strong local) keeps it alive until then.
                _ = Unmanaged.passRetained(actions)
                bits = address
            } else {
                bits = original
            }
        }
        if bits & Self.endedBit != 0 {
            ending.run()
            return nil
        }
        // `target` retains the storage for as long as it lives, and `target` is alive here.
        let actions = Unmanaged<_LifetimeActions>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!)
            .takeUnretainedValue()
        let token: UInt64? = actions.withLockedValue { list in
            list.isEnded ? nil : list.insert(ending)
        }
        guard let token else {
            // The lifetime ended between the load and the lock.
            ending.run()
            return nil
        }
        return _LifetimeObservation(actions, token: token)
    }

    /// Runs `action` when the lifetime ends; at once if it has ended already.
    ///
    /// - Returns: A disposable that cancels the observation, or `nil` if the lifetime had ended
    ///   (and `action` has run).
    @discardableResult
    public func observeEnded(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        add(.action(action))
    }

    /// Disposes `disposable` when the lifetime ends; at once if it has ended already.
    @discardableResult
    public func add(_ disposable: (any Disposable)?) -> (any Disposable)? {
        guard let disposable else { return nil }
        return add(.disposable(disposable))
    }

    /// Creates a lifetime and the token that ends it.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let token = Token()
        return (token.lifetime, token)
    }

    /// A lifetime that has already ended.
    public static let empty = Lifetime(ended: ())

    /// Ends a `Lifetime` when disposed or deinitialised, whichever comes first.
    ///
    /// Thread-safety: may be disposed from any thread; only the first disposal has an effect.
    public final class Token: Sendable {
        /// The lifetime this token ends (the one `Lifetime.make()` returns; `Lifetime(token)`
        /// makes a view of it). The token retains it; it does not retain the token.
        fileprivate let lifetime: Lifetime

        /// Creates a token for a new lifetime (see `Lifetime.init(_:)`).
        public init() {
            lifetime = Lifetime(owner: nil)
        }

        deinit {
            lifetime._end()
        }

        /// Ends the lifetime now.
        public func dispose() {
            lifetime._end()
        }
    }
}

extension Lifetime {
    /// Disposes `disposable` when `lifetime` ends; see `Lifetime.add(_:)`.
    @discardableResult
    public static func += (lifetime: Lifetime, disposable: (any Disposable)?) -> (any Disposable)? {
        lifetime.add(disposable)
    }
}

/// Something to do when a lifetime ends.
enum _LifetimeEnding {
    case action(@Sendable () -> Void)
    case disposable(any Disposable)

    func run() {
        switch self {
        case let .action(action): action()
        case let .disposable(disposable): disposable.dispose()
        }
    }
}

/// The ending actions of one lifetime, in insertion order, removable by token. Protected by
/// the mutex it shares an allocation with (`_LifetimeActions`).
struct _LifetimeActionList {
    var entries: ContiguousArray<(token: UInt64, ending: _LifetimeEnding)> = []
    var nextToken: UInt64 = 0
    /// Set once, by the end; nothing is inserted after it.
    var isEnded = false

    mutating func insert(_ ending: _LifetimeEnding) -> UInt64 {
        let token = nextToken
        nextToken &+= 1
        entries.append((token, ending))
        return token
    }

    /// - Complexity: O(n); O(1) for the most recent insertion.
    mutating func remove(using token: UInt64) -> _LifetimeEnding? {
        var index = entries.count - 1
        while index >= 0 {
            if entries[index].token == token { return entries.remove(at: index).ending }
            if entries[index].token < token { return nil }
            index -= 1
        }
        return nil
    }
}

/// A lifetime's ending actions and their mutex, in one allocation.
typealias _LifetimeActions = LockStorage<_LifetimeActionList>

extension LockStorage where Value == _LifetimeActionList {
    /// Marks the list ended and runs every action in insertion order, outside the lock (an
    /// action may observe or end the same lifetime: it then runs at once / does nothing).
    /// The actions are released once they have run.
    func end() {
        let taken = withLockedValue { list -> ContiguousArray<(token: UInt64, ending: _LifetimeEnding)> in
            guard !list.isEnded else { return [] }
            list.isEnded = true
            let taken = list.entries
            list.entries = []
            return taken
        }
        for entry in taken {
            entry.ending.run()
        }
    }
}

/// The handle `observeEnded`/`add` return: removes the action (without running it).
final class _LifetimeObservation: Disposable {
    private let disposed = Atomic<Bool>(false)
    private let actions: _LifetimeActions
    private let token: UInt64

    init(_ actions: _LifetimeActions, token: UInt64) {
        self.actions = actions
        self.token = token
    }

    var isDisposed: Bool {
        disposed.load(ordering: .acquiring)
    }

    func dispose() {
        guard !disposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let removed = actions.withLockedValue { $0.remove(using: token) }
        // Released outside the lock: its deinit may run arbitrary code.
        _ = removed
    }
}

// `actions` is only reached through its mutex (`withLockedValue`); `disposed` is atomic.
extension _LifetimeObservation: @unchecked Sendable {}
