#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Synchronization

/// A binary semaphore for one sleeping thread: `park` waits for a permit, `unpark` grants it.
final class Parker {
    private let lock = Lock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Protected by `lock`.
    private var permit = false

    init() {
        condition = .allocate(capacity: 1)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    func park() {
        lock.lock()
        while !permit {
            pthread_cond_wait(condition, lock.mutex)
        }
        permit = false
        lock.unlock()
    }

    func unpark() {
        lock.withLock {
            permit = true
            pthread_cond_signal(condition)
        }
    }
}

// `permit` is protected by `lock`; the condition variable is used only with `lock` held.
extension Parker: @unchecked Sendable {}
