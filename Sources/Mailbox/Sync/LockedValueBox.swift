/// A value protected by its own lock, reachable only inside `withLockedValue`; value and mutex
/// share one allocation, and copies of the box share both.
///
/// The shape of swift-nio's `NIOLockedValueBox`: the only way to the value is a closure that runs
/// with the lock held, so no access can forget the lock.
/// `package`: the other targets of this package (`MailboxNet`, `MailboxNATS`) share it.
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
