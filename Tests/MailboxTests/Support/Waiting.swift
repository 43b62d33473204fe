import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The upper bound for waiting on real-time schedulers. Generous, because the machine may be
/// shared and ThreadSanitizer slows everything down; a correct run waits far less.
let realTimeTimeout: DispatchTimeInterval = .seconds(20)

extension DispatchSemaphore {
    /// Waits for one signal, up to `realTimeTimeout`; `false` if it did not come in time.
    func waitBounded(_ timeout: DispatchTimeInterval = realTimeTimeout) -> Bool {
        wait(timeout: .now() + timeout) == .success
    }

    /// Waits for `count` signals, up to `realTimeTimeout` in all; `false` if they did not all come.
    func waitBounded(count: Int, _ timeout: DispatchTimeInterval = realTimeTimeout) -> Bool {
        let deadline = DispatchTime.now() + timeout
        for _ in 0..<count where wait(timeout: deadline) != .success {
            return false
        }
        return true
    }
}

extension DispatchGroup {
    /// Waits for the group to empty, up to `realTimeTimeout`; `false` if it did not in time.
    func waitBounded(_ timeout: DispatchTimeInterval = realTimeTimeout) -> Bool {
        wait(timeout: .now() + timeout) == .success
    }
}

/// Polls `condition` (yielding the processor between polls) until it holds, up to
/// `realTimeTimeout`; `false` if it never did. For state that offers no notification, such as
/// an `OperationQueue`'s operation count.
func spinUntil(_ timeout: DispatchTimeInterval = realTimeTimeout, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + timeout
    while !condition() {
        if DispatchTime.now() >= deadline { return false }
        sched_yield()
    }
    return true
}

/// Counts how many of the actions it brackets run at the same time, and the most that ever did.
final class ConcurrencyProbe: Sendable {
    private let state = Locked((running: 0, maximum: 0))

    /// The largest number of bracketed actions seen running at once.
    var maximum: Int { state.snapshot.maximum }

    /// Runs `body`, counted as running meanwhile.
    @discardableResult
    func run<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { state in
            state.running += 1
            state.maximum = max(state.maximum, state.running)
        }
        defer { state.withLock { $0.running -= 1 } }
        return try body()
    }
}

/// A gate that holds a real-time scheduler busy so that later actions stay queued: schedule
/// `hold` first, wait for `waitUntilHeld()`, then `open()`.
final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    /// The action that occupies the scheduler until `open()` (or the time-out).
    func hold() {
        entered.signal()
        _ = opened.waitBounded()
    }

    /// Waits until `hold()` is running (`count` times); `false` if it did not start in time.
    func waitUntilHeld(count: Int = 1, timeout: DispatchTimeInterval = realTimeTimeout) -> Bool {
        entered.waitBounded(count: count, timeout)
    }

    /// Lets every `hold()` return.
    func open(count: Int = 1) {
        for _ in 0..<count { opened.signal() }
    }
}

/// Releases a fixed number of threads at (nearly) the same instant, round after round, so that
/// races with a window of a few instructions are actually hit.
final class SpinBarrier: Sendable {
    private let parties: Int
    private let arrived = Atomic<Int>(0)

    init(parties: Int) {
        self.parties = parties
    }

    /// Waits, spinning, until every party has arrived for round `round` (0, 1, 2, …).
    func arriveAndWait(round: Int) {
        arrived.add(1, ordering: .acquiringAndReleasing)
        let target = parties * (round + 1)
        var spins = 0
        while arrived.load(ordering: .acquiring) < target {
            spins += 1
            if spins > 1_000 { sched_yield() }
        }
    }
}
