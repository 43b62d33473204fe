/// An ask that `shutdown()` can fail: the promises of a system's asks that have not completed.
protocol _ShutdownFailable: AnyObject, Sendable {
    /// Completes the ask with `AskError.systemShutDown`, unless it has completed already.
    /// Returns whether this call completed it.
    func failAtShutdown() -> Bool
}

/// The asks of one system that have not completed yet.
///
/// `shutdown()` fails them once the actors have stopped: without this an ask in flight would
/// wait for its time-out, whose timer a shut-down pool never runs (the awaiting task would
/// hang for ever), and on a `TestScheduler` nobody advances any more.
///
/// Thread-safety: every method from any thread; the dictionary is behind its lock.
final class PendingAsks: Sendable {
    private struct State {
        var asks: [ObjectIdentifier: any _ShutdownFailable] = [:]
        /// Set by `close()`: the system has shut down and takes no new ask.
        var isClosed = false
    }

    /// Protected by its own lock.
    private let state = LockedValueBox(State())

    /// Registers `ask`; `false` if the system has shut down (the caller fails the ask at once).
    func insert(_ ask: any _ShutdownFailable) -> Bool {
        state.withLockedValue { state in
            guard !state.isClosed else { return false }
            state.asks[ObjectIdentifier(ask)] = ask
            return true
        }
    }

    /// Forgets `ask` (it completed). Does nothing if it is not registered.
    func remove(_ ask: AnyObject) {
        state.withLockedValue { state in
            _ = state.asks.removeValue(forKey: ObjectIdentifier(ask))
        }
    }

    /// The number of asks registered.
    var count: Int {
        state.withLockedValue { $0.asks.count }
    }

    /// Refuses every later `insert` and fails every registered ask (outside the lock: failing
    /// runs the asker's completion). Returns how many this call failed.
    func close() -> Int {
        let asks = state.withLockedValue { state in
            state.isClosed = true
            defer { state.asks = [:] }
            return Array(state.asks.values)
        }
        var failed = 0
        for ask in asks where ask.failAtShutdown() {
            failed += 1
        }
        return failed
    }
}
