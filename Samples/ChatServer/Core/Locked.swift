#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value and the `pthread_mutex_t` protecting it, in one allocation (the value is the buffer's
/// header, the mutex its single tail element). Used through `Locked`.
final class _LockStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> _LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let box = unsafeDowncast(buffer, to: _LockStorage<Value>.self)
        box.withUnsafeMutablePointerToElements { mutex in
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #endif
            let error = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            precondition(error == 0, "pthread_mutex_init failed with error \(error)")
        }
        return box
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            let error = pthread_mutex_destroy(mutex)
            precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
        }
    }
}

/// A value behind a pthread mutex, reachable only inside `withLock`; copies share value and lock.
///
/// The module's only lock (the socket layer and the server's shared objects). A pthread mutex
/// rather than `Synchronization.Mutex`, which ThreadSanitizer cannot see on Linux. The value is reachable only inside `withLock`, so no
/// access can forget the lock. Not recursive: calling `withLock` again from inside `body` on the
/// same box is undefined behaviour (an error-checking mutex in debug builds traps).
struct Locked<Value> {
    private let storage: _LockStorage<Value>

    init(_ value: Value) {
        storage = .make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        storage.withUnsafeMutablePointerToElements { mutex in
            let error = pthread_mutex_lock(mutex)
            precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
        }
        defer {
            storage.withUnsafeMutablePointerToElements { mutex in
                let error = pthread_mutex_unlock(mutex)
                precondition(error == 0, "pthread_mutex_unlock failed with error \(error)")
            }
        }
        return try storage.withUnsafeMutablePointerToHeader { value throws(E) in try body(&value.pointee) }
    }
}

// The value is only reachable through `withLock`, which holds the storage's pthread mutex.
extension Locked: @unchecked Sendable {}
