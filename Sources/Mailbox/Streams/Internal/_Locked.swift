/// State of a multi-input operator, behind its own lock.
///
/// Like `LockedValueBox`, but `Sendable` whatever `State` is: operators keep values of any
/// `Value` type in it, and hand them on only as the stream contracts allow.
@usableFromInline
final class _Locked<State> {
    @usableFromInline
    let lock = Lock()

    /// Protected by `lock` (so no dynamic exclusivity check is needed on each access).
    @usableFromInline @exclusivity(unchecked)
    var value: State

    @inlinable
    init(_ value: State) {
        self.value = value
    }

    /// Runs `body` with the state, holding the lock.
    @inlinable
    func withLock<R>(_ body: (inout State) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

// `value` is only reachable through `withLock`, which holds `lock`.
extension _Locked: @unchecked Sendable {}
