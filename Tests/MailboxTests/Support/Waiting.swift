import Dispatch
import Foundation

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
