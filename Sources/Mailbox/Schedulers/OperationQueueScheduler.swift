import Dispatch
import Foundation

/// A scheduler backed by an `OperationQueue`.
///
/// - Each action becomes one `BlockOperation`; disposing the returned disposable cancels that
///   operation, so an action cancelled before it starts never runs.
/// - With `maxConcurrentOperationCount == 1` (the default of the convenience initialiser) the
///   scheduler is serial: actions run one at a time, in the order scheduled.
/// - With a width above 1 actions may run at the same time on different threads. They *start*
///   in the order they were scheduled (FIFO start order), but nothing orders them beyond that:
///   one may finish before an earlier one. Do not use such a scheduler for an actor or a
///   signal that relies on serial delivery.
/// - Timed actions wait on a private dispatch queue and are added to the operation queue when
///   due, never before their date; cancelling one releases it at once, not at its date.
///   Repeating actions add one operation per tick; with a width above 1, a slow run may overlap
///   the next.
///
/// Thread-safety: schedule from any thread. `currentDate` is the wall clock.
///
/// What keeps what alive: an action is retained by its `BlockOperation`, which the operation
/// queue keeps until the operation has finished (or, cancelled, been discarded), and which the
/// returned disposable also keeps for as long as the caller holds it. A timed action waits in a
/// small box that disposal empties at once, so a cancelled one is released before its date. A
/// repeating action is retained by its timer until disposed. Actions and timers capture the
/// operation queue, not the scheduler: dropping the scheduler cancels nothing.
public final class OperationQueueScheduler: DateScheduler {
    /// The operation queue actions run on.
    public let queue: OperationQueue

    /// Where timed actions wait until they are due.
    private let timerQueue: DispatchQueue

    /// The wall clock.
    public var currentDate: Date { Date() }

    /// Creates a scheduler on an existing operation queue; the scheduler is serial exactly when
    /// the queue's `maxConcurrentOperationCount` is 1.
    public init(queue: OperationQueue) {
        self.queue = queue
        self.timerQueue = DispatchQueue(label: "Mailbox.OperationQueueScheduler.timers")
    }

    /// Creates a scheduler on a new operation queue.
    ///
    /// - Parameters:
    ///   - name: The queue's name.
    ///   - qualityOfService: The queue's quality of service.
    ///   - maxConcurrentOperationCount: The queue's width; 1 (the default) makes it serial.
    public convenience init(
        name: String = "Mailbox.OperationQueueScheduler",
        qualityOfService: QualityOfService = .default,
        maxConcurrentOperationCount: Int = 1
    ) {
        let queue = OperationQueue()
        queue.name = name
        queue.qualityOfService = qualityOfService
        queue.maxConcurrentOperationCount = maxConcurrentOperationCount
        self.init(queue: queue)
    }

    /// Adds `action` to `queue` as one `BlockOperation`.
    ///
    /// - Returns: A disposable that cancels the operation, so an action not yet started never
    ///   runs.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let operation = BlockOperation(block: action)
        queue.addOperation(operation)
        return OperationDisposable(operation)
    }

    /// Adds `action` to `queue` as an operation once `date` has come (never before it).
    ///
    /// - Returns: A disposable that cancels the action at either stage: before its date it
    ///   releases the action at once; after, it cancels the operation.
    @discardableResult
    public func schedule(after date: Date, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        // Until due, `serial` holds the pending action (released at once if cancelled); once due,
        // the operation, so that disposing cancels whichever stage the action is in.
        let serial = SerialDisposable()
        let pending = PendingAction { [queue] in
            let operation = BlockOperation(block: action)
            serial.inner = OperationDisposable(operation)
            queue.addOperation(operation)
        }
        serial.inner = pending
        timerQueue.asyncNotEarly(at: date, pending)
        return serial
    }

    /// Adds one operation running `action` to `queue` first at or after `date` (never before
    /// it), then every `interval`; with a width above 1 a slow run may overlap the next.
    ///
    /// - Returns: A disposable that stops the timer, cancels the operations not yet started and
    ///   releases `action`.
    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        let operations = CompositeDisposable()
        return timerQueue.repeatingSchedule(
            from: date, interval: interval, leeway: leeway, onStop: { operations.dispose() }
        ) { [queue] _ in
            let operation = BlockOperation(block: action)
            // Each tick's handle leaves the composite when its operation finishes.
            let handle = operations.add(OperationDisposable(operation))
            operation.completionBlock = { handle?.dispose() }
            if handle != nil { queue.addOperation(operation) }
        }
    }
}

/// Cancels an operation when disposed.
private final class OperationDisposable: Disposable {
    private let operation: Operation
    private let disposed = AnyDisposable()

    init(_ operation: Operation) {
        self.operation = operation
    }

    var isDisposed: Bool { disposed.isDisposed }

    func dispose() {
        disposed.dispose()
        operation.cancel()
    }
}

// `Operation.cancel()` is documented as thread-safe; `disposed` is atomic; both are immutable refs.
extension OperationDisposable: @unchecked Sendable {}
