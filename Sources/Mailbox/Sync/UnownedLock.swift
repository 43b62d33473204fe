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

    /// Takes the lock and returns `true`, or returns `false` at once if the calling thread holds
    /// it already (where `lock()` would deadlock, or trap in debug builds). Blocks while another
    /// thread holds it. Only for a mutex that detects recursion (`MutexPair.first`).
    ///
    /// The uncontended path costs what `lock()` does, plus one load; who holds the lock is looked
    /// up only when it is held.
    @inlinable
    func lockUnlessHeldByCurrentThread() -> Bool {
        _lockUnlessHeldByCurrentThread(mutex)
    }

    /// Runs `body` while holding the lock.
    @inlinable
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
