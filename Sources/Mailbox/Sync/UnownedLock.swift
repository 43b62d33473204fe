#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One mutex of a `MutexPair`, with `Lock`'s `lock`/`unlock`/`withLock`/`mutex`. Does not own
/// the mutex: valid only while the pair's owner has not deallocated it.
@usableFromInline
struct UnownedLock {
    @usableFromInline
    let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    init(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        self.mutex = mutex
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
