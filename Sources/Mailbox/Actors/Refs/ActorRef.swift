/// A typed, cheap, `Sendable` handle to an actor: the only way to talk to it.
///
/// - `tell(_:)` enqueues a message and returns at once; it never blocks and never suspends.
/// - `send(_:)` is the `async` form: it suspends while a back-pressure mailbox is full and
///   throws if the message cannot be delivered.
/// - `ask(timeout:_:)` sends a message carrying a reply ref and awaits the reply.
///
/// Refs are `Hashable`: two refs are equal when they point at the same actor incarnation.
/// A ref to a terminated actor stays valid; what is sent to it becomes a dead letter.
///
/// Ordering: messages from one sender to one actor are handled in the order they were sent,
/// on every scheduler. Delivery is at-most-once.
public struct ActorRef<Message: Sendable>: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    let target: ActorRefTarget<Message>

    @usableFromInline
    init(_ target: ActorRefTarget<Message>) {
        self.target = target
    }

    /// The actor's address (system, path and incarnation).
    public var address: ActorAddress { target.address }

    /// The actor's path, e.g. `/user/lobby/alice`.
    public var path: String { target.address.path }

    /// Enqueues `message` for the actor. Never blocks, never suspends, never throws.
    ///
    /// - Returns: `.enqueued`, or `.dropped(reason)` if the actor had terminated or its bounded
    ///   mailbox refused the message; a dropped message is published as a dead letter.
    @inlinable
    @discardableResult
    public func tell(_ message: Message) -> TellResult {
        if target.isActorCell {
            // Specialised in the caller's module: no generic metadata look-ups per message.
            return unsafeDowncast(target, to: ActorCell<Message>.self).tellCell(message)
        }
        return target.tell(message)
    }

    /// Sends `message`, suspending while the actor's back-pressure mailbox is full.
    ///
    /// For other mailboxes this is `tell` that throws when the message is dropped.
    ///
    /// - Throws: `SendError` if the actor has terminated or the mailbox dropped the message;
    ///   `CancellationError` if the task is cancelled while waiting for room (the message is
    ///   then not enqueued).
    public func send(_ message: Message) async throws {
        try await target.send(message)
    }

    /// This ref without its message type, for watching and comparing.
    public var asAny: AnyActorRef { AnyActorRef(target.actorTarget) }

    public var description: String { "ActorRef<\(Message.self)>(\(address.path))" }

    public static func == (lhs: ActorRef, rhs: ActorRef) -> Bool {
        lhs.target === rhs.target
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(target))
    }
}
