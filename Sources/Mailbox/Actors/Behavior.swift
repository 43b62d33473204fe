/// How an actor handles its next message: a value in the style of Akka Typed.
///
/// A handler receives one message and returns the behavior for the next one: `.same` to keep
/// the current behavior, a new behavior to switch, `.stopped` to stop, or `.unhandled` to say
/// it did not understand the message (the message is published as unhandled and the behavior
/// stays). `setup` runs when the actor starts (and, once supervision restarts it, on restart).
///
/// Handlers are synchronous and may throw: a thrown error is a *failure*, handed to
/// supervision (`Behavior.supervise(_:).onFailure(_:)`: restart, resume, stop or escalate).
/// Without supervision a failed actor stops (its children first), its post-stop handler runs,
/// and the failure is logged and published on the system's event stream. Async work leaves the handler through
/// `ActorContext.pipeToSelf` or `ActorContext.ask`, and its result returns as a message, so a
/// handler is never re-entered.
///
/// Behaviors run only inside their actor, one message at a time, so a handler may capture and
/// mutate local state without a lock:
///
/// ```swift
/// func counter() -> Behavior<CounterMessage> {
///     .setup { _ in
///         var count = 0
///         return .receiveMessage { message in
///             switch message {
///             case .increment: count += 1
///             case let .get(replyTo): replyTo.tell(count)
///             }
///             return .same
///         }
///     }
/// }
/// ```
///
/// A behavior is not `Sendable`: it is handed to the actor with `sending` when spawned and
/// lives on inside it. Spawn each actor from a fresh behavior (a function that returns one, as
/// above) rather than sharing one behavior value between actors.
public struct Behavior<Message: Sendable> {
    // Not `indirect`: the payloads are closures (references), so a behavior is stored inline in
    // its actor instead of in a separate box allocated per behavior.
    @usableFromInline
    enum Kind {
        case same
        case unhandled
        case stopped(postStop: (() -> Void)?)
        case empty
        case ignore
        case setup((ActorContext<Message>) throws -> Behavior<Message>)
        case receive((ActorContext<Message>, Message) throws -> Behavior<Message>, lifecycle: LifecycleHandler<Message>?)
        /// `receive` without the context: kept apart so the handler is called directly, not
        /// through a wrapping closure (one allocation and one indirect call less).
        case receiveMessage((Message) throws -> Behavior<Message>, lifecycle: LifecycleHandler<Message>?)
        case object(AbstractBehavior<Message>)
        /// `supervise(_:).onFailure(_:)`: a rule, and the behavior it wraps.
        case supervised(SupervisionRule<Message>)
    }

    @usableFromInline
    let kind: Kind

    @usableFromInline
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// Keep the current behavior for the next message.
    public static var same: Behavior { Behavior(.same) }

    /// The message was not handled: it is published as unhandled and the current behavior stays.
    /// An unhandled `terminated` or `childFailed` lifecycle event fails the actor (a death
    /// pact, as in Akka).
    public static var unhandled: Behavior { Behavior(.unhandled) }

    /// Stop the actor: its children stop first, then its post-stop handler runs, then watchers
    /// receive `terminated`. Messages still queued become dead letters.
    public static var stopped: Behavior { Behavior(.stopped(postStop: nil)) }

    /// Stop the actor, running `postStop` after its children have stopped and before watchers
    /// are told.
    public static func stopped(postStop: @escaping () -> Void) -> Behavior {
        Behavior(.stopped(postStop: postStop))
    }

    /// Treat every message as unhandled.
    public static var empty: Behavior { Behavior(.empty) }

    /// Accept and ignore every message.
    public static var ignore: Behavior { Behavior(.ignore) }

    /// Run `factory` when the actor starts (on the actor's scheduler, before any message), and
    /// use the behavior it returns. A throw is a failure of the actor's start.
    public static func setup(_ factory: @escaping (ActorContext<Message>) throws -> Behavior<Message>) -> Behavior {
        Behavior(.setup(factory))
    }

    /// Handle each message with `handler`, which also receives the actor's context.
    public static func receive(_ handler: @escaping (ActorContext<Message>, Message) throws -> Behavior<Message>) -> Behavior {
        Behavior(.receive(handler, lifecycle: nil))
    }

    /// Handle each message with `handler`.
    public static func receiveMessage(_ handler: @escaping (Message) throws -> Behavior<Message>) -> Behavior {
        Behavior(.receiveMessage(handler, lifecycle: nil))
    }

    /// Handle only lifecycle events; every message is unhandled.
    public static func receiveLifecycle(_ handler: @escaping (ActorContext<Message>, LifecycleEvent) throws -> Behavior<Message>) -> Behavior {
        Behavior(.receive({ _, _ in .unhandled }, lifecycle: LifecycleHandler(handler)))
    }

    /// Use an object for the actor's state and handlers: `factory` runs when the actor starts.
    ///
    /// ```swift
    /// system.spawn(.object { context in Counter(context: context) }, name: "counter")
    /// ```
    public static func object(_ factory: @escaping (ActorContext<Message>) throws -> AbstractBehavior<Message>) -> Behavior {
        Behavior(.setup { context in Behavior(.object(try factory(context))) })
    }

    /// This behavior, with `handler` for lifecycle events (`postStop`, `terminated`,
    /// `childFailed`, `preRestart`). Return `.same` when handled, `.unhandled` otherwise.
    ///
    /// Applies to behaviors made with `receive`, `receiveMessage` or `receiveLifecycle`; on a
    /// `setup`, to the behavior the `setup` returns.
    ///
    /// Failure modes: on any other behavior there is nothing to attach the handler to, and the
    /// actor that starts with (or switches to) the result fails with an `ActorSystemError` of
    /// code `.invalidBehavior`, handled by its supervision — never a crash of the process.
    public func receiveLifecycle(_ handler: @escaping (ActorContext<Message>, LifecycleEvent) throws -> Behavior<Message>) -> Behavior {
        switch kind {
        case let .receive(receive, _):
            return Behavior(.receive(receive, lifecycle: LifecycleHandler(handler)))
        case let .receiveMessage(receive, _):
            return Behavior(.receiveMessage(receive, lifecycle: LifecycleHandler(handler)))
        case let .setup(factory):
            return Behavior(.setup { context in try factory(context).receiveLifecycle(handler) })
        default:
            let problem = "receiveLifecycle(_:) applies to a receive behavior, not \(self)"
            return Behavior(.setup { context in
                throw ActorSystemError.invalidBehavior("\(context.address.path): \(problem)")
            })
        }
    }
}

/// A behavior's lifecycle handler, in a box of its own. A `Behavior.Kind` payload with a second
/// generic closure beside the message handler makes the compiler copy and destroy every
/// behavior through its type metadata, even in code specialised for the message type (several
/// copies per spawn and per `become`; see docs/Performance.md); with the second closure behind
/// a class reference the copies are inline, and a behavior is 8 bytes smaller. The box costs
/// one allocation per behavior that has a lifecycle handler.
@usableFromInline
final class LifecycleHandler<Message: Sendable> {
    @usableFromInline
    let handle: (ActorContext<Message>, LifecycleEvent) throws -> Behavior<Message>

    @usableFromInline
    init(_ handle: @escaping (ActorContext<Message>, LifecycleEvent) throws -> Behavior<Message>) {
        self.handle = handle
    }
}

extension Behavior: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .same: return "Behavior.same"
        case .unhandled: return "Behavior.unhandled"
        case .stopped: return "Behavior.stopped"
        case .empty: return "Behavior.empty"
        case .ignore: return "Behavior.ignore"
        case .setup: return "Behavior.setup"
        case .receive, .receiveMessage: return "Behavior.receive"
        case let .object(object): return "Behavior.object(\(type(of: object)))"
        case let .supervised(rule): return "Behavior.supervise(\(rule.behavior)).onFailure(\(rule.strategy))"
        }
    }
}
