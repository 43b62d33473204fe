extension ActorSystem {
    /// Terminates the system the coordinated way: runs `coordinatedShutdown`'s phases with
    /// reason `.actorSystemTerminate`, then stops every actor (children first), fails the asks
    /// still waiting, joins the pool's threads and closes the event stream (what `shutdown()`
    /// does), then runs the termination callbacks. Akka's `ActorSystem.terminate()`.
    ///
    /// Idempotent: a second call (or a concurrent one, or a signal) waits for the same
    /// termination and returns the same report. After `shutdown()`, it runs no phase and
    /// returns that shutdown's report.
    ///
    /// ```swift
    /// try system.coordinatedShutdown.addTask(phase: .serviceUnbind, name: "unbind") { listener.close() }
    /// let report = await system.terminate()      // report.failedTasks, report.actorsNotStopped
    /// ```
    ///
    /// Thread-safety: call from any task; not from a shutdown task (it would wait for its own
    /// phase) nor from a handler on the system's pool (use `Task { await system.terminate() }`).
    ///
    /// - Returns: The report of the termination: actors not stopped in time, dead letters,
    ///   failed asks, the tasks that failed or timed out, and the reason.
    @discardableResult
    public func terminate() async -> ShutdownReport {
        await coordinatedShutdown.run(reason: .actorSystemTerminate)
    }

    /// Waits until the system has terminated — by `terminate()`, a signal, the coordinated
    /// shutdown's `run`, or `shutdown()` — and returns the report (at once if it has). Akka's
    /// `whenTerminated`.
    ///
    /// Waits as long as that takes: it ignores the task's cancellation, and a system never shut
    /// down never terminates.
    public var whenTerminated: ShutdownReport {
        get async { await coordinatedShutdown.whenTerminated }
    }

    /// Whether the system has terminated (every termination callback has been called or is
    /// being called).
    public var isTerminated: Bool {
        coordinatedShutdown.terminationReport != nil
    }

    /// Calls `callback` exactly once, when the system has terminated (by any path): after the
    /// actors have stopped and the threads were joined, on the thread that finished the
    /// termination. Callbacks run newest first (as Akka's); a callback registered after the
    /// termination runs at once, on the caller's thread.
    ///
    /// Thread-safety: register from any thread. The system keeps `callback` until it has run.
    public func registerOnTermination(_ callback: @escaping @Sendable () -> Void) {
        coordinatedShutdown.addTerminationObserver { _ in callback() }
    }

    /// The termination as a producer: each start sends the report and completes once the
    /// system has terminated (at once if it has). Disposing before then stops waiting.
    public var terminated: SignalProducer<ShutdownReport, Never> {
        let shutdown = coordinatedShutdown
        return SignalProducer { observer, lifetime in
            let id = shutdown.addTerminationObserver { report in
                observer.send(value: report)
                observer.sendCompleted()
            }
            if let id {
                lifetime.observeEnded { shutdown.removeTerminationObserver(id) }
            }
        }
    }
}
