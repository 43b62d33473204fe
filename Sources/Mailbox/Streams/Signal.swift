/// A hot stream of events: values, then at most one terminal event.
///
/// A signal starts with no observers and delivers every event sent through its input
/// (`Signal.Observer`) to the observers attached at that moment; it has no memory and no side
/// effect of its own. See `docs/StreamContracts.md` for the rules every signal keeps.
///
/// Thread-safety: observe and send from any thread. Events are delivered serially: an
/// observer never sees two events at once. A value sent recursively (from an observer of the
/// same signal, on the delivering thread) is queued and delivered once the current value has
/// reached every observer, and a recursive terminal event is deferred the same way: sending
/// never deadlocks, and observers are never re-entered (ReactiveSwift deadlocks on a recursive
/// value).
///
/// What keeps what alive: the signal's state lives while the `Signal` is referenced or
/// observed *and* its input exists. When the `Signal` object is released with no observer,
/// the signal ends silently and its generator's disposable (its upstream observation) is
/// disposed — an unreferenced, unobserved operator chain stops working. When the last
/// reference to the input observer goes away before a terminal event, the signal is
/// interrupted: observers receive `interrupted`, then the generator's lifetime ends. Observers
/// are released when the signal terminates.
///
/// `Sendable` whatever `Value` is, like `AsyncStream`: sending values between threads is the
/// signal's job; see the Swift 6 notes in `docs/StreamContracts.md`.
public final class Signal<Value, Error: Swift.Error>: Sendable {
    /// The events this signal sends.
    public typealias Event = Mailbox.Event<Value, Error>

    @usableFromInline
    let core: _SignalCore<Value, Error>

    @inlinable
    init(core: _SignalCore<Value, Error>) {
        self.core = core
    }

    deinit {
        core.signalReleased()
    }

    /// Creates a signal and runs `generator` at once with its input observer and a lifetime
    /// that ends when the signal terminates (or is torn down unobserved).
    ///
    /// The generator may send events synchronously; observers attached after `init` returns
    /// miss them (signals are hot). Retain the observer for as long as you mean to send:
    /// releasing it before a terminal event interrupts the signal.
    public convenience init(_ generator: (_ observer: Observer, _ lifetime: Lifetime) -> Void) {
        let core = _SignalCore<Value, Error>()
        let lifetime = core.makeRunLifetimeWhileUnshared()
        self.init(core: core)
        generator(Observer(core: core), lifetime)
    }

    /// Creates a signal whose generator returns the disposable to dispose on termination.
    /// The fast path for operators: no `Lifetime` is allocated.
    @inlinable
    convenience init(_unsafeGenerator generator: (_ observer: Observer) -> (any Disposable)?) {
        let core = _SignalCore<Value, Error>()
        self.init(core: core)
        core.setDisposable(generator(Observer(core: core)))
    }

    /// Creates a signal and the observer that sends its events.
    ///
    /// - Parameter disposable: Disposed when the signal terminates.
    /// - Returns: `output`, the signal, and `input`, its observer. Releasing `input` before
    ///   sending a terminal event interrupts `output`.
    @inlinable
    public static func pipe(disposable: (any Disposable)? = nil) -> (output: Signal, input: Observer) {
        let core = _SignalCore<Value, Error>()
        if let disposable { core.teardown = .disposable(disposable) }
        return (Signal(core: core), Observer(core: core))
    }

    /// Attaches `observer`; it receives every event sent from now on.
    ///
    /// - Returns: A disposable that detaches the observer silently (it receives nothing more,
    ///   not even a terminal event), or `nil` if the signal had already terminated — then
    ///   `observer` has received `interrupted`.
    @inlinable
    @discardableResult
    public func observe(_ observer: Observer) -> (any Disposable)? {
        core.observe(observer)
    }

    /// Attaches an observer that runs `action` for every event; see `observe(_:)`.
    @inlinable
    @discardableResult
    public func observe(_ action: @escaping @Sendable (Event) -> Void) -> (any Disposable)? {
        core.observe(Observer(action))
    }

    /// A signal that completes at once: observers attached to it receive `interrupted`.
    public static var empty: Signal {
        let (signal, observer) = pipe()
        observer.sendCompleted()
        return signal
    }

    /// A signal that never sends an event, and never terminates.
    public static var never: Signal {
        Signal(core: _SignalCore())
    }
}

extension Signal {
    /// Runs `action` for every value; see `observe(_:)`.
    @inlinable
    @discardableResult
    public func observeValues(_ action: @escaping @Sendable (Value) -> Void) -> (any Disposable)? {
        observe(Observer._values(action))
    }

    /// Runs `action` for every value (`.success`) and for a failure (`.failure`).
    @inlinable
    @discardableResult
    public func observeResult(_ action: @escaping @Sendable (Result<Value, Error>) -> Void) -> (any Disposable)? {
        observe(Observer { event in
            switch event {
            case let .value(value): action(.success(value))
            case let .failed(error): action(.failure(error))
            case .completed, .interrupted: break
            }
        })
    }

    /// Runs `action` when the signal completes.
    @inlinable
    @discardableResult
    public func observeCompleted(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        observe(Observer { event in
            if case .completed = event { action() }
        })
    }

    /// Runs `action` when the signal fails.
    @inlinable
    @discardableResult
    public func observeFailed(_ action: @escaping @Sendable (Error) -> Void) -> (any Disposable)? {
        observe(Observer { event in
            if case let .failed(error) = event { action(error) }
        })
    }

    /// Runs `action` when the signal is interrupted (including when observed after it
    /// terminated).
    @inlinable
    @discardableResult
    public func observeInterrupted(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        observe(Observer { event in
            if case .interrupted = event { action() }
        })
    }
}

extension Signal where Error == Never {
    /// Runs `action` for every value; see `observe(_:)`. (ReactiveSwift's `Never`-error
    /// overload of `observeResult` is not needed: use `observeValues`.)
    @inlinable
    @discardableResult
    public func observeValues(_ action: @escaping @Sendable (Value) -> Void) -> (any Disposable)? {
        observe(Observer._values(action))
    }
}
