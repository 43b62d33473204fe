/// A base class for actors whose state is best kept in an object: override `receive(_:)`
/// (and, if needed, `receiveLifecycle(_:)`), and spawn with `Behavior.object`.
///
/// ```swift
/// final class Counter: AbstractBehavior<CounterMessage> {
///     private var count = 0
///     override func receive(_ message: CounterMessage) throws -> Behavior<CounterMessage> {
///         switch message {
///         case .increment: count += 1
///         case let .get(replyTo): replyTo.tell(count)
///         }
///         return .same
///     }
/// }
/// ```
///
/// Thread-safety: the object is used only by its actor, one message at a time; it needs no lock
/// and must not be shared with other threads.
open class AbstractBehavior<Message: Sendable> {
    /// The context of the actor this object belongs to.
    public let context: ActorContext<Message>

    /// Creates the object for the actor whose context is `context`.
    public init(context: ActorContext<Message>) {
        self.context = context
    }

    /// Handles one message and returns the behavior for the next (`.same` to keep this object).
    open func receive(_ message: Message) throws -> Behavior<Message> {
        .unhandled
    }

    /// Handles a lifecycle event; the default leaves it unhandled.
    open func receiveLifecycle(_ event: LifecycleEvent) throws -> Behavior<Message> {
        .unhandled
    }
}

/// Something that happened to an actor or to an actor it watches, delivered to the behavior's
/// lifecycle handler. These travel as *system messages*: they are handled before queued user
/// messages and are never dropped.
public enum LifecycleEvent: Sendable {
    /// The actor has stopped and its children have stopped; delivered once, after which only
    /// a `Behavior.stopped(postStop:)` closure runs.
    case postStop
    /// The actor's state is about to be replaced by a restart (see `docs/Supervision.md`):
    /// delivered once, to the failed state, before timers are cancelled and children stopped.
    /// What the handler returns is ignored.
    case preRestart
    /// A watched actor has terminated, for whatever reason. Delivered exactly once per watch.
    ///
    /// A failed child is a kind of terminated actor (as Akka Typed's `ChildFailed` is a
    /// `Terminated`): its termination is offered as `childFailed` first, and if that is
    /// unhandled, as `terminated`. A behavior that matches only `terminated` therefore sees
    /// every watched termination; one that handles neither is in a death pact
    /// (`DeathPactError`).
    case terminated(AnyActorRef)
    /// A child failed and terminated, with its error: offered to a parent that watches it
    /// (however late the watch: the error is never lost to timing), and to every parent whose
    /// child escalated the failure, watched or not. Left unhandled, a watched child's
    /// termination is then offered as `terminated`; an escalation nobody takes fails the parent
    /// with `ChildFailedError`. An actor watching another actor's child gets only `terminated`.
    case childFailed(AnyActorRef, error: any Error)
}
