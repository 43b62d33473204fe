// `ref <~ source`: tell every value of a signal, producer or property to an actor.
// `@inlinable` so the per-value `tell` is specialised for the message type in the caller's
// module, like a plain `ref.tell` (unspecialised, a bound value cost far more than a tell;
// see docs/Performance.md, Bridges).

/// Binds `source` to the actor `target`: every value `source` sends is told to the actor
/// (`target.tell(value)`), on the thread that sends it, in the order sent.
///
/// ```swift
/// thermostat <~ readings.map { ThermostatMessage.reading($0) }
/// ```
///
/// The binding ends at the first of:
/// - the actor terminates (the source is disposed: a producer's run is interrupted, a
///   signal's observation detached);
/// - the source terminates (completes or is interrupted);
/// - the returned disposable is disposed.
///
/// A bounded mailbox applies its overflow policy to bound values exactly as to any `tell`:
/// with `.dropNewest`, `.fail` or `.backpressure` a value that finds the mailbox full is
/// dropped (a dead letter with reason `.mailboxFull`), with `.dropOldest` the oldest queued
/// message is. A binding never blocks or suspends the source.
///
/// Thread-safety: bind from any thread; the source may send from any thread.
/// What keeps what alive: the actor retains the binding (through its watch) until it
/// terminates or the binding ends; the binding retains the source's run.
///
/// - Returns: A disposable that ends the binding early, or `nil` if the source had
///   terminated already (a `Signal` that has terminated).
@inlinable
@discardableResult
public func <~ <Message: Sendable>(target: ActorRef<Message>, source: Signal<Message, Never>) -> (any Disposable)? {
    let observation = SerialDisposable()
    let watcher = _TerminationWatcher(watching: target.target) { _ in
        observation.dispose()
    }
    let detach = source.observe(Signal<Message, Never>.Observer { event in
        switch event {
        case let .value(message):
            target.tell(message)
        case .completed, .interrupted:
            watcher.cancel()
        }
    })
    guard let detach else {
        return nil
    }
    observation.inner = detach
    watcher.start()
    return AnyDisposable {
        observation.dispose()
        watcher.cancel()
    }
}

/// Binds a producer or a property to the actor `target`: starts one run of
/// `source.producer` and tells every value to the actor; see the `Signal` overload for when
/// the binding ends and how bounded mailboxes apply.
///
/// For a property the current value is told first, then every change.
///
/// - Returns: A disposable that interrupts the run and ends the binding early.
@inlinable
@discardableResult
public func <~ <Message: Sendable, Source: BindingSource>(target: ActorRef<Message>, source: Source) -> (any Disposable)? where Source.Value == Message {
    source.producer.startWithSignal { signal, interrupter in
        let watcher = _TerminationWatcher(watching: target.target) { _ in
            interrupter.dispose()
        }
        signal.observe(Signal<Message, Never>.Observer { event in
            switch event {
            case let .value(message):
                target.tell(message)
            case .completed, .interrupted:
                watcher.cancel()
            }
        })
        watcher.start()
        return AnyDisposable {
            interrupter.dispose()
            watcher.cancel()
        }
    }
}
