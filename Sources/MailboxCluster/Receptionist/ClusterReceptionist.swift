import Mailbox

/// The receptionist of a cluster: registering a service key on any node lists the actor on
/// every node. The same API as the local `Receptionist` — listings are that receptionist's
/// (`system.receptionist`), which also lists the remote actors.
///
/// Each node sends its whole registry when it changes (and to a node that joins or asks);
/// the newest version of a node's registry wins. A downed or departed node's entries leave
/// every listing; so does a remote actor that terminates.
///
/// Only this node's own actors are announced to the others: registering a remote ref lists
/// it here only. Thread-safety: any thread.
public final class ClusterReceptionist: Sendable {
    private let core: _ClusterCore

    init(core: _ClusterCore) {
        self.core = core
    }

    /// Registers `ref` under `key` on every node, until it is deregistered or terminates.
    public func register<Message: Codable & Sendable>(_ ref: ActorRef<Message>, with key: ServiceKey<Message>) {
        core.installApplier(for: key)
        core.system.receptionist.register(ref, with: key)
        guard ref.address.node == nil else { return }
        let address = core.export(ref)
        let actor = _WireActor(path: address.path, incarnation: address.incarnation)
        core.changeLocalRegistry(key: key.id, actor: actor, add: true)
        ref.onTermination { [weak core] _ in
            core?.changeLocalRegistry(key: key.id, actor: actor, add: false)
        }
    }

    /// Removes `ref` from `key` on every node.
    public func deregister<Message: Codable & Sendable>(_ ref: ActorRef<Message>, from key: ServiceKey<Message>) {
        core.system.receptionist.deregister(ref, from: key)
        guard ref.address.node == nil else { return }
        core.changeLocalRegistry(key: key.id, actor: _WireActor(path: ref.address.path, incarnation: ref.address.incarnation), add: false)
    }

    /// The actors registered under `key` on every node, now.
    public func find<Message: Codable & Sendable>(_ key: ServiceKey<Message>) -> Set<ActorRef<Message>> {
        core.installApplier(for: key)
        return core.system.receptionist.find(key)
    }

    /// The actors registered under `key` on every node, as a property that follows changes.
    public func listing<Message: Codable & Sendable>(for key: ServiceKey<Message>) -> Property<Set<ActorRef<Message>>> {
        core.installApplier(for: key)
        return core.system.receptionist.listing(for: key)
    }

    /// Tells `subscriber` the listing of `key` now and after every change.
    @discardableResult
    public func subscribe<Message: Codable & Sendable>(_ key: ServiceKey<Message>, _ subscriber: ActorRef<Receptionist.Listing<Message>>) -> any Disposable {
        core.installApplier(for: key)
        return core.system.receptionist.subscribe(key, subscriber)
    }

    /// A group router over `key` across the cluster: it routes to the actors registered under
    /// `key` on every node (remote ones by their refs), following the listing as it changes.
    /// The same as `Routers.group(key)` once this receptionist follows the key (which this
    /// does): a plain `Routers.group(key)` sees remote actors only on a node where the cluster
    /// receptionist was asked about the key (its message type is needed to list them).
    public func group<Message: Codable & Sendable>(_ key: ServiceKey<Message>) -> GroupRouter<Message> {
        core.installApplier(for: key)
        return Routers.group(key)
    }

    /// A queue-group router over `key`: each message goes to ONE actor registered under `key`
    /// somewhere in the cluster. NATS picks the node among those serving the key (every node
    /// with a registration under it joins the key's queue group), at random, so load spreads
    /// across nodes; the chosen node hands its messages to its own registered actors in turn.
    ///
    /// Unlike `group(_:)`, the sender needs no listing: nodes serving the key may come and go
    /// and NATS routes around them. Delivery is at-most-once and there is no order between
    /// messages (two may go to two nodes). A message is a dead letter here when no node serves
    /// the key as far as this node knows; one that reaches a node that has just stopped
    /// serving it is a dead letter there, and a question in it fails its ask at once. `send`
    /// suspends only as a `tell` would (there is no per-node window); the router never
    /// terminates (watching it tells nothing).
    ///
    /// Thread-safety: the ref may be told from any thread.
    public func queueGroup<Message: Codable & Sendable>(_ key: ServiceKey<Message>) -> ActorRef<Message> {
        core.installApplier(for: key)
        let endpoint = _QueueGroupEndpoint<Message>(key: key.id, core: core)
        return ActorRef(remote: endpoint.address, system: core.system, endpoint: endpoint)
    }
}
