import Synchronization

extension CoordinatedShutdown {
    /// A task added with `addTask`: `cancel()` removes it while its phase has not started
    /// (Akka 2.6's `addCancellableTask` returns the same). Disposing is cancelling.
    ///
    /// Thread-safety: use from any thread. The handle keeps the coordinated shutdown alive,
    /// not the other way round: dropping the handle does not remove the task.
    public final class TaskHandle: Disposable {
        private let shutdown: CoordinatedShutdown
        private let phase: Int
        private let id: UInt64
        private let cancelled = Atomic<Bool>(false)

        init(shutdown: CoordinatedShutdown, phase: Int, id: UInt64) {
            self.shutdown = shutdown
            self.phase = phase
            self.id = id
        }

        /// Removes the task if its phase has not started.
        ///
        /// - Returns: `true` if the task was removed and will not run; `false` if it was
        ///   cancelled before, or its phase has started (it runs, or ran, to its end), or the
        ///   system terminated first.
        @discardableResult
        public func cancel() -> Bool {
            guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return false }
            return shutdown.cancelTask(phase: phase, id: id)
        }

        /// Whether `cancel()` (or `dispose()`) has been called.
        public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

        /// The same as `isCancelled`.
        public var isDisposed: Bool { isCancelled }

        /// The same as `cancel()`, ignoring its result.
        public func dispose() { cancel() }
    }
}
