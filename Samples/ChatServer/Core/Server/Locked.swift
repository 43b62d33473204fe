#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex, reached only inside `withLock`.
///
/// Not `Synchronization.Mutex`: ThreadSanitizer cannot see its futex on Linux and reports false
/// races (see the project's ARCHITECTURE.md, Sync).
// Safe: `value` is only read or written inside `withLock`, which holds `mutex`.
final class Locked<Value>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(&mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
    }

    /// Runs `body` with the value, holding the lock; `body` must not call back into this box.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(&value)
    }
}
