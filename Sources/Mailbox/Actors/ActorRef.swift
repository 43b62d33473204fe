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
    public var asAny: AnyActorRef { AnyActorRef(target) }

    public var description: String { "ActorRef<\(Message.self)>(\(address.path))" }

    public static func == (lhs: ActorRef, rhs: ActorRef) -> Bool {
        lhs.target === rhs.target
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(target))
    }
}

/// A ref whose message type is erased: it can be watched, compared and printed, not told.
public struct AnyActorRef: Sendable, Hashable, CustomStringConvertible {
    let target: AnyTarget

    init(_ target: AnyTarget) {
        self.target = target
    }

    /// The actor's address.
    public var address: ActorAddress { target.address }

    /// The actor's path.
    public var path: String { target.address.path }

    public var description: String { "AnyActorRef(\(address.path))" }

    public static func == (lhs: AnyActorRef, rhs: AnyActorRef) -> Bool {
        lhs.target === rhs.target
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(target))
    }

    /// Whether this is `ref`, whatever `ref`'s message type.
    public func `is`<Message>(_ ref: ActorRef<Message>) -> Bool {
        target === ref.target
    }
}

/// Why `send(_:)` could not deliver a message.
public struct SendError: Error, Sendable, CustomStringConvertible {
    /// Where the message was going.
    public let recipient: ActorAddress
    /// What happened to it: it was published as a dead letter for this reason.
    public let reason: DeadLetter.Reason

    public var description: String {
        "message to \(recipient.path) not delivered: \(reason)"
    }
}

// MARK: - Targets

/// What a ref can point at: an actor cell, a message adapter, an ask's reply promise, or
/// nothing (dead letters). The root of the hierarchy is a `PoolJob` so that an actor cell can be
/// queued on the default pool without a separate job object.
@usableFromInline
// Immutable after init except the sibling links, which only the parent's `ChildRegistry` touches
// (under the guardian's lock, or inside the parent's mailbox run); subclasses document their own.
class AnyTarget: PoolJob, @unchecked Sendable {
    @usableFromInline
    let address: ActorAddress

    // MARK: Sibling links: owned by the parent's `ChildRegistry`

    /// The parent (its identity only), fixed at creation; nil for targets that are no child.
    let parentIdentity: ObjectIdentifier?
    /// The next younger sibling in the parent's registry (which owns the chain). Parent's
    /// registry only.
    var youngerSibling: AnyTarget?
    /// The next older sibling in the parent's registry. Parent's registry only.
    unowned(unsafe) var olderSibling: AnyTarget?
    /// Whether the parent's registry lists this target. Parent's registry only.
    var isListedChild = false

    /// Whether this is an `ActorCell<Message>` of the ref's message type (a fast-path test
    /// cheaper than a dynamic cast).
    @usableFromInline
    let isActorCell: Bool

    init(address: ActorAddress, isActorCell: Bool = false, parent: AnyTarget? = nil) {
        self.address = address
        self.isActorCell = isActorCell
        self.parentIdentity = parent.map(ObjectIdentifier.init)
    }

    /// The target whose termination a watch of this target reports: itself, or an adapter's
    /// owner.
    var watchedTarget: AnyTarget { self }

    /// Delivers a system message. The default treats the target as terminated: a watch is
    /// answered with `terminated` at once, everything else is dropped.
    func sendSystem(_ message: SystemMessage) {
        if case let .watch(watcher) = message {
            watcher.sendSystem(.terminated(self, failure: nil))
        }
    }
}

/// A target that accepts messages of one type.
@usableFromInline
// Adds only an immutable reference to `AnyTarget`.
class ActorRefTarget<Message: Sendable>: AnyTarget, @unchecked Sendable {
    /// The system the target belongs to.
    let system: ActorSystem

    init(address: ActorAddress, system: ActorSystem, isActorCell: Bool = false, parent: AnyTarget? = nil) {
        self.system = system
        super.init(address: address, isActorCell: isActorCell, parent: parent)
    }

    /// The scheduler whose clock times asks to this target.
    var askScheduler: any DateScheduler { system.timerScheduler }

    @usableFromInline
    func tell(_ message: Message) -> TellResult {
        system.publishDeadLetter(message, to: address, reason: .noRecipient)
        return .dropped(.noRecipient)
    }

    func send(_ message: Message) async throws {
        let result = tell(message)
        if case let .dropped(reason) = result {
            throw SendError(recipient: address, reason: reason)
        }
    }
}

/// A ref target that converts messages and forwards them to another actor (see
/// `ActorContext.messageAdapter`). The conversion runs on the sender's thread.
// Immutable after init.
final class AdapterTarget<From: Sendable, To: Sendable>: ActorRefTarget<From>, @unchecked Sendable {
    let owner: ActorRefTarget<To>
    let transform: @Sendable (From) -> To

    init(owner: ActorRefTarget<To>, transform: @escaping @Sendable (From) -> To, address: ActorAddress) {
        self.owner = owner
        self.transform = transform
        super.init(address: address, system: owner.system)
    }

    override func tell(_ message: From) -> TellResult {
        owner.tell(transform(message))
    }

    override func send(_ message: From) async throws {
        try await owner.send(transform(message))
    }

    /// Watching an adapter watches its owner.
    override var watchedTarget: AnyTarget { owner }

    override func sendSystem(_ message: SystemMessage) {
        owner.sendSystem(message)
    }
}

/// The system messages actors exchange: handled before user messages, never dropped, never
/// counted against a mailbox's capacity.
enum SystemMessage {
    /// Run `setup` and start handling messages.
    case start
    /// Stop: children first, then post-stop, then tell watchers.
    case stop
    /// `watcher` wants `terminated` when this actor terminates.
    case watch(AnyTarget)
    /// `watcher` no longer wants `terminated`.
    case unwatch(AnyTarget)
    /// A watched actor terminated (with the failure that stopped it, if any).
    case terminated(AnyTarget, failure: (any Error)?)
    /// A child terminated (with the failure that stopped it, if any; `escalated` when the
    /// child's supervision escalated that failure): remove it, and finish stopping or
    /// restarting if this actor was waiting for it.
    case childTerminated(AnyTarget, failure: (any Error)?, escalated: Bool)
    /// A timer's message (of the actor's message type), if that timer is still current.
    case timer(key: TimerKey, generation: UInt64, message: any Sendable)
    /// A restart's back-off delay has passed (for the restart with this generation).
    case backoffElapsed(generation: UInt64)
    /// To a `Supervisor`: its child failed and waits, suspended, for a decision.
    case childFailed(AnyTarget, error: any Error)
    /// From a `Supervisor` to its child: first half of a restart; stop the children, run
    /// `preRestart`, then answer `restartStepDone`.
    case restartStop
    /// From a `Supervisor` to its child: second half of a restart; rebuild the state from the
    /// spawn behavior, then answer `restartStepDone`.
    case restartStart
    /// From a `Supervisor` to a child it restarts alone: both halves, one answer.
    case restartNow
    /// To a `Supervisor`: a child finished a `restartStop` or `restartStart`.
    case restartStepDone(AnyTarget)
}
