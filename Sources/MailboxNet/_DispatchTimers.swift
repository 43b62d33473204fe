import Dispatch
import Synchronization

/// Makes sure Dispatch's timers work once descriptors run out.
///
/// On Linux, libdispatch creates the `timerfd` behind its timers lazily, when the first timer
/// is armed, and keeps it; if that creation fails (`EMFILE`), the timer silently never fires.
/// The listener's 100 ms pause after `EMFILE` and a connection's flush deadline are such
/// timers, armed exactly when descriptors may have run out. Arming one timer early, once per
/// process, creates the descriptor while there are some.
enum _DispatchTimers {
    /// Arms and awaits one 1 ms timer the first time it is read (thread-safe, once per process).
    static let ready: Void = {
        let fired = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { fired.signal() }
        fired.wait()
        armed.store(true, ordering: .releasing)
    }()

    /// Set once `ready` has run.
    private static let armed = Atomic<Bool>(false)

    /// `ready` for async code: returns at once after the first time; the first time it waits
    /// on a Dispatch global queue, not on the calling task's thread.
    static func readyWithoutBlocking() async {
        if armed.load(ordering: .acquiring) { return }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                ready
                continuation.resume()
            }
        }
    }
}
