#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value and the `pthread_mutex_t` protecting it, in one allocation (the value is the
/// buffer's header, the mutex its single tail element), as swift-nio's `LockStorage`.
///
/// Uncontended lock/unlock costs a few nanoseconds, and ThreadSanitizer understands it (unlike
/// `Synchronization.Mutex` on Linux, which is slower here and invisible to TSan).
@usableFromInline
final class LockStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    @inlinable
    static func make(_ value: Value) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            #if DEBUG
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            let error = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            #else
            // Default attributes: no attribute object to create and destroy per lock.
            let error = pthread_mutex_init(mutex, nil)
            #endif
            precondition(error == 0, "pthread_mutex_init failed with error \(error)")
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            let error = pthread_mutex_destroy(mutex)
            precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
        }
    }

    @inlinable
    func lock() {
        withUnsafeMutablePointerToElements { mutex in
            let error = pthread_mutex_lock(mutex)
            precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
        }
    }

    @inlinable
    func unlock() {
        withUnsafeMutablePointerToElements { mutex in
            let error = pthread_mutex_unlock(mutex)
            precondition(error == 0, "pthread_mutex_unlock failed with error \(error)")
        }
    }

    /// The mutex, for use with a condition variable; valid while the storage is alive.
    @inlinable
    var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        withUnsafeMutablePointerToElements { $0 }
    }

    @inlinable
    func withLockedValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try withUnsafeMutablePointerToHeader { value throws(E) in try body(&value.pointee) }
    }
}

/// A mutual-exclusion lock over a `pthread_mutex_t` (one allocation, shared by copies).
///
/// Access is closure-scoped (`withLock`), so a lock is never left held by an early return or a
/// throw. Not recursive: locking it again on the thread that holds it is undefined behaviour
/// (an error-checking mutex in debug builds).
@usableFromInline
struct Lock {
    @usableFromInline
    let storage: LockStorage<Void>

    @inlinable
    init() {
        storage = .make(())
    }

    @inlinable
    func lock() {
        storage.lock()
    }

    @inlinable
    func unlock() {
        storage.unlock()
    }

    /// The underlying mutex, for `pthread_cond_wait`; valid while the lock is alive.
    @inlinable
    var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        storage.mutex
    }

    /// Runs `body` while holding the lock.
    @inlinable
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

// The storage is a pthread mutex (thread-safe) and an empty header (`ManagedBuffer` is never
// `Sendable`, hence unchecked).
extension Lock: @unchecked Sendable {}
