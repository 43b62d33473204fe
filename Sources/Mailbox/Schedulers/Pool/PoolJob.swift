/// A unit of work the pool runs: either a closure or an actor's mailbox run.
///
/// Subclasses override `runJob()`. The pool holds jobs as `Unmanaged` references. Whoever enqueues
/// a job normally passes one retain (`passRetained`) that the worker gives back after the run,
/// so a job is kept alive while queued without a retain/release per queue operation. An actor
/// cell may be queued *without* a retain when something else is sure to keep it alive until
/// its run returns (see `ActorCell.scheduleRun`); it says so through `runJobOnWorker()` and
/// `isRetainedByQueue`.
@usableFromInline
class PoolJob {
    @usableFromInline
    init() {}

    /// Performs the job on a pool worker thread.
    @usableFromInline
    func runJob() {
        preconditionFailure("PoolJob.runJob() must be overridden")
    }

    /// Runs the job for a pool worker; returns whether the worker must then release the retain
    /// the job was queued with. The default runs `runJob()` and returns `true`.
    func runJobOnWorker() -> Bool {
        runJob()
        return true
    }

    /// Whether the job holds the retain it was queued with: what a pool releasing queued jobs
    /// without running them (at shutdown) gives back. The default is `true`.
    var isRetainedByQueue: Bool { true }
}

extension Unmanaged where Instance == PoolJob {
    /// Gives back the queue's retain of a job that will not run (if it holds one).
    func releaseUnrun() {
        if _withUnsafeGuaranteedRef({ $0.isRetainedByQueue }) {
            release()
        }
    }
}

/// A closure scheduled on the pool, cancellable until it starts.
final class ClosureJob: PoolJob {
    let action: @Sendable () -> Void
    let cancellation: AnyDisposable

    init(_ action: @escaping @Sendable () -> Void, cancellation: AnyDisposable) {
        self.action = action
        self.cancellation = cancellation
    }

    override func runJob() {
        if !cancellation.isDisposed {
            action()
        }
    }
}
