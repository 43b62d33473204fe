import Foundation

/// A value behind an `NSLock` (a `pthread_mutex_t` on Linux, visible to ThreadSanitizer), with
/// closure-scoped access. The test kit's own small lock: Mailbox's `Lock` is internal.
final class _Locked<Value>: @unchecked Sendable {
    // `value` is only reachable through `withLock`, which holds `lock`.
    private let lock = NSLock()
    /// Protected by `lock`.
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
