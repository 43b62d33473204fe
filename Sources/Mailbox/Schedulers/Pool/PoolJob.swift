/// A unit of work the pool runs: either a closure or an actor's mailbox run.
///
/// Subclasses override `run()`. The pool holds jobs as `Unmanaged` references: whoever enqueues
/// passes one retain (`passRetained`) that the worker consumes after `run()` returns, so an actor
/// is kept alive while its mailbox run is queued without a retain/release per queue operation.
@usableFromInline
class PoolJob {
    @usableFromInline
    init() {}

    /// Performs the job on a pool worker thread.
    @usableFromInline
    func run() {
        preconditionFailure("PoolJob.run() must be overridden")
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

    override func run() {
        if !cancellation.isDisposed {
            action()
        }
    }
}
