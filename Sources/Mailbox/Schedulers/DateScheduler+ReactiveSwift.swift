import Dispatch
import Foundation
import Synchronization

// ReactiveSwift's `DateScheduler` conveniences: a repeating action after a delay given as a
// `DispatchTimeInterval`, and the Swift concurrency helpers `sleep(for:leeway:)`,
// `sleep(until:leeway:)` and `timer(interval:leeway:)`.

extension DateScheduler {
    /// Schedules `action` to run first `delay` after `currentDate`, then every `interval`,
    /// until the returned disposable is disposed.
    ///
    /// Disfavoured so that `.seconds(1)` literals keep meaning the `Duration` overload
    /// (`schedule(after:interval:leeway:action:)` with `Duration`s, which does the same);
    /// `DispatchTimeInterval` values pick this one.
    @_disfavoredOverload
    @discardableResult
    public func schedule(
        after delay: DispatchTimeInterval,
        interval: DispatchTimeInterval,
        leeway: DispatchTimeInterval = .seconds(0),
        action: @escaping @Sendable () -> Void
    ) -> (any Disposable)? {
        schedule(after: currentDate.addingTimeInterval(delay.timeInterval), interval: interval, leeway: leeway, action: action)
    }

    /// Suspends the calling task until `interval` has passed on this scheduler's clock (for a
    /// `TestScheduler`: until the test advances it that far). The scheduler is not blocked.
    ///
    /// - Throws: `CancellationError` if the task is cancelled before or while sleeping (the
    ///   scheduled wake-up is then cancelled).
    /// - Precondition: `interval` and `leeway` are not negative.
    public func sleep(for interval: DispatchTimeInterval, leeway: DispatchTimeInterval = .seconds(0)) async throws {
        precondition(interval.nanoseconds >= 0, "sleep(for:) requires a non-negative interval, not \(interval)")
        precondition(leeway.nanoseconds >= 0, "sleep(for:) requires a non-negative leeway, not \(leeway)")
        try Task.checkCancellation()
        let sleep = _SchedulerSleep()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Swift.Error>) in
                let wake = schedule(after: currentDate.addingTimeInterval(interval.timeInterval)) {
                    sleep.finish(throwing: nil)
                }
                sleep.start(continuation, wake: wake)
            }
        } onCancel: {
            sleep.finish(throwing: CancellationError())
        }
    }

    /// Suspends the calling task until `deadline` on this scheduler's clock; see
    /// `sleep(for:leeway:)`.
    ///
    /// - Precondition: `deadline` is later than `currentDate`; `leeway` is not negative.
    public func sleep(until deadline: Date, leeway: DispatchTimeInterval = .seconds(0)) async throws {
        precondition(deadline > currentDate, "sleep(until:) requires a deadline in the future, not \(deadline)")
        let nanoseconds = TimeConversion.nanoseconds(deadline.timeIntervalSince(currentDate))
        try await sleep(for: .nanoseconds(Int(clamping: nanoseconds)), leeway: leeway)
    }

    /// An `AsyncStream` of `currentDate`, sent every `interval` (the first time one `interval`
    /// from now) until the consuming task is cancelled or the stream is released, which
    /// cancels the timer. Dates the consumer has not taken yet are buffered.
    ///
    /// - Precondition: `interval` is positive and `leeway` is not negative.
    public func timer(interval: DispatchTimeInterval, leeway: DispatchTimeInterval = .seconds(0)) -> AsyncStream<Date> {
        precondition(interval.nanoseconds > 0, "timer(interval:) requires a positive interval, not \(interval)")
        precondition(leeway.nanoseconds >= 0, "timer(interval:) requires a non-negative leeway, not \(leeway)")
        return AsyncStream { continuation in
            let timer = schedule(after: currentDate.addingTimeInterval(interval.timeInterval), interval: interval, leeway: leeway) {
                continuation.yield(self.currentDate)
            }
            continuation.onTermination = { _ in timer?.dispose() }
        }
    }
}

/// One `sleep`: resumes its continuation exactly once — when the wake-up runs or when the
/// task is cancelled, whichever comes first (the other does nothing) — and cancels the
/// wake-up on cancellation. Cancellation may come before the continuation exists.
final class _SchedulerSleep: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Swift.Error>?
        var wake: (any Disposable)?
        /// Set by the first `finish`: the outcome, kept for a `start` that comes later.
        var outcome: Result<Void, any Swift.Error>?
    }

    /// Protected by its own lock.
    private let state = LockedValueBox(State())

    /// Stores the continuation and the wake-up's disposable, or — if the sleep already finished
    /// (cancelled first) — cancels the wake-up and resumes at once.
    func start(_ continuation: CheckedContinuation<Void, any Swift.Error>, wake: (any Disposable)?) {
        let outcome: Result<Void, any Swift.Error>? = state.withLockedValue { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            state.wake = wake
            return nil
        }
        if let outcome {
            wake?.dispose()
            continuation.resume(with: outcome)
        }
    }

    /// Finishes the sleep: with `error` (cancellation) or normally; only the first call counts.
    func finish(throwing error: (any Swift.Error)?) {
        let outcome: Result<Void, any Swift.Error> = error.map { .failure($0) } ?? .success(())
        let taken: (CheckedContinuation<Void, any Swift.Error>?, (any Disposable)?)? = state.withLockedValue { state in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            let taken = (state.continuation, state.wake)
            state.continuation = nil
            state.wake = nil
            return taken
        }
        guard let (continuation, wake) = taken else { return }
        if error != nil { wake?.dispose() }
        continuation?.resume(with: outcome)
    }
}

extension TestScheduler {
    /// Schedules `action` `delay` after the current virtual instant, counted exactly in
    /// nanoseconds.
    ///
    /// Disfavoured so that `.seconds(1)` literals keep meaning the `Duration` overload, which
    /// does the same; `DispatchTimeInterval` values pick this one.
    @_disfavoredOverload
    @discardableResult
    public func schedule(after delay: DispatchTimeInterval, action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        schedule(after: Duration.nanoseconds(delay.nanoseconds), action: action)
    }
}

/// A scheduler that runs actions on the main queue, in order: at once, on the calling thread,
/// when called from the main queue with nothing of its own still queued; otherwise
/// asynchronously on `DispatchQueue.main`.
///
/// On Linux the main queue only runs while the main thread services it (`dispatchMain()`, a
/// `RunLoop`, or an `async` `main`, which may then run it on another thread): a command-line
/// server that never does should use a `QueueScheduler` instead.
///
/// Thread-safety: schedule from any thread.
public final class UIScheduler: Scheduler {
    /// Marks the main queue (set once, by the first `UIScheduler`): `getSpecific` finds it
    /// only in blocks running on the main queue, on whichever thread.
    private static let mainQueueKey: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    /// Actions scheduled and not yet finished (including one running synchronously).
    private let queueLength = Atomic<Int>(0)

    /// Creates a main-queue scheduler.
    public init() {
        _ = Self.mainQueueKey
    }

    /// Runs `action` now if called from the main queue with nothing of this scheduler's
    /// queued, else enqueues it on the main queue.
    ///
    /// - Returns: `nil` if `action` ran synchronously, else a disposable that skips it if
    ///   disposed before it starts.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let position = queueLength.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        if position == 1, DispatchQueue.getSpecific(key: Self.mainQueueKey) == 1 {
            action()
            queueLength.wrappingSubtract(1, ordering: .acquiringAndReleasing)
            return nil
        }
        let disposable = AnyDisposable()
        DispatchQueue.main.async { [self] in
            if !disposable.isDisposed { action() }
            queueLength.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        }
        return disposable
    }
}
