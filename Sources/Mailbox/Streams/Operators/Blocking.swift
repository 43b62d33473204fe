import Dispatch

// first(), single(), last(), wait(): start a producer and block the calling thread until it
// answers. Never call them on the thread (or serial scheduler) the producer sends on.

extension SignalProducer {
    /// Starts a run and blocks until it sends its first value or terminates.
    ///
    /// - Returns: The first value, the failure, or `nil` if the run completed or was
    ///   interrupted without a value.
    public func first() -> Result<Value, Error>? {
        take(first: 1).single()
    }

    /// Starts a run and blocks until it terminates.
    ///
    /// - Returns: The only value, if the run completed after exactly one value; the failure,
    ///   if it failed; `nil` otherwise (no value, more than one, or interrupted).
    public func single() -> Result<Value, Error>? {
        let semaphore = DispatchSemaphore(value: 0)
        let result = _Locked<(values: [Value], outcome: Result<Value, Error>?)>(locking: ([], nil))
        let disposable = take(first: 2).start { event in
            switch event {
            case let .value(value):
                result.withLock { $0.values.append(value) }
            case let .failed(error):
                result.withLock { $0.outcome = .failure(error) }
                semaphore.signal()
            case .completed:
                result.withLock { state in
                    if state.values.count == 1 { state.outcome = .success(state.values[0]) }
                }
                semaphore.signal()
            case .interrupted:
                semaphore.signal()
            }
        }
        semaphore.wait()
        disposable.dispose()
        return result.withLock { $0.outcome }
    }

    /// Starts a run and blocks until it terminates.
    ///
    /// - Returns: The last value, the failure, or `nil` if there was no value (or the run
    ///   was interrupted).
    public func last() -> Result<Value, Error>? {
        take(last: 1).single()
    }

    /// Starts a run and blocks until it terminates.
    ///
    /// - Returns: `.success` if it completed (or was interrupted), `.failure` if it failed.
    public func wait() -> Result<(), Error> {
        then(SignalProducer<(), Error>(value: ())).last() ?? .success(())
    }
}
