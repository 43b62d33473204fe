// ReactiveSwift's other `Action` initialisers, and `apply()` for actions without input.

extension Action {
    /// Creates an action that is always enabled (except while executing), whose runs execute
    /// `execute(state.value, input)` with the state's value at the attempt.
    public convenience init<P: PropertyProtocol>(state: P, execute: @escaping @Sendable (P.Value, Input) -> SignalProducer<Output, Error>) {
        self.init(state: state, enabledIf: { _ in true }, execute: execute)
    }

    /// Creates an action enabled while `state` holds a value (is not `nil`); its runs execute
    /// `execute(value, input)` with that value.
    public convenience init<P: PropertyProtocol, T>(unwrapping state: P, execute: @escaping @Sendable (T, Input) -> SignalProducer<Output, Error>) where P.Value == T? {
        self.init(state: state, enabledIf: { $0 != nil }) { value, input in
            // `enabledIf` let this run start only with a value.
            execute(value!, input)
        }
    }

    /// Creates an action enabled while `state` holds a valid value (its `result` is not
    /// `.invalid`); its runs execute `execute(value, input)` with that value.
    public convenience init<T, E>(validated state: ValidatingProperty<T, E>, execute: @escaping @Sendable (T, Input) -> SignalProducer<Output, Error>) {
        self.init(unwrapping: state.result.map { $0.value }, execute: execute)
    }
}

extension Action where Input == Void {
    /// A producer whose every start is one attempt to run the action; see `apply(_:)`.
    public func apply() -> SignalProducer<Output, ActionError<Error>> {
        apply(())
    }

    /// Creates an action without input, enabled while `state` holds a value; its runs execute
    /// `execute(value)`.
    public convenience init<P: PropertyProtocol, T>(unwrapping state: P, execute: @escaping @Sendable (T) -> SignalProducer<Output, Error>) where P.Value == T? {
        self.init(unwrapping: state) { value, _ in execute(value) }
    }

    /// Creates an action without input, enabled while `state` holds a valid value; its runs
    /// execute `execute(value)`.
    public convenience init<T, E>(validated state: ValidatingProperty<T, E>, execute: @escaping @Sendable (T) -> SignalProducer<Output, Error>) {
        self.init(validated: state) { value, _ in execute(value) }
    }

    /// Creates an action without input, always enabled (except while executing), whose runs
    /// execute `execute(state.value)`.
    public convenience init<P: PropertyProtocol, T>(state: P, execute: @escaping @Sendable (T) -> SignalProducer<Output, Error>) where P.Value == T {
        self.init(state: state) { value, _ in execute(value) }
    }
}
