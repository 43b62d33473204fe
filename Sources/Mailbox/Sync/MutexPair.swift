#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Two `pthread_mutex_t`s in one raw allocation, for an object that needs two locks (a signal
/// core's send and state locks). Not reference-counted, so using one costs no retain/release:
/// the owner calls `deallocate()` exactly once, from its deinit, when no thread can reach the
/// mutexes any more. The first one supports `lockUnlessHeldByCurrentThread()`.
///
/// A different kind from `Lock` and `LockedValueBox`, kept for the hot path: one allocation and
/// no retain/release for two locks that live exactly as long as their owner, a signal's core,
/// on every event sent.
@usableFromInline
struct MutexPair {
    @usableFromInline
    let base: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    init() {
        // `malloc` (whose alignment suits a mutex) rather than `allocate(capacity:)`, which
        // went through the slower `posix_memalign` here (see docs/Performance.md).
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
