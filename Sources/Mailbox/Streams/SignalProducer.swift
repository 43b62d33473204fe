/// A cold stream: a recipe that creates a new `Signal` and runs its work each time it is
/// started.
///
/// Starting runs the start handler synchronously, on the starting thread, before `start`
/// returns (contract 7); every start is independent. Disposing the disposable `start` returns
/// interrupts that one run: its observer receives exactly one `interrupted` (unless the run
/// had terminated), and the run's `Lifetime` ends, cancelling its work.
///
/// Thread-safety: a producer is an immutable value; start it from any thread, any number of
/// times.
///
/// What keeps what alive: a started run lives while its input observer is retained (by the
/// start handler's work, or by the disposable `start` returned); when the last reference to
/// the input goes before a terminal event, the run is interrupted.
public struct SignalProducer<Value, Error: Swift.Error>: Sendable {
    /// The events this producer's signals send.
    public typealias Event = Mailbox.Event<Value, Error>

    /// Starts one run: sends its events to the observer, returns the interrupt handle.
    @usableFromInline
    let startHandler: @Sendable (_ observer: Signal<Value, Error>.Observer, _ lifetime: Lifetime) -> Void

    /// Creates a producer that runs `startHandler` each time it is started, with the run's
    /// input observer and a lifetime that ends when the run terminates or is interrupted.
    ///
    /// Tie cancellable work to the lifetime (`lifetime += disposable`,
    /// `lifetime.observeEnded { … }`).
    @inlinable
    public init(_ startHandler: @escaping @Sendable (_ observer: Signal<Value, Error>.Observer, _ lifetime: Lifetime) -> Void) {
        self.startHandler = startHandler
    }

    /// A producer that forwards the events of `signal` from the moment it is started
    /// (`signal` is hot: earlier events are missed). Interrupting the run detaches it.
    public init(_ signal: Signal<Value, Error>) {
        self.init { observer, lifetime in
            lifetime += signal.observe(observer)
        }
    }

    /// A producer that sends `value` and completes.
    public init(value: Value) where Value: Sendable {
        self.init { observer, _ in
            observer.send(value: value)
            observer.sendCompleted()
        }
    }

    /// A producer that fails with `error`.
    public init(error: Error) {
        self.init { observer, _ in
            observer.send(error: error)
        }
    }

    /// A producer that sends the success value and completes, or fails with the failure.
    public init(result: Result<Value, Error>) where Value: Sendable {
        switch result {
        case let .success(value): self.init(value: value)
        case let .failure(error): self.init(error: error)
        }
    }

    /// A producer that sends each element of `values` in order, then completes.
    /// Interrupting the run stops it between elements.
    public init<S: Sequence & Sendable>(_ values: S) where S.Element == Value {
        self.init { observer, lifetime in
            for value in values {
                if lifetime.hasEnded { return }
                observer.send(value: value)
            }
            observer.sendCompleted()
        }
    }

    /// A producer that sends `first`, then each of `rest`, then completes.
    public init(values first: Value, _ rest: Value...) where Value: Sendable {
        self.init([first] + rest)
    }

    /// A producer that calls `action` each time it is started, sends its result and
    /// completes.
    public init(_ action: @escaping @Sendable () -> Value) {
        self.init { observer, _ in
            observer.send(value: action())
            observer.sendCompleted()
        }
    }

    /// A producer that calls `action` each time it is started, and sends its success value
    /// and completes, or fails.
    public init(_ action: @escaping @Sendable () -> Result<Value, Error>) {
        self.init { observer, _ in
            switch action() {
            case let .success(value):
                observer.send(value: value)
                observer.sendCompleted()
            case let .failure(error):
                observer.send(error: error)
            }
        }
    }

    /// A producer that completes at once, sending no value.
    public static var empty: SignalProducer {
        SignalProducer { observer, _ in observer.sendCompleted() }
    }

    /// A producer whose runs never send an event and never terminate (until interrupted).
    public static var never: SignalProducer {
        SignalProducer { observer, lifetime in
            lifetime.observeEnded { _ = observer }
        }
    }
}

extension SignalProducer {
    /// Starts one run and hands its signal (before any event is sent) and its interrupt
    /// handle to `setup`; the start handler runs when `setup` returns.
    ///
    /// Attach observers to the signal inside `setup`: the run may send every event
    /// synchronously as soon as `setup` returns.
    ///
    /// - Returns: What `setup` returns.
    @inlinable
    @discardableResult
    public func startWithSignal<Result>(
        _ setup: (_ signal: Signal<Value, Error>, _ interruptHandle: any Disposable) -> Result
    ) -> Result {
        let core = _SignalCore<Value, Error>()
        let lifetime = core.makeRunLifetimeWhileUnshared()
        let input = Signal<Value, Error>.Observer(core: core)
        let interrupter = _ProducerInterrupter(input)
        let result = setup(Signal(core: core), interrupter)
        if !core.isTerminated {
            startHandler(input, lifetime)
        }
        return result
    }

    /// Starts one run like `startWithSignal`, but hands `setup` the run's core rather than a
    /// `Signal` wrapping it: for operators that attach their own observer to the run and never
    /// detach it (one object fewer per start, and no `Signal` release to process).
    @inlinable
    func _startWithCore(
        _ setup: (_ core: _SignalCore<Value, Error>, _ interruptHandle: any Disposable) -> Void
    ) {
        let core = _SignalCore<Value, Error>()
        let lifetime = core.makeRunLifetimeWhileUnshared()
        let input = Signal<Value, Error>.Observer(core: core)
        setup(core, _ProducerInterrupter(input))
        if !core.isTerminated {
            startHandler(input, lifetime)
        }
    }

    /// Starts one run delivering to `observer`.
    ///
    /// - Returns: A disposable that interrupts the run. Discarding it does not interrupt the
    ///   run as long as the run's own work retains its observer.
    @inlinable
    @discardableResult
    public func start(_ observer: Signal<Value, Error>.Observer = .init { _ in }) -> any Disposable {
        let core = _SignalCore<Value, Error>(observer: observer)
        let lifetime = core.makeRunLifetimeWhileUnshared()
        let input = Signal<Value, Error>.Observer(core: core)
        let interrupter = _ProducerInterrupter(input)
        startHandler(input, lifetime)
        return interrupter
    }

    /// Starts one run, running `action` for each event; see `start(_:)`.
    @inlinable
    @discardableResult
    public func start(_ action: @escaping @Sendable (Event) -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer(action))
    }

    /// Starts one run, running `action` for each value.
    @inlinable
    @discardableResult
    public func startWithValues(_ action: @escaping @Sendable (Value) -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer._values(action))
    }

    /// Starts one run, running `action` for each value and for a failure.
    @inlinable
    @discardableResult
    public func startWithResult(_ action: @escaping @Sendable (Result<Value, Error>) -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer { event in
            switch event {
            case let .value(value): action(.success(value))
            case let .failed(error): action(.failure(error))
            case .completed, .interrupted: break
            }
        })
    }

    /// Starts one run, running `action` when it completes.
    @inlinable
    @discardableResult
    public func startWithCompleted(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer { event in
            if case .completed = event { action() }
        })
    }

    /// Starts one run, running `action` when it fails.
    @inlinable
    @discardableResult
    public func startWithFailed(_ action: @escaping @Sendable (Error) -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer { event in
            if case let .failed(error) = event { action(error) }
        })
    }

    /// Starts one run, running `action` when it is interrupted.
    @inlinable
    @discardableResult
    public func startWithInterrupted(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer { event in
            if case .interrupted = event { action() }
        })
    }

    /// Applies a signal operator to every run of this producer:
    /// `producer.lift { $0.map(f) }` is `producer.map(f)`.
    @inlinable
    public func lift<U, F>(
        _ transform: @escaping @Sendable (Signal<Value, Error>) -> Signal<U, F>
    ) -> SignalProducer<U, F> {
        let start = self
        return SignalProducer<U, F> { observer, lifetime in
            start.startWithSignal { signal, interrupter in
                lifetime += interrupter
                lifetime += transform(signal).observe(observer)
            }
        }
    }

    /// Applies a binary signal operator to every run of this producer and of `other`.
    ///
    /// Both signals are set up (and the operator attached) before either run starts; then
    /// `other`'s run starts, then this producer's.
    @inlinable
    public func lift<U, F, V, G>(
        _ transform: @escaping @Sendable (Signal<Value, Error>) -> @Sendable (Signal<U, F>) -> Signal<V, G>
    ) -> @Sendable (SignalProducer<U, F>) -> SignalProducer<V, G> {
        let start = self
        return { other in
            SignalProducer<V, G> { observer, lifetime in
                start.startWithSignal { signal, interrupter in
                    lifetime += interrupter
                    other.startWithSignal { otherSignal, otherInterrupter in
                        lifetime += otherInterrupter
                        lifetime += transform(signal)(otherSignal).observe(observer)
                    }
                }
            }
        }
    }
}

extension SignalProducer where Error == Never {
    /// Starts one run, running `action` for each value.
    @inlinable
    @discardableResult
    public func startWithValues(_ action: @escaping @Sendable (Value) -> Void) -> any Disposable {
        start(Signal<Value, Error>.Observer._values(action))
    }
}

/// The disposable a started producer hands back: interrupts the run.
@usableFromInline
final class _ProducerInterrupter<Value, Error: Swift.Error>: Disposable {
    @usableFromInline
    let input: Signal<Value, Error>.Observer

    /// `input.sendInterrupted()`, formed where `Value` and `Error` are concrete (this init is
    /// inlined into specialised code), so `dispose()` — reached through `any Disposable`, an
    /// unspecialised witness — runs specialised code and looks up no generic metadata
    /// (`Event<Value, Error>`'s, on every interrupt; see docs/Performance.md).
    @usableFromInline
    let interrupt: @Sendable (Signal<Value, Error>.Observer) -> Void

    @inlinable
    init(_ input: Signal<Value, Error>.Observer) {
        self.input = input
        self.interrupt = { input in
            input._unretainedCore!._withUnsafeGuaranteedRef { $0.requestInterruption() }
        }
    }

    /// Whether the run has terminated, or (for a run that delivers its interruption on a
    /// scheduler) its interruption has been requested.
    @usableFromInline
    var isDisposed: Bool {
        let core = input.core!
        return core.isTerminated || core.isInterruptionRequested
    }

    @usableFromInline
    func dispose() {
        interrupt(input)
    }
}
