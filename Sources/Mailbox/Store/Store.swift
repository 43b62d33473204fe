/// A Redux-style store: an actor owns the state, a pure reducer folds each dispatched input
/// into it (a `scan` of the inputs, serialised by the actor's mailbox), and the state is a
/// `Property` anyone may read and observe.
///
/// ```swift
/// enum CounterInput: Sendable { case increment, decrement }
/// let store = try Store(system: system, name: "counter", initialState: 0) { count, input in
///     switch input {
///     case .increment: count + 1
///     case .decrement: count - 1
///     }
/// }
/// store.state.producer.startWithValues { print($0) }   // 0, then every new state
/// store.dispatch(.increment)
/// ```
///
/// - `dispatch(_:)` may be called from any thread and never blocks: the input is told to the
///   store's actor. Inputs from one thread are reduced in the order dispatched.
/// - The reducer runs on the store's actor, one input at a time, so it needs no lock; it must
///   be pure (no side effects, no blocking): side effects belong in effects.
/// - After each input the new state is published to `state` (every input publishes, also
///   when the state did not change; use `skipRepeats()` to de-duplicate), then every effect
///   is called with the input and the new state. An effect returns a `SignalProducer` of
///   inputs (`.empty` for none); the store starts it and dispatches each value it sends back
///   to itself. Effect runs are interrupted when the store stops.
/// - `state` completes when the store's actor terminates (`stop()`, system shutdown, or a
///   failure — a reducer or effect that traps is not caught).
///
/// Thread-safety: every member may be used from any thread. `state`'s observers run on the
/// store's actor, inside its mailbox run: they must not block, and must not dispatch
/// synchronously expecting to see the result (a dispatch from an observer is queued, like any
/// other).
///
/// What keeps what alive: the actor system keeps the store's actor running until `stop()` or
/// shutdown, whether or not the `Store` object is still referenced.
public final class Store<State: Sendable, Input: Sendable>: Sendable, BindingTargetProvider {
    /// Folds one input into the state; pure.
    public typealias Reducer = @Sendable (_ state: State, _ input: Input) -> State

    /// Called after each input with that input and the state it produced; returns a producer
    /// of inputs to dispatch back to the store (`.empty` for none).
    public typealias Effect = @Sendable (_ input: Input, _ state: State) -> SignalProducer<Input, Never>

    @usableFromInline
    enum Message: Sendable {
        case input(Input)
        case inputThenReply(Input, replyTo: ActorRef<State>)
        case stop
    }

    /// The current state, then every new state; completes when the store's actor terminates.
    /// Reading `state.value` never waits for the actor.
    public let state: Property<State>

    /// Ends when the store's actor terminates.
    public let lifetime: Lifetime

    @usableFromInline
    let ref: ActorRef<Message>

    /// Creates the store and spawns its actor at `/user/<name>` in `system`.
    ///
    /// - Parameters:
    ///   - props: The actor's props (mailbox, scheduler). With a bounded mailbox its overflow
    ///     policy applies to dispatched inputs: `dispatch` then returns `.dropped` for an input
    ///     that found the mailbox full.
    ///   - reducer: The pure function from (state, input) to the next state.
    ///   - effects: Side effects run after each input; see the type's documentation.
    /// - Throws: What `ActorSystem.spawn` throws (invalid or duplicate name, shutting down).
    // `@inlinable`, with the behavior: the store's actor runs specialised for `State` and
    // `Input` in the caller's module (unspecialised, a dispatch was mostly generic metadata
    // look-ups; docs/Performance.md has the figures).
    @inlinable
    public init(
        system: ActorSystem,
        name: String,
        props: Props = Props(),
        initialState: State,
        effects: [Effect] = [],
        reducer: @escaping Reducer
    ) throws {
        let (ref, state) = try system.spawn(name: name, props: props, initialState: initialState) { published in
            Store.behavior(published: published, reducer: reducer, effects: effects)
        }
        let (lifetime, token) = Lifetime.make()
        ref.whenTerminated { _ in token.dispose() }
        self.ref = ref
        self.state = state
        self.lifetime = lifetime
    }

    @inlinable
    static func behavior(published: ActorState<State>, reducer: @escaping Reducer, effects: [Effect]) -> Behavior<Message> {
        .setup { context in
            var state = published.current
            let (effectsLifetime, effectsToken) = Lifetime.make()
            let myself = context.myself
            func reduce(_ input: Input) {
                state = reducer(state, input)
                published.publish(state)
                for effect in effects {
                    effect(input, state)
                        .take(during: effectsLifetime)
                        .startWithValues { myself.tell(.input($0)) }
                }
            }
            return Behavior<Message>.receiveMessage { message in
                switch message {
                case let .input(input):
                    reduce(input)
                case let .inputThenReply(input, replyTo):
                    reduce(input)
                    replyTo.tell(state)
                case .stop:
                    return .stopped
                }
                return .same
            }
            .receiveLifecycle { _, event in
                guard case .postStop = event else { return .unhandled }
                effectsToken.dispose()
                return .same
            }
        }
    }

    /// Sends `input` to the store, to be reduced after the inputs dispatched before it (from
    /// this thread). Never blocks, from any thread.
    ///
    /// - Returns: `.enqueued`, or `.dropped(reason)` if the store has stopped or its bounded
    ///   mailbox refused the input (the input is then a dead letter).
    @discardableResult
    @inlinable
    public func dispatch(_ input: Input) -> TellResult {
        ref.tell(.input(input))
    }

    /// Sends `input` and suspends until it has been reduced; returns the state it produced.
    ///
    /// - Throws: `AskError` if the store has stopped (`.notDelivered`) or did not reduce the
    ///   input within `timeout` (`.timedOut`, on the store actor's clock), `.invalidTimeout`
    ///   if `timeout` is not positive (the input is then not sent);
    ///   `CancellationError` if the task is cancelled (the input may still be reduced).
    public func dispatchAndWait(_ input: Input, timeout: Duration = .seconds(10)) async throws -> State {
        try await ref.ask(timeout: timeout) { .inputThenReply(input, replyTo: $0) }
    }

    /// Stops the store's actor after the inputs dispatched before (from this thread): `state`
    /// completes, effect runs are interrupted, and later dispatches are dropped. Idempotent.
    public func stop() {
        ref.tell(.stop)
    }

    /// Dispatches every value bound with `<~`, until the store stops.
    public var bindingTarget: BindingTarget<Input> {
        let ref = self.ref
        return BindingTarget(lifetime: lifetime) { ref.tell(.input($0)) }
    }
}
