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

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let operation = BlockOperation(block: action)
        queue.addOperation(operation)
        return OperationDisposable(operation)
    }

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

    @discardableResult
    public func schedule(
        after date: Date,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval,
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        let operations = CompositeDisposable()
        let timer = timerQueue.repeatingTimer(from: date, interval: interval, leeway: leeway) { [queue] in
            let operation = BlockOperation(block: action)
            // Each tick's handle leaves the composite when its operation finishes.
            let handle = operations.add(OperationDisposable(operation))
            operation.completionBlock = { handle?.dispose() }
            if handle != nil { queue.addOperation(operation) }
        }
        return AnyDisposable {
            timer.dispose()
            operations.dispose()
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
