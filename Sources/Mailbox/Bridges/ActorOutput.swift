/// The handle an actor publishes its outputs through: given to the behavior when the actor is
/// spawned with `spawn(name:props:output:_:)`, used from inside its handlers.
///
/// Each `publish(_:)` sends the value to the observers of the actor's output `Signal` that are
/// attached at that moment (the signal is hot: nothing is buffered for later observers).
///
/// Thread-safety: `Sendable`; delivery is serial (observers never run concurrently). Publish
/// from the actor's handlers: observers then run on the actor's thread, inside its mailbox run,
/// so they must not block. An observer that makes the same actor publish again synchronously
/// (for example by telling it a message on an `ImmediateScheduler`) is a recursive send, a
/// precondition failure, as for any signal.
///
/// Failure modes: after the actor terminated the output has terminated too, and `publish`
/// does nothing.
public struct ActorOutput<Output: Sendable>: Sendable {
    @usableFromInline
    let input: Signal<Output, Never>.Observer

    @usableFromInline
    init(input: Signal<Output, Never>.Observer) {
        self.input = input
    }

    /// Sends `value` to the output signal's current observers.
    @inlinable
    public func publish(_ value: Output) {
        input.send(value: value)
    }
}

extension ActorRefFactory {
    /// Spawns an actor (a top-level actor from a system, a child from a context, inside its
    /// actor's handlers) that publishes values of type `Output`, and returns its ref and its
    /// output as a hot `Signal`.
    ///
    /// ```swift
    /// let (ticker, ticks) = try system.spawn(name: "ticker", output: Int.self) { output in
    ///     Behavior<Int>.receiveMessage { tick in
    ///         output.publish(tick)
    ///         return .same
    ///     }
    /// }
    /// ticks.observeValues { print($0) }
    /// ```
    ///
    /// The output signal:
    /// - sends each value the actor publishes through the `ActorOutput` handed to
    ///   `makeBehavior`, to the observers attached at that moment, on the actor's thread;
    /// - **completes** when the actor stops (`.stopped`, a parent stopping it, shutdown);
    /// - is **interrupted** when the actor terminates because of a failure (it cannot fail:
    ///   its error type is `Never`; the failure itself is on `system.events`). A failure that
    ///   supervision restarts does not terminate the actor, and the output goes on.
    ///
    /// Thread-safety: call from any thread; the signal may be observed from any thread.
    /// What keeps what alive: the actor's behavior retains the handle; the returned `Signal`
    /// must be retained (or observed) for as long as it is wanted — an unreferenced, unobserved
    /// signal is torn down.
    ///
    /// - Throws: what `spawn(_:name:props:)` throws (invalid or duplicate name, shutting
    ///   down); the output is then interrupted.
    // `@inlinable` (as `spawn(_:name:props:)`): the actor's mailbox run is specialised in the
    // caller's module.
    @inlinable
    public func spawn<Message: Sendable, Output: Sendable>(
        name: String,
        props: Props = Props(),
        output: Output.Type,
        _ makeBehavior: @Sendable (ActorOutput<Output>) -> Behavior<Message>
    ) throws -> (ref: ActorRef<Message>, output: Signal<Output, Never>) {
        let (signal, input) = Signal<Output, Never>.pipe()
        let ref = try spawn(makeBehavior(ActorOutput(input: input)), name: name, props: props)
        ref.whenTerminated { failure in
            if failure == nil { input.sendCompleted() } else { input.sendInterrupted() }
        }
        return (ref, signal)
    }
}
