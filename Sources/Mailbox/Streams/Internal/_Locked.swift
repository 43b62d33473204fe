/// The state of a stream operator behind a lock: the package's one value box,
/// `LockedValueBox`, carried across threads as the stream contracts allow (`_Carried`).
///
/// Why not a plain `LockedValueBox`: the box is `Sendable` only when its value is, and an
/// operator's state holds `Value`s of any type, captured by `@Sendable` observers. The state is
/// reachable only inside `withLock`, under the box's mutex, and the values leave it only as a
/// signal hands on its values (serial delivery, no recursive sends) — which is what `_Carried`
/// stands for.
@usableFromInline
typealias _Locked<State> = _Carried<LockedValueBox<State>>

extension _Carried {
    /// A new box holding `state`.
    @inlinable
    init<State>(locking state: State) where T == LockedValueBox<State> {
        self.init(LockedValueBox(state))
    }

    /// Runs `body` with the state, holding the box's lock (`LockedValueBox.withLockedValue`).
    @inlinable
    func withLock<State, R>(_ body: (inout State) -> R) -> R where T == LockedValueBox<State> {
        value.withLockedValue(body)
    }
}
