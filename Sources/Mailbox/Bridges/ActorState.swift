/// The handle an actor publishes its state through: given to the behavior when the actor is
/// spawned with `spawn(name:props:initialState:_:)`, used from inside its handlers.
///
/// `publish(_:)` stores the new state and sends it to the observers of the actor's `Property`,
/// synchronously, on the actor's thread. Every publish sends, also of an equal state (use
/// `skipRepeats()` on the property's producer to de-duplicate).
///
/// Thread-safety: `Sendable`; publish from the actor's handlers. Observers run on the actor's
/// thread and must not block; readers of `Property.value` on other threads never wait for the
/// actor (they take a short lock that is never held while user code runs).
///
/// Failure modes: after the actor terminated the property has completed; `publish` still
/// updates `current` but nobody is told.
public struct ActorState<State: Sendable>: Sendable {
    @usableFromInline
    let box: _PropertyBox<State>

    @usableFromInline
    init(box: _PropertyBox<State>) {
        self.box = box
    }

    /// Stores `state` as the actor's published state and sends it to the property's observers.
    @inlinable
    public func publish(_ state: State) {
        box.set(state)
    }

    /// The state published last (or the initial state).
    @inlinable
    public var current: State { box.value }
}

extension ActorRefFactory {
    /// Spawns an actor (a top-level actor from a system, a child from a context, inside its
    /// actor's handlers) that publishes its state, and returns its ref and that state as a
    /// read-only `Property`.
    ///
    /// ```swift
    /// let (counter, count) = try system.spawn(name: "counter", initialState: 0) { state in
    ///     Behavior<Int>.receiveMessage { amount in
    ///         state.publish(state.current + amount)
    ///         return .same
    ///     }
    /// }
    /// count.value    // the latest published state, from any thread
    /// ```
    ///
    /// The property:
    /// - `value` is always the state published last (`initialState` until the first publish);
    ///   reading it never blocks or waits for the actor;
    /// - `producer` starts with the current value, then sends every publish; `signal` sends
    ///   every publish from now on;
    /// - **completes** when the actor terminates, whether it stopped or failed (a property has
    ///   no failure); `value` then keeps the last state.
    ///
    /// Thread-safety: call from any thread; use the property from any thread. Observers run on
    /// the actor's thread, inside its mailbox run.
    ///
    /// - Throws: what `spawn(_:name:props:)` throws; no actor is then running.
    // `@inlinable` (as `spawn(_:name:props:)`): the actor's mailbox run is specialised in the
    // caller's module.
    @inlinable
    public func spawn<Message: Sendable, State: Sendable>(
        name: String,
        props: Props = Props(),
        initialState: State,
        _ makeBehavior: @Sendable (ActorState<State>) -> Behavior<Message>
    ) throws -> (ref: ActorRef<Message>, state: Property<State>) {
        let box = _PropertyBox(initialState)
        let ref = try spawn(makeBehavior(ActorState(box: box)), name: name, props: props)
        return (ref, box.actorProperty(completingWhen: ref))
    }
}

extension _PropertyBox where Value: Sendable {
    /// A read-only property following this box, which completes (and so does the property)
    /// when `ref`'s actor terminates.
    @usableFromInline
    func actorProperty<Message>(completingWhen ref: ActorRef<Message>) -> Property<Value> {
        let property = Property(viewing: self)
        ref.whenTerminated { [self] _ in complete() }
        return property
    }
}
