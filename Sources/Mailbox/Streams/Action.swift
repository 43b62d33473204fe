/// A unit of work that can be run repeatedly, never more than once at a time, and whose runs
/// are observable as a whole: `values`, `errors`, `completed` and `events` carry the events of
/// every run.
///
/// `apply(input)` returns a producer; each start of it is one attempt: if the action is
/// enabled and not executing, it runs `execute` and forwards its events (errors wrapped in
/// `ActionError.producerFailed`); otherwise it fails with `ActionError.disabled` and
/// `disabledErrors` sends. The check and the switch to executing are atomic.
///
/// Thread-safety: apply and start from any thread. What keeps what alive: the action's
/// signals complete, and its lifetime ends, when the action deinitialises; a running unit of
/// work keeps running.
public final class Action<Input, Output, Error: Swift.Error> {
    private let execute: @Sendable (Any, Input) -> SignalProducer<Output, Error>
    private let stateValue: @Sendable () -> (Any, Bool)
    private let executing = MutableProperty(false)
    private let state = LockedValueBox(false)
    private let eventsObserver: Signal<Event<Output, Error>, Never>.Observer
    private let disabledErrorsObserver: Signal<(), Never>.Observer
    private let token: Lifetime.Token

    /// Ends when the action deinitialises.
    public let lifetime: Lifetime

    /// Every event of every run.
    public let events: Signal<Event<Output, Error>, Never>

    /// The values of every run.
    public let values: Signal<Output, Never>

    /// The errors of every run.
    public let errors: Signal<Error, Never>

    /// Sends when an attempt fails because the action is disabled.
    public let disabledErrors: Signal<(), Never>

    /// Sends when a run completes.
    public let completed: Signal<(), Never>

    /// Whether a run is under way.
    public let isExecuting: Property<Bool>

    /// Whether an attempt would start a run now: the state allows it and no run is under way.
    public let isEnabled: Property<Bool>

    /// Creates an action enabled when `isEnabled(state.value)` is `true`, whose runs execute
    /// `execute(state.value, input)`.
    public init<State: PropertyProtocol>(
        state: State,
        enabledIf isEnabled: @escaping @Sendable (State.Value) -> Bool,
        execute: @escaping @Sendable (State.Value, Input) -> SignalProducer<Output, Error>
    ) {
        (lifetime, token) = Lifetime.make()
        let source = _Carried(state)
        self.execute = { value, input in execute(value as! State.Value, input) }
        self.stateValue = {
            let value = source.value.value
            return (value, isEnabled(value))
        }
        (events, eventsObserver) = Signal<Event<Output, Error>, Never>.pipe()
        (disabledErrors, disabledErrorsObserver) = Signal<(), Never>.pipe()
        values = events.compactMap { $0.value }
        errors = events.compactMap { $0.error }
        completed = events.compactMap { $0.isCompleted ? () : nil }
        isExecuting = Property(capturing: executing)
        self.isEnabled = state.producer.map(isEnabled).combineLatest(with: executing.producer)
            .map { $0 && !$1 }
            .property
    }

    /// Creates an action enabled while `isEnabled` is `true`.
    public convenience init<P: PropertyProtocol>(
        enabledIf isEnabled: P,
        execute: @escaping @Sendable (Input) -> SignalProducer<Output, Error>
    ) where P.Value == Bool {
        self.init(state: isEnabled, enabledIf: { $0 }, execute: { _, input in execute(input) })
    }

    /// Creates an action that is always enabled (except while executing).
    public convenience init(execute: @escaping @Sendable (Input) -> SignalProducer<Output, Error>) {
        self.init(state: Property(value: true), enabledIf: { $0 }, execute: { _, input in execute(input) })
    }

    deinit {
        eventsObserver.sendCompleted()
        disabledErrorsObserver.sendCompleted()
        token.dispose()
    }

    /// A producer whose every start is one attempt to run the action with `input`; see the
    /// type's documentation.
    public func apply(_ input: Input) -> SignalProducer<Output, ActionError<Error>> {
        let carried = _Carried(input)
        return SignalProducer { [weak self] observer, lifetime in
            guard let self else {
                observer.send(error: .disabled)
                return
            }
            let (value, enabled) = self.stateValue()
            let started = self.state.withLockedValue { isRunning -> Bool in
                guard enabled, !isRunning else { return false }
                isRunning = true
                return true
            }
            guard started else {
                observer.send(error: .disabled)
                self.disabledErrorsObserver.send(value: ())
                return
            }
            self.executing.value = true
            let eventsObserver = self.eventsObserver
            let finish: @Sendable () -> Void = { [weak self] in
                guard let self else { return }
                self.state.withLockedValue { $0 = false }
                self.executing.value = false
            }
            // As in ReactiveSwift: each event goes to the attempt's observer, then to `events`;
            // the action stops executing when the attempt's run ends (after its observer got
            // the terminal event, or when it is interrupted), once the unit of work has been
            // interrupted.
            self.execute(value, carried.value).startWithSignal { signal, interrupter in
                lifetime += interrupter
                signal.observe { event in
                    observer.send(event.mapError { ActionError.producerFailed($0) })
                    eventsObserver.send(value: event)
                }
            }
            lifetime.observeEnded(finish)
        }
    }
}

extension Action: BindingTargetProvider {
    /// A binding target that applies the action (and starts it) for each value, for `<~`.
    public var bindingTarget: BindingTarget<Input> {
        BindingTarget(lifetime: lifetime) { [weak self] input in self?.apply(input).start() }
    }
}

extension SignalProducer where Error == Never {
    /// A property holding this producer's latest value; the producer must send a value
    /// synchronously when started.
    var property: Property<Value> {
        Property(unsafeProducer: self)
    }
}

// Every stored property is an immutable reference to a thread-safe object; the only mutable
// state, "a run is under way", is in `state` (a `LockedValueBox`).
extension Action: @unchecked Sendable {}
