import Foundation

// then, concat, prefix, repeat, retry for SignalProducer (and Signal.then).

extension SignalProducer {
    /// Waits for this producer's run to complete (ignoring its values), then starts
    /// `replacement` and forwards its events. Failure and interruption of this run are
    /// forwarded, and `replacement` is not started.
    ///
    /// The overloads below mirror ReactiveSwift's, so that the same replacement expressions
    /// (`.empty`, `SignalProducer(value:)`, a signal, a property) type-check the same way.
    @inlinable
    func _then<U>(_ replacement: SignalProducer<U, Error>) -> SignalProducer<U, Error> {
        let producer = self
        return SignalProducer<U, Error> { observer, lifetime in
            producer.startWithSignal { signal, interrupter in
                lifetime += interrupter
                lifetime += signal.observe { event in
                    switch event {
                    case .value: break
                    case let .failed(error): observer.send(error: error)
                    case .completed: lifetime += replacement.start(observer)
                    case .interrupted: observer.sendInterrupted()
                    }
                }
            }
        }
    }

    /// `then` for a replacement that cannot fail; see `then(_:)`.
    public func then<U>(_ replacement: SignalProducer<U, Never>) -> SignalProducer<U, Error> {
        _then(replacement.promoteError(Error.self))
    }

    /// `then` for a replacement (producer, signal or property) that cannot fail.
    public func then<Replacement: SignalProducerConvertible>(_ replacement: Replacement) -> SignalProducer<Replacement.Value, Error> where Replacement.Error == Never {
        then(replacement.producer)
    }

    /// Waits for this producer's run to complete, then forwards a run of `replacement`; see
    /// `_then`.
    public func then<U>(_ replacement: SignalProducer<U, Error>) -> SignalProducer<U, Error> {
        _then(replacement)
    }

    /// `then` for a replacement that is a producer, a signal or a property.
    public func then<Replacement: SignalProducerConvertible>(_ replacement: Replacement) -> SignalProducer<Replacement.Value, Error> where Replacement.Error == Error {
        then(replacement.producer)
    }

    /// `then` for a replacement of the same type (so `.empty` or `.init(value:)` type-check).
    public func then(_ replacement: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        _then(replacement)
    }

    /// `then` for a replacement of the same value and error types.
    public func then<Replacement: SignalProducerConvertible>(_ replacement: Replacement) -> SignalProducer<Value, Error> where Replacement.Value == Value, Replacement.Error == Error {
        then(replacement.producer)
    }

    /// Forwards this run's events, then — once it completed — `next`'s.
    public func concat(_ next: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        SignalProducer<SignalProducer<Value, Error>, Error>([self, next]).flatten(.concat)
    }

    /// Forwards this run's events, then — once it completed — those of `next` (a producer, a
    /// signal or a property).
    public func concat<Next: SignalProducerConvertible>(_ next: Next) -> SignalProducer<Value, Error> where Next.Value == Value, Next.Error == Error {
        concat(next.producer)
    }

    /// Forwards this run's events, then `value`, then completes.
    public func concat(value: Value) -> SignalProducer<Value, Error> where Value: Sendable {
        concat(SignalProducer(value: value))
    }

    /// Forwards this run's events, then — once it completed — fails with `error`.
    public func concat(error: Error) -> SignalProducer<Value, Error> {
        concat(SignalProducer(error: error))
    }

    /// Forwards `previous`'s events, then — once it completed — this run's.
    public func prefix(_ previous: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        previous.concat(self)
    }

    /// Forwards the events of `previous` (a producer, a signal or a property), then — once it
    /// completed — this run's.
    public func prefix<Previous: SignalProducerConvertible>(_ previous: Previous) -> SignalProducer<Value, Error> where Previous.Value == Value, Previous.Error == Error {
        prefix(previous.producer)
    }

    /// Sends `value`, then forwards this run's events.
    public func prefix(value: Value) -> SignalProducer<Value, Error> where Value: Sendable {
        prefix(SignalProducer(value: value))
    }

    /// Runs this producer `count` times in a row, each run starting when the previous one
    /// completed. `repeat(0)` completes at once.
    ///
    /// - Precondition: `count >= 0`.
    public func `repeat`(_ count: Int) -> SignalProducer<Value, Error> {
        precondition(count >= 0, "repeat requires a non-negative count, not \(count)")
        if count == 0 { return .empty }
        if count == 1 { return self }
        return SignalProducer<SignalProducer<Value, Error>, Error>(Array(repeating: self, count: count)).flatten(.concat)
    }

    /// On failure, starts this producer again, at most `count` more times; the last failure
    /// is forwarded.
    ///
    /// - Precondition: `count >= 0`.
    public func retry(upTo count: Int) -> SignalProducer<Value, Error> {
        precondition(count >= 0, "retry requires a non-negative count, not \(count)")
        if count == 0 { return self }
        let producer = self
        return flatMapError { _ in producer.retry(upTo: count - 1) }
    }

    /// On failure, starts this producer again after `interval` seconds on `scheduler`, at
    /// most `count` more times; the last failure is forwarded.
    ///
    /// - Precondition: `count >= 0`.
    public func retry(upTo count: Int, interval: TimeInterval, on scheduler: any DateScheduler) -> SignalProducer<Value, Error> {
        precondition(count >= 0, "retry requires a non-negative count, not \(count)")
        if count == 0 { return self }
        let producer = self
        return flatMapError { _ in
            SignalProducer<(), Error> { observer, lifetime in
                lifetime += scheduler.schedule(after: ._seconds(interval)) {
                    observer.send(value: ())
                    observer.sendCompleted()
                }
            }.then(producer.retry(upTo: count - 1, interval: interval, on: scheduler))
        }
    }
}

extension SignalProducer where Error == Never {
    /// `then` for a producer that cannot fail followed by one that can: the result fails as
    /// `replacement` does.
    public func then<U, F>(_ replacement: SignalProducer<U, F>) -> SignalProducer<U, F> {
        promoteError(F.self)._then(replacement)
    }

    /// `then` for a replacement that is a producer, a signal or a property, of any error type.
    public func then<Replacement: SignalProducerConvertible>(_ replacement: Replacement) -> SignalProducer<Replacement.Value, Replacement.Error> {
        then(replacement.producer)
    }

    /// `then` when neither stream can fail.
    public func then<U>(_ replacement: SignalProducer<U, Never>) -> SignalProducer<U, Never> {
        _then(replacement)
    }

    /// `then` when neither stream can fail; `replacement` is a producer, a signal or a
    /// property.
    public func then<Replacement: SignalProducerConvertible>(_ replacement: Replacement) -> SignalProducer<Replacement.Value, Never> where Replacement.Error == Never {
        then(replacement.producer)
    }

    /// `then` for a replacement of the same type.
    public func then(_ replacement: SignalProducer<Value, Never>) -> SignalProducer<Value, Never> {
        _then(replacement)
    }

    /// `then` for a replacement of the same value type that cannot fail.
    public func then<Replacement: SignalProducerConvertible>(_ replacement: Replacement) -> SignalProducer<Value, Never> where Replacement.Value == Value, Replacement.Error == Never {
        then(replacement.producer)
    }
}

extension Signal {
    /// Waits for this signal to complete (ignoring its values), then forwards a run of
    /// `replacement`; see `SignalProducer.then(_:)`.
    public func then<U>(_ replacement: SignalProducer<U, Error>) -> Signal<U, Error> {
        Signal<U, Error> { downstream, lifetime in
            lifetime += SignalProducer(self).then(replacement).start(downstream)
        }
    }
}
