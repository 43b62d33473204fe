// take(first:), take(last:), take(while:), take(until:), take(during:), skip(first:),
// skip(while:), skip(until:) for Signal and SignalProducer.

extension Signal {
    /// Forwards the first `count` values, then completes. `take(first: 0)` completes at
    /// once (observers attached afterwards receive `interrupted`).
    ///
    /// - Precondition: `count >= 0`.
    @inlinable
    public func take(first count: Int) -> Signal<Value, Error> {
        precondition(count >= 0, "take(first:) requires a non-negative count, not \(count)")
        if count == 0 { return .empty }
        let taken = _SerialState(0)
        return _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            taken.value += 1
            if taken.value <= count { downstream.send(value: value) }
            if taken.value >= count { downstream.sendCompleted() }
        } }
    }

    /// On completion, sends the last `count` values, then completes. Failure and interruption
    /// pass through and drop the buffer.
    ///
    /// - Complexity: O(`count`) memory.
    /// - Precondition: `count >= 0`.
    @inlinable
    public func take(last count: Int) -> Signal<Value, Error> {
        precondition(count >= 0, "take(last:) requires a non-negative count, not \(count)")
        let buffer = _SerialState<[Value]>([])
        return _lift { downstream in { event in
            switch event {
            case let .value(value):
                guard count > 0 else { return }
                if buffer.value.count == count { buffer.value.removeFirst() }
                buffer.value.append(value)
            case .completed:
                for value in buffer.value { downstream.send(value: value) }
                buffer.value = []
                downstream.sendCompleted()
            default:
                Signal._forward(event, to: downstream)
            }
        } }
    }

    /// Forwards values while `shouldContinue` returns `true`; completes (without the value)
    /// at the first value for which it returns `false`.
    @inlinable
    public func take(while shouldContinue: @escaping @Sendable (Value) -> Bool) -> Signal<Value, Error> {
        _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            if shouldContinue(value) {
                downstream.send(value: value)
            } else {
                downstream.sendCompleted()
            }
        } }
    }

    /// Forwards each value; after forwarding a value for which `shouldContinue` returns
    /// `false`, completes (the value is included).
    @inlinable
    public func take(until shouldContinue: @escaping @Sendable (Value) -> Bool) -> Signal<Value, Error> {
        _lift { downstream in { event in
            guard case let .value(value) = event else { return Signal._forward(event, to: downstream) }
            downstream.send(value: value)
            if !shouldContinue(value) { downstream.sendCompleted() }
        } }
    }

    /// Forwards events until `trigger` sends a value or completes; then completes.
    /// An interrupted or never-terminating trigger has no effect.
    public func take(until trigger: Signal<(), Never>) -> Signal<Value, Error> {
        Signal { downstream, lifetime in
            lifetime += trigger.observe { event in
                switch event {
                case .value, .completed: downstream.sendCompleted()
                case .interrupted: break
                }
            }
            lifetime += self.observe(downstream)
        }
    }

    /// Forwards events until `lifetime` ends; then completes.
    public func take(during lifetime: Lifetime) -> Signal<Value, Error> {
        Signal { downstream, signalLifetime in
            signalLifetime += self.observe(downstream)
            signalLifetime += lifetime.observeEnded { downstream.sendCompleted() }
        }
    }

    /// Drops the first `count` values.
    ///
    /// - Precondition: `count >= 0`.
    @inlinable
    public func skip(first count: Int) -> Signal<Value, Error> {
        precondition(count >= 0, "skip(first:) requires a non-negative count, not \(count)")
        if count == 0 { return _lift { downstream in { event in downstream.send(event) } } }
        let skipped = _SerialState(0)
        return _lift { downstream in { event in
            guard case .value = event else { return downstream.send(event) }
            if skipped.value < count {
                skipped.value += 1
            } else {
                downstream.send(event)
            }
        } }
    }

    /// Drops values while `shouldSkip` returns `true`; forwards everything from the first value
    /// for which it returns `false`.
    @inlinable
    public func skip(while shouldSkip: @escaping @Sendable (Value) -> Bool) -> Signal<Value, Error> {
        let skipping = _SerialState(true)
        return _lift { downstream in { event in
            if skipping.value, case let .value(value) = event {
                if shouldSkip(value) { return }
                skipping.value = false
            }
            downstream.send(event)
        } }
    }

    /// Drops values until `trigger` sends a value or completes, then forwards everything.
    public func skip(until trigger: Signal<(), Never>) -> Signal<Value, Error> {
        let open = LockedValueBox(false)
        return Signal { downstream, lifetime in
            lifetime += trigger.observe { event in
                if case .value = event { open.withLockedValue { $0 = true } }
                if case .completed = event { open.withLockedValue { $0 = true } }
            }
            lifetime += self.observe { event in
                if case .value = event, !open.withLockedValue({ $0 }) { return }
                downstream.send(event)
            }
        }
    }
}

extension SignalProducer {
    /// Forwards the first `count` values, then completes; see `Signal.take(first:)`.
    @inlinable
    public func take(first count: Int) -> SignalProducer<Value, Error> {
        lift { $0.take(first: count) }
    }

    /// On completion, sends the last `count` values; see `Signal.take(last:)`.
    @inlinable
    public func take(last count: Int) -> SignalProducer<Value, Error> {
        lift { $0.take(last: count) }
    }

    /// Forwards values while `shouldContinue` returns `true`; see `Signal.take(while:)`.
    @inlinable
    public func take(while shouldContinue: @escaping @Sendable (Value) -> Bool) -> SignalProducer<Value, Error> {
        lift { $0.take(while: shouldContinue) }
    }

    /// Forwards values, completing after the first for which `shouldContinue` is `false`.
    @inlinable
    public func take(until shouldContinue: @escaping @Sendable (Value) -> Bool) -> SignalProducer<Value, Error> {
        lift { $0.take(until: shouldContinue) }
    }

    /// Forwards events until `trigger` sends a value or completes; see
    /// `Signal.take(until:)`. `trigger` starts before this producer.
    public func take(until trigger: SignalProducer<(), Never>) -> SignalProducer<Value, Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (trigger: Signal<(), Never>) in signal.take(until: trigger) } }(trigger)
    }

    /// Forwards events until `trigger` sends a value or completes.
    public func take(until trigger: Signal<(), Never>) -> SignalProducer<Value, Error> {
        lift { $0.take(until: trigger) }
    }

    /// Forwards events until `lifetime` ends; then completes.
    public func take(during lifetime: Lifetime) -> SignalProducer<Value, Error> {
        lift { $0.take(during: lifetime) }
    }

    /// Drops the first `count` values.
    @inlinable
    public func skip(first count: Int) -> SignalProducer<Value, Error> {
        lift { $0.skip(first: count) }
    }

    /// Drops values while `shouldSkip` returns `true`.
    @inlinable
    public func skip(while shouldSkip: @escaping @Sendable (Value) -> Bool) -> SignalProducer<Value, Error> {
        lift { $0.skip(while: shouldSkip) }
    }

    /// Drops values until `trigger` sends a value or completes.
    public func skip(until trigger: Signal<(), Never>) -> SignalProducer<Value, Error> {
        lift { $0.skip(until: trigger) }
    }

    /// Drops values until `trigger` sends a value or completes; `trigger` starts before this
    /// producer.
    public func skip(until trigger: SignalProducer<(), Never>) -> SignalProducer<Value, Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (trigger: Signal<(), Never>) in signal.skip(until: trigger) } }(trigger)
    }
}

extension Signal {
    /// Forwards this signal's values, failure and interruption — but not its completion —
    /// until `replacement` sends its first event; from then on forwards `replacement`'s
    /// events only (this signal is detached).
    ///
    /// ```
    /// self:        --1--2-----3--|
    /// replacement: --------a--b-----|
    /// output:      --1--2--a--b-----|
    /// ```
    public func take(untilReplacement replacement: Signal<Value, Error>) -> Signal<Value, Error> {
        Signal { downstream, lifetime in
            let ownObservation = self.observe { event in
                if case .completed = event { return }
                downstream.send(event)
            }
            lifetime += ownObservation
            lifetime += replacement.observe { event in
                ownObservation?.dispose()
                downstream.send(event)
            }
        }
    }
}

extension SignalProducer {
    /// See `Signal.take(untilReplacement:)`: `replacement`'s run starts first, then this
    /// producer's.
    public func take(untilReplacement replacement: SignalProducer<Value, Error>) -> SignalProducer<Value, Error> {
        lift { (signal: Signal<Value, Error>) in { @Sendable (replacement: Signal<Value, Error>) in signal.take(untilReplacement: replacement) } }(replacement)
    }

    /// See `Signal.take(untilReplacement:)`; `replacement` is a producer, a signal or a
    /// property.
    public func take<Replacement: SignalProducerConvertible>(untilReplacement replacement: Replacement) -> SignalProducer<Value, Error> where Replacement.Value == Value, Replacement.Error == Error {
        take(untilReplacement: replacement.producer)
    }

    /// Forwards events until `trigger` sends a value or completes; `trigger` is a producer, a
    /// signal or a property (started before this producer).
    public func take<Trigger: SignalProducerConvertible>(until trigger: Trigger) -> SignalProducer<Value, Error> where Trigger.Value == (), Trigger.Error == Never {
        take(until: trigger.producer)
    }

    /// Drops values until `trigger` sends a value or completes; `trigger` is a producer, a
    /// signal or a property (started before this producer).
    public func skip<Trigger: SignalProducerConvertible>(until trigger: Trigger) -> SignalProducer<Value, Error> where Trigger.Value == (), Trigger.Error == Never {
        skip(until: trigger.producer)
    }
}
