/// A value protected by its own lock, reachable only inside `withLockedValue`; value and mutex
/// share one allocation (`LockStorage`), and copies of the box share both.
///
/// The package's one value box, as swift-nio keeps one `NIOLockedValueBox`: every target
/// (`MailboxNet`, `MailboxNATS`, `MailboxTestKit`, the samples, the benchmarks, the tests)
/// uses it (`package` access) rather than a copy of its own. The only way to the value is a
/// closure that runs with the lock held, so no access can forget the lock. Not recursive:
/// `withLockedValue` on the same box inside `body` is undefined behaviour (an error-checking
/// mutex in debug builds traps).
///
/// The other locks in `Sync/` are kept because they differ in kind: `Lock`, a mutex with no
/// value (held across calls, or waited on with a condition variable); `MutexPair` with
/// `UnownedLock`, two mutexes with no reference counting for a signal's hot path. Stream
/// operators keep their state in this box too, carried as the stream contracts allow
/// (`_Locked`).
@usableFromInline
package struct LockedValueBox<Value> {
    @usableFromInline
    let storage: LockStorage<Value>

    @inlinable
    package init(_ value: Value) {
        storage = .make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLockedValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try storage.withLockedValue(body)
    }
}

// The value is only reachable through `withLockedValue`, which holds the mutex.
extension LockedValueBox: @unchecked Sendable where Value: Sendable {}
