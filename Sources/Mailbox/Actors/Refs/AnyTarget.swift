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

    /// The target that stands for this one as an actor, for equality of erased refs and for
    /// `ActorContext.stop`: itself, or a pool router's actor for the router's ref.
    var actorTarget: AnyTarget { self }

    /// Delivers a system message. The default treats the target as terminated: a watch is
    /// answered with `terminated` at once, everything else is dropped.
    @usableFromInline
    func sendSystem(_ message: SystemMessage) {
        if case let .watch(watcher) = message {
            watcher.sendSystem(.terminated(self, failure: nil))
        }
    }

    /// Tells this watcher that `watched` terminated, to be handled after every user message
    /// already in its mailbox (an actor's override); other targets take a plain `terminated`.
    func sendTerminatedAfterQueuedMessages(_ watched: AnyTarget, failure: (any Error)?) {
        sendSystem(.terminated(watched, failure: failure))
    }
}
