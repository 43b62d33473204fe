// Swift concurrency bridges: streams as `AsyncSequence`s, `async` first value, and producers
// and signals built from an `AsyncSequence`.
//
// Buffering: a stream pushes, an `AsyncSequence` is pulled; between the two sits the
// `AsyncStream` buffer. It is bounded by default (`streamBufferLimit` values, the newest kept)
// so a slow consumer of a fast stream cannot grow memory without bound; pass another
// `bufferingPolicy` to choose (`.unbounded` only when you mean it).

/// The default capacity of the `AsyncStream` buffer between a stream and an `async` consumer
/// (`values`): beyond it the oldest buffered values are dropped and the newest kept.
public let streamBufferLimit = 1_024

// MARK: - Signal → AsyncSequence

extension Signal where Value: Sendable, Error == Never {
    /// The signal's values as an `AsyncStream`, for `for await value in signal.values`.
    ///
    /// Observes the signal when accessed (values sent before are missed: the signal is hot);
    /// the sequence ends when the signal terminates. Buffers at most `streamBufferLimit`
    /// values a slow consumer has not taken yet, dropping the oldest; see
    /// `values(bufferingPolicy:)`. Cancelling the iterating task (or dropping the sequence)
    /// ends the observation.
    public var values: AsyncStream<Value> {
        values(bufferingPolicy: .bufferingNewest(streamBufferLimit))
    }

    /// The signal's values as an `AsyncStream` with the given buffer; see `values`.
    public func values(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy) -> AsyncStream<Value> {
        AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
            let detach = self.observe { event in
                if case let .value(value) = event {
                    continuation.yield(value)
                } else {
                    continuation.finish()
                }
            }
            continuation.onTermination = { _ in detach?.dispose() }
            if detach == nil { continuation.finish() }
        }
    }
}

extension Signal where Value: Sendable {
    /// The signal's values as an `AsyncThrowingStream`, for
    /// `for try await value in signal.values`: it ends when the signal completes or is
    /// interrupted, and throws the signal's error when it fails. Buffering and cancellation as
    /// for the non-failing `values`.
    public var values: AsyncThrowingStream<Value, any Swift.Error> {
        values(bufferingPolicy: .bufferingNewest(streamBufferLimit))
    }

    /// The signal's values as an `AsyncThrowingStream` with the given buffer; see `values`.
    public func values(bufferingPolicy: AsyncThrowingStream<Value, any Swift.Error>.Continuation.BufferingPolicy) -> AsyncThrowingStream<Value, any Swift.Error> {
        AsyncThrowingStream(bufferingPolicy: bufferingPolicy) { continuation in
            let detach = self.observe { event in
                switch event {
                case let .value(value): continuation.yield(value)
                case let .failed(error): continuation.finish(throwing: error)
                case .completed, .interrupted: continuation.finish()
                }
            }
            continuation.onTermination = { _ in detach?.dispose() }
            if detach == nil { continuation.finish() }
        }
    }
}

// MARK: - SignalProducer → async

extension SignalProducer where Value: Sendable, Error == Never {
    /// Starts one run when accessed and returns its values as an `AsyncStream`; the sequence
    /// ends when the run terminates. Cancelling the iterating task (or dropping the sequence)
    /// interrupts the run. Buffers at most `streamBufferLimit` values (the newest kept); see
    /// `values(bufferingPolicy:)`.
    public var values: AsyncStream<Value> {
        values(bufferingPolicy: .bufferingNewest(streamBufferLimit))
    }

    /// One run's values as an `AsyncStream` with the given buffer; see `values`.
    public func values(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy) -> AsyncStream<Value> {
        AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
            let run = SerialDisposable()
            continuation.onTermination = { _ in run.dispose() }
            run.inner = self.start { event in
                if case let .value(value) = event {
                    continuation.yield(value)
                } else {
                    continuation.finish()
                }
            }
        }
    }

    /// Starts one run and returns its first value, then interrupts the run; `nil` if the run
    /// completed (or was interrupted) without a value.
    ///
    /// Suspends, never blocks a thread. Cancelling the waiting task interrupts the run and
    /// returns `nil`.
    public func first() async -> Value? {
        try? await _first()
    }
}

extension SignalProducer where Value: Sendable {
    /// Starts one run when accessed and returns its values as an `AsyncThrowingStream` that
    /// throws the run's error if it fails. Buffering and cancellation as for the non-failing
    /// `values`.
    public var values: AsyncThrowingStream<Value, any Swift.Error> {
        values(bufferingPolicy: .bufferingNewest(streamBufferLimit))
    }

    /// One run's values as an `AsyncThrowingStream` with the given buffer; see `values`.
    public func values(bufferingPolicy: AsyncThrowingStream<Value, any Swift.Error>.Continuation.BufferingPolicy) -> AsyncThrowingStream<Value, any Swift.Error> {
        AsyncThrowingStream(bufferingPolicy: bufferingPolicy) { continuation in
            let run = SerialDisposable()
            continuation.onTermination = { _ in run.dispose() }
            run.inner = self.start { event in
                switch event {
                case let .value(value): continuation.yield(value)
                case let .failed(error): continuation.finish(throwing: error)
                case .completed, .interrupted: continuation.finish()
                }
            }
        }
    }

    /// Starts one run and returns its first value, then interrupts the run.
    ///
    /// `try await producer.first()` suspends (never blocks a thread) until the first value or
    /// the run's end. (The blocking `first()` of the synchronous world is chosen outside
    /// `async` code.)
    ///
    /// - Returns: The first value, or `nil` if the run completed or was interrupted first.
    /// - Throws: The run's error if it failed before sending a value; `CancellationError` if
    ///   the waiting task was cancelled (the run is then interrupted).
    public func first() async throws -> Value? {
        try await _first()
    }

    func _first() async throws -> Value? {
        let run = SerialDisposable()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value?, any Swift.Error>) in
                let resumed = _Locked(false)
                let resume: @Sendable (Result<Value?, any Swift.Error>) -> Void = { result in
                    let first = resumed.withLock { done -> Bool in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(with: result) }
                }
                run.inner = self.take(first: 1).start { event in
                    switch event {
                    case let .value(value): resume(.success(value))
                    case let .failed(error): resume(.failure(error))
                    case .completed: resume(.success(nil))
                    case .interrupted:
                        resume(Task.isCancelled ? .failure(CancellationError()) : .success(nil))
                    }
                }
                if run.isDisposed { resume(.failure(CancellationError())) }
            }
        } onCancel: {
            run.dispose()
        }
    }
}

// MARK: - AsyncSequence → streams

extension SignalProducer where Value: Sendable, Error == any Swift.Error {
    /// A producer whose every start iterates `sequence` in a new task, sending each element,
    /// then `completed` when the sequence ends, or `failed` with the error it throws.
    ///
    /// Disposing the run cancels the task, which ends the iteration (an `AsyncStream`
    /// returns `nil` at once on cancellation; other sequences check cancellation as they
    /// document). Values arrive on the task's executor (the global concurrent pool).
    ///
    /// Thread-safety: `sequence` is `Sendable` and iterated by one task per start; a sequence
    /// that can be iterated only once (an `AsyncStream`) gives its elements to one run.
    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Value {
        self.init { observer, lifetime in
            let task = Task {
                do {
                    for try await element in sequence {
                        observer.send(value: element)
                    }
                    observer.sendCompleted()
                } catch is CancellationError {
                    observer.sendInterrupted()
                } catch {
                    observer.send(error: error)
                }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }
}

extension SignalProducer where Value: Sendable, Error == Never {
    /// A producer whose every start iterates `stream` in a new task; it completes when the
    /// stream finishes. Disposing the run cancels the task and so the iteration. An
    /// `AsyncStream` can be iterated once: only the first run gets its elements (as with
    /// several iterators, see `AsyncStream`).
    ///
    /// The stream's buffer is the one it was made with; make it with a bounded
    /// `bufferingPolicy` (the default `AsyncStream` buffer is unbounded).
    public init(_ stream: AsyncStream<Value>) {
        self.init { observer, lifetime in
            let task = Task {
                for await element in stream {
                    observer.send(value: element)
                }
                if Task.isCancelled { observer.sendInterrupted() } else { observer.sendCompleted() }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }
}

extension Signal where Value: Sendable, Error == Never {
    /// A hot signal that iterates `stream` in a new task from now on, sending each element and
    /// completing when the stream finishes. Values come on the task's executor; observers
    /// attached later miss earlier values.
    ///
    /// When the signal is torn down (unreferenced and unobserved) the task is cancelled.
    public convenience init(_ stream: AsyncStream<Value>) {
        self.init { observer, lifetime in
            let task = Task {
                for await element in stream {
                    observer.send(value: element)
                }
                if Task.isCancelled { observer.sendInterrupted() } else { observer.sendCompleted() }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }

    /// A signal fed through an `AsyncStream` continuation: `yield` from any (async or sync)
    /// code, and the signal sends each element from a task that drains the stream.
    ///
    /// The buffer between the continuation and the signal is bounded by default
    /// (`streamBufferLimit`, the newest kept); `finish()` completes the signal.
    ///
    /// - Returns: The signal, and the continuation that feeds it.
    public static func makeStream(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .bufferingNewest(streamBufferLimit)
    ) -> (signal: Signal, continuation: AsyncStream<Value>.Continuation) {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        return (Signal(stream), continuation)
    }
}

extension Signal where Value: Sendable, Error == any Swift.Error {
    /// A hot signal that iterates `sequence` in a new task from now on; it completes when the
    /// sequence ends and fails with the error the sequence throws. When the signal is torn
    /// down the task is cancelled.
    public convenience init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Value {
        self.init { observer, lifetime in
            let task = Task {
                do {
                    for try await element in sequence {
                        observer.send(value: element)
                    }
                    observer.sendCompleted()
                } catch is CancellationError {
                    observer.sendInterrupted()
                } catch {
                    observer.send(error: error)
                }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }
}
