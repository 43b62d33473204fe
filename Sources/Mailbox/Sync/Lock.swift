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
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #endif
            let error = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
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

/// A value protected by its own lock, reachable only inside `withLockedValue`; value and mutex
/// share one allocation, and copies of the box share both.
///
/// The shape of swift-nio's `NIOLockedValueBox`: the only way to the value is a closure that runs
/// with the lock held, so no access can forget the lock.
@usableFromInline
struct LockedValueBox<Value> {
    @usableFromInline
    let storage: LockStorage<Value>

    @inlinable
    init(_ value: Value) {
        storage = .make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    func withLockedValue<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try storage.withLockedValue(body)
    }
}

/// Two `pthread_mutex_t`s in one allocation, for an object that needs two locks (a signal
/// core's send and state locks): one object fewer to allocate and free than two `Lock`s.
@usableFromInline
final class LockPairStorage: ManagedBuffer<Void, pthread_mutex_t> {
    @inlinable
    static func make() -> LockPairStorage {
        let buffer = create(minimumCapacity: 2) { _ in }
        let storage = unsafeDowncast(buffer, to: LockPairStorage.self)
        storage.withUnsafeMutablePointerToElements { mutexes in
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #endif
            for index in 0..<2 {
                let error = pthread_mutex_init(mutexes + index, &attributes)
                precondition(error == 0, "pthread_mutex_init failed with error \(error)")
            }
            pthread_mutexattr_destroy(&attributes)
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { mutexes in
            for index in 0..<2 {
                let error = pthread_mutex_destroy(mutexes + index)
                precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
            }
        }
    }
}

/// One of the two mutexes of a `LockPairStorage`, with `Lock`'s `lock`/`unlock`/`mutex`. Does
/// not retain the storage: valid only while its owner keeps the storage alive.
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

/// Two locks sharing one allocation (see `LockPairStorage`); copies share both.
@usableFromInline
struct LockPair {
    @usableFromInline
    let storage: LockPairStorage

    @inlinable
    init() {
        storage = .make()
    }

    /// The first mutex; valid while this pair (or a copy) is alive.
    @inlinable
    var first: UnownedLock {
        UnownedLock(storage.withUnsafeMutablePointerToElements { $0 })
    }

    /// The second mutex; valid while this pair (or a copy) is alive.
    @inlinable
    var second: UnownedLock {
        UnownedLock(storage.withUnsafeMutablePointerToElements { $0 + 1 })
    }
}

// The storage is a pthread mutex (thread-safe) and an empty header (`ManagedBuffer` is never
// `Sendable`, hence unchecked).
extension Lock: @unchecked Sendable {}

// The value is only reachable through `withLockedValue`, which holds the mutex.
extension LockedValueBox: @unchecked Sendable where Value: Sendable {}

// Two pthread mutexes and an empty header (`ManagedBuffer` is never `Sendable`, hence unchecked).
extension LockPair: @unchecked Sendable {}
