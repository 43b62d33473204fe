// Swift concurrency bridges: streams as `AsyncSequence`s, `async` first value, and producers
// and signals built from an `AsyncSequence`.
//
// Buffering: a stream pushes, an `AsyncSequence` is pulled; between the two sits an
// `AsyncStream` buffer. It is bounded by default (`StreamValues.defaultBufferLimit` values, the
// newest kept) so a slow consumer of a fast stream cannot grow memory without bound; pass another
// `bufferingPolicy` to choose (`.unbounded` only when you mean it).

/// The default capacity of the `AsyncStream` buffer between a stream and an `async` consumer.
@available(*, deprecated, renamed: "StreamValues.defaultBufferLimit")
public var streamBufferLimit: Int { StreamValues.defaultBufferLimit }

// MARK: - Stream → AsyncSequence

extension StreamValues where Element == Never, Failure == Never {
    /// The default capacity of the `AsyncStream` buffer between a stream and an `async`
    /// consumer (`values`, `SignalProducer(asyncSequence)`): beyond it the oldest buffered values
    /// are dropped and the newest kept. Write it `StreamValues.defaultBufferLimit`.
    public static var defaultBufferLimit: Int { 1_024 }
}

/// A stream's values as an `AsyncSequence` whose error is the stream's: `for await` when
/// `Failure` is `Never`, `for try await` otherwise (throwing the stream's typed error).
///
/// Made by `Signal.values` and `SignalProducer.values`: the observation (or run) starts when
/// the sequence is made, and values the consumer has not taken yet wait in a buffer — bounded
/// by default (`StreamValues.defaultBufferLimit` values, the newest kept). Iterate it once: it is
/// backed by an `AsyncThrowingStream`, which has a single consumer. Cancelling the iterating task, or
/// dropping the sequence, ends the observation (a producer's run is interrupted).
public struct StreamValues<Element: Sendable, Failure: Swift.Error>: AsyncSequence, Sendable {
    let base: AsyncThrowingStream<Element, any Swift.Error>

    /// Iterates the buffered values.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Swift.Error>.Iterator

        /// The next value, or `nil` once the stream completed or was interrupted.
        ///
        /// - Throws: The stream's error, if it failed.
        public mutating func next() async throws(Failure) -> Element? {
            do { return try await base.next() } catch { throw error as! Failure }
        }

        /// The next value, or `nil` once the stream completed or was interrupted, resuming on
        /// `actor`.
        ///
        /// - Throws: The stream's error, if it failed.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            do { return try await base.next(isolation: actor) } catch { throw error as! Failure }
        }
    }

    /// An iterator over the values; make only one.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }

    /// The buffer between a stream and its consumer.
    public typealias BufferingPolicy = AsyncThrowingStream<Element, any Swift.Error>.Continuation.BufferingPolicy

    /// A sequence fed by `attach`, which gets the event sink and returns what to dispose when
    /// the consumer goes away.
    init(bufferingPolicy: BufferingPolicy, attach: (_ send: @escaping @Sendable (Event<Element, Failure>) -> Void) -> (any Disposable)?) {
        base = AsyncThrowingStream(bufferingPolicy: bufferingPolicy) { continuation in
            let detach = SerialDisposable()
            continuation.onTermination = { _ in detach.dispose() }
            detach.inner = attach { event in
                switch event {
                case let .value(value): continuation.yield(value)
                case let .failed(error): continuation.finish(throwing: error)
                case .completed, .interrupted: continuation.finish()
                }
            }
        }
    }
}

extension Signal where Value: Sendable {
    /// The signal's values as an `AsyncSequence`: `for await value in signal.values` (or
    /// `for try await` if the signal can fail: the loop throws the signal's error).
    ///
    /// Observes the signal when accessed (values sent before are missed: the signal is hot);
    /// the sequence ends when the signal completes or is interrupted. Buffers at most
    /// `StreamValues.defaultBufferLimit` values the consumer has not taken yet, dropping the oldest; see
    /// `values(bufferingPolicy:)`. Cancelling the iterating task (or dropping the sequence)
    /// detaches from the signal.
    public var values: StreamValues<Value, Error> {
        values(bufferingPolicy: .bufferingNewest(StreamValues.defaultBufferLimit))
    }

    /// The signal's values as an `AsyncSequence` with the given buffer; see `values`.
    public func values(bufferingPolicy: StreamValues<Value, Error>.BufferingPolicy) -> StreamValues<Value, Error> {
        StreamValues(bufferingPolicy: bufferingPolicy) { send in
            let detach = self.observe { send($0) }
            if detach == nil { send(.interrupted) }
            return detach
        }
    }
}

extension SignalProducer where Value: Sendable {
    /// Starts one run when accessed and returns its values as an `AsyncSequence`
    /// (`for await`, or `for try await` if the producer can fail); the sequence ends when the
    /// run terminates. Cancelling the iterating task (or dropping the sequence) interrupts the
    /// run. Buffers at most `StreamValues.defaultBufferLimit` values (the newest kept); see
    /// `values(bufferingPolicy:)`.
    public var values: StreamValues<Value, Error> {
        values(bufferingPolicy: .bufferingNewest(StreamValues.defaultBufferLimit))
    }

    /// One run's values as an `AsyncSequence` with the given buffer; see `values`.
    public func values(bufferingPolicy: StreamValues<Value, Error>.BufferingPolicy) -> StreamValues<Value, Error> {
        StreamValues(bufferingPolicy: bufferingPolicy) { send in
            self.start { send($0) }
        }
    }

    /// Starts one run and returns its first value, then interrupts the run.
    ///
    /// `try await producer.first()` (`await` alone when the producer cannot fail) suspends —
    /// it never blocks a thread — until the first value or the run's end. Outside `async` code
    /// the blocking `first()` is chosen instead.
    ///
    /// - Returns: The first value; `nil` if the run completed or was interrupted without one,
    ///   or if the waiting task was cancelled (the run is then interrupted).
    /// - Throws: The run's error, if it failed before sending a value.
    public func first() async throws(Error) -> Value? {
        let run = SerialDisposable()
        let result: Result<Value?, Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value?, Error>, Never>) in
                let resumed = LockedValueBox(false)
                let resume: @Sendable (Result<Value?, Error>) -> Void = { result in
                    let first = resumed.withLockedValue { done -> Bool in
                        defer { done = true }
                        return !done
                    }
                    if first { continuation.resume(returning: result) }
                }
                run.inner = self.take(first: 1).start { event in
                    switch event {
                    case let .value(value): resume(.success(value))
                    case let .failed(error): resume(.failure(error))
                    case .completed, .interrupted: resume(.success(nil))
                    }
                }
                if run.isDisposed { resume(.success(nil)) }
            }
        } onCancel: {
            run.dispose()
        }
        return try result.get()
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
            iterateInTask(sequence, into: observer, lifetime: lifetime)
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
    /// (`StreamValues.defaultBufferLimit`, the newest kept); `finish()` completes the signal.
    ///
    /// - Returns: The signal, and the continuation that feeds it.
    public static func makeStream(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .bufferingNewest(StreamValues.defaultBufferLimit)
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
            iterateInTask(sequence, into: observer, lifetime: lifetime)
        }
    }
}

/// Iterates `sequence` in a new task, sending its elements, then its end (completed,
/// interrupted on cancellation, or failed with what it throws) to `observer`; the end of
/// `lifetime` cancels the task. Shared by the producer and the signal made from a sequence.
private func iterateInTask<S: AsyncSequence & Sendable>(
    _ sequence: S, into observer: Signal<S.Element, any Swift.Error>.Observer, lifetime: Lifetime
) where S.Element: Sendable {
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
