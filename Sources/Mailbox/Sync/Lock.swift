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

/// Two `pthread_mutex_t`s in one raw allocation, for an object that needs two locks (a signal
/// core's send and state locks). Not reference-counted, so using one costs no retain/release:
/// the owner calls `deallocate()` exactly once, from its deinit, when no thread can reach the
/// mutexes any more. The first one supports `lockUnlessHeldByCurrentThread()`.
@usableFromInline
struct MutexPair {
    @usableFromInline
    let base: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    init() {
        // `malloc` (whose alignment suits a mutex) rather than `allocate(capacity:)`, which
        // went through `posix_memalign` here, about twice the cost.
        guard let memory = malloc(2 * MemoryLayout<pthread_mutex_t>.stride) else {
            fatalError("out of memory allocating two mutexes")
        }
        base = memory.bindMemory(to: pthread_mutex_t.self, capacity: 2)
        _initialiseMutex(base, errorChecking: _needsErrorCheckingMutex(detectingRecursion: true))
        _initialiseMutex(base + 1, errorChecking: _needsErrorCheckingMutex(detectingRecursion: false))
    }

    /// Destroys both mutexes and frees them. Call once, when neither is held or reachable.
    @usableFromInline
    func deallocate() {
        for index in 0..<2 {
            let error = pthread_mutex_destroy(base + index)
            precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
        }
        free(base)
    }

    /// The first mutex; valid until `deallocate()`.
    @inlinable
    var first: UnownedLock { UnownedLock(base) }

    /// The second mutex; valid until `deallocate()`.
    @inlinable
    var second: UnownedLock { UnownedLock(base + 1) }
}

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

/// Whether a mutex must be of the error-checking type: in debug builds always (a relock traps
/// instead of deadlocking); in release builds where `_lockUnlessHeldByCurrentThread` needs one
/// to find out whether the calling thread holds the mutex (everywhere but glibc, whose mutexes
/// record their owner whatever their type).
@inlinable
func _needsErrorCheckingMutex(detectingRecursion: Bool) -> Bool {
    #if DEBUG
    return true
    #elseif canImport(Glibc)
    return false
    #else
    return detectingRecursion
    #endif
}

/// Initialises `mutex`: error-checking or with default attributes (no attribute object to
/// create and destroy per lock).
@inlinable
func _initialiseMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, errorChecking: Bool) {
    let error: Int32
    if errorChecking {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        error = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    } else {
        error = pthread_mutex_init(mutex, nil)
    }
    precondition(error == 0, "pthread_mutex_init failed with error \(error)")
}

/// Takes `mutex` and returns `true`, or returns `false` at once if the calling thread holds it.
///
/// glibc records the holder's thread id in every mutex (`__data.__owner`, written after taking
/// it and cleared before releasing it, whatever the mutex type), so the calling thread holds the
/// mutex exactly when that field holds its id: another holder has either written its own id or
/// not yet any (the previous holder cleared it). An unheld mutex (owner 0) is simply locked, by
/// `pthread_mutex_lock` — not `trylock`, which would cost an atomic operation where glibc's lock
/// in a single-threaded process needs none; if another thread takes it in between, that is
/// contention and the lock waits. Only a held mutex costs the lookup of this thread's id.
/// (glibc's lock elision, off unless a tunable enables it, records no owner: with it on, a
/// relock would block as a plain `lock()` does.) Elsewhere the mutex is error-checking and
/// `pthread_mutex_lock` reports `EDEADLK`.
@inlinable
func _lockUnlessHeldByCurrentThread(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> Bool {
    #if canImport(Glibc)
    if mutex.pointee.__data.__owner != 0 { return _lockUnlessOwned(mutex) }
    let error = pthread_mutex_lock(mutex)
    precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
    return true
    #else
    let error = pthread_mutex_lock(mutex)
    if error == EDEADLK { return false }
    precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
    return true
    #endif
}

#if canImport(Glibc)
/// The slow path of `_lockUnlessHeldByCurrentThread` on glibc, for a mutex found held: `false`
/// if the calling thread holds it, else blocks until it has taken it and returns `true`.
@usableFromInline
@inline(never)
func _lockUnlessOwned(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) -> Bool {
    if mutex.pointee.__data.__owner == _currentThreadID() { return false }
    let error = pthread_mutex_lock(mutex)
    precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
    return true
}

/// A thread-specific slot caching `_currentThreadID()`.
private let _threadIDKey: pthread_key_t = {
    var key = pthread_key_t()
    let error = pthread_key_create(&key, nil)
    precondition(error == 0, "pthread_key_create failed with error \(error)")
    return key
}()

/// The calling thread's kernel id, as glibc records it as a mutex's owner (`gettid()` is not
/// imported into Swift): read once per thread from a private mutex the thread takes for the
/// purpose, then cached in a thread-specific slot.
@usableFromInline
func _currentThreadID() -> Int32 {
    if let cached = pthread_getspecific(_threadIDKey) {
        return Int32(truncatingIfNeeded: Int(bitPattern: cached))
    }
    var probe = pthread_mutex_t()
    let id = withUnsafeMutablePointer(to: &probe) { mutex in
        pthread_mutex_init(mutex, nil)
        pthread_mutex_lock(mutex)
        let id = mutex.pointee.__data.__owner
        pthread_mutex_unlock(mutex)
        pthread_mutex_destroy(mutex)
        return id
    }
    pthread_setspecific(_threadIDKey, UnsafeRawPointer(bitPattern: Int(id)))
    return id
}
#endif

// The storage is a pthread mutex (thread-safe) and an empty header (`ManagedBuffer` is never
// `Sendable`, hence unchecked).
extension Lock: @unchecked Sendable {}

// The value is only reachable through `withLockedValue`, which holds the mutex.
extension LockedValueBox: @unchecked Sendable where Value: Sendable {}
