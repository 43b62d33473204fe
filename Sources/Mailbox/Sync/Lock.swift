#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock over a heap-allocated `pthread_mutex_t`.
///
/// Access is closure-scoped (`withLock`), so a lock is never left held by an early return or a
/// throw. Uncontended lock/unlock costs a few nanoseconds, and ThreadSanitizer understands it
/// (unlike `Synchronization.Mutex` on Linux, which is slower here and invisible to TSan).
///
/// Not recursive: locking it again on the thread that holds it is undefined behaviour.
@usableFromInline
final class Lock {
    @usableFromInline
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let error = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(error == 0, "pthread_mutex_init failed with error \(error)")
    }

    deinit {
        let error = pthread_mutex_destroy(mutex)
        precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
        mutex.deallocate()
    }

    @inlinable
    func lock() {
        let error = pthread_mutex_lock(mutex)
        precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
    }

    @inlinable
    func unlock() {
        let error = pthread_mutex_unlock(mutex)
        precondition(error == 0, "pthread_mutex_unlock failed with error \(error)")
    }

    /// Runs `body` while holding the lock.
    @inlinable
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

// The pthread mutex serialises every access; the pointer itself never changes.
extension Lock: @unchecked Sendable {}

/// A value protected by its own `Lock`, reachable only inside `withLockedValue`.
///
/// The shape of swift-nio's `NIOLockedValueBox`: the only way to the value is a closure that runs
/// with the lock held, so no access can forget the lock.
@usableFromInline
final class LockedValueBox<Value> {
    @usableFromInline
    let lock = Lock()

    /// Protected by `lock`.
    @usableFromInline
    var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    func withLockedValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// `value` is only reachable through `withLockedValue`, which holds `lock`.
extension LockedValueBox: @unchecked Sendable where Value: Sendable {}
