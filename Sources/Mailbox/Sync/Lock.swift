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
        make(value, detectingRecursion: false)
    }

    /// A lock whose `lockUnlessHeldByCurrentThread()` can tell a relock from the holding thread
    /// apart from contention: on glibc any mutex can (see `_lockUnlessHeldByCurrentThread`);
    /// elsewhere it needs an error-checking mutex, which `detectingRecursion` asks for in release
    /// builds too.
    @inlinable
    static func make(_ value: Value, detectingRecursion: Bool) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            _initialiseMutex(mutex, errorChecking: _needsErrorCheckingMutex(detectingRecursion: detectingRecursion))
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

    /// See `UnownedLock.lockUnlessHeldByCurrentThread()`; the storage must have been made with
    /// `detectingRecursion: true`.
    @inlinable
    func lockUnlessHeldByCurrentThread() -> Bool {
        withUnsafeMutablePointerToElements { _lockUnlessHeldByCurrentThread($0) }
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
/// A different kind from `LockedValueBox`, kept for what a box cannot do: it guards no value of
/// its own but an object's several fields, can be taken and released in different calls
/// (`lock()`/`unlock()`), waited on with a condition variable (`mutex`), and asked whether the
/// calling thread holds it (`lockUnlessHeldByCurrentThread()`). Where state fits in one value,
/// use `LockedValueBox`.
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

    /// A lock that can tell whether the calling thread holds it: see
    /// `lockUnlessHeldByCurrentThread()`.
    @inlinable
    init(detectingRecursion: Void) {
        storage = .make((), detectingRecursion: true)
    }

    @inlinable
    func lock() {
        storage.lock()
    }

    /// Takes the lock and returns `true`, or returns `false` at once if the calling thread holds
    /// it already (where a plain `lock()` would deadlock, or trap in debug builds). Blocks while
    /// another thread holds it. Requires `init(detectingRecursion:)`.
    @inlinable
    func lockUnlessHeldByCurrentThread() -> Bool {
        storage.lockUnlessHeldByCurrentThread()
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
