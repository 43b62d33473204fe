#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    if mutex.pointee.__data.__owner == _currentKernelThreadID() { return false }
    let error = pthread_mutex_lock(mutex)
    precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
    return true
}

/// A thread-specific slot caching `_currentKernelThreadID()`.
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
func _currentKernelThreadID() -> Int32 {
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
