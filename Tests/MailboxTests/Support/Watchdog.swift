import Dispatch
import Foundation

/// Runs `body` on a thread of its own and waits for it, up to `realTimeTimeout`: `true` if it
/// returned in time. For re-entrance tests, so a deadlock fails the test instead of hanging the
/// suite (the stuck thread is abandoned).
///
/// In debug builds a same-thread relock of one of the library's error-checking mutexes is a
/// precondition failure rather than a hang; either way a broken implementation fails.
func finishesWithoutDeadlock(_ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = 4 << 20
    thread.start()
    return done.waitBounded()
}
