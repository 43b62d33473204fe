import Dispatch
import Synchronization
import Mailbox
import MailboxNATS

/// A local actor whose ref went out to other nodes: how to deliver what they send it, and who
/// watches it from where. A class: the table hands it out per message without copying.
// The `var`s are touched only under `_ClusterCore.state`'s lock; the `let`s are immutable.
final class _Export: @unchecked Sendable {
    /// The `ActorRef<M>` (for resolving addresses that come back).
    let ref: any Sendable
    /// Decodes a message for the actor and tells it (or publishes why not).
    let deliver: @Sendable (_ manifest: String, _ payload: ArraySlice<UInt8>, _ from: ClusterNode) -> Void
    /// An ask's reply ref: forgotten after one reply or once the ask completed.
    let isAsk: Bool
    let isCompleted: @Sendable () -> Bool
    let failAsk: @Sendable (DeadLetter.Reason) -> Void
    /// For an ask's reply ref: the node the question went to (the ask fails when it goes).
    var destination: ClusterNode?
    /// The death watch that retires the export (actors only).
    var termination: (any Disposable)?
    /// Nodes that watch the actor.
    var watchers: Set<ClusterNode> = []

    init(
        ref: any Sendable, deliver: @escaping @Sendable (String, ArraySlice<UInt8>, ClusterNode) -> Void, isAsk: Bool,
        isCompleted: @escaping @Sendable () -> Bool, failAsk: @escaping @Sendable (DeadLetter.Reason) -> Void
    ) {
        self.ref = ref
        self.deliver = deliver
        self.isAsk = isAsk
        self.isCompleted = isCompleted
        self.failAsk = failAsk
    }
}

/// The inbound half of the link from one node incarnation.
struct _InboundLink {
    /// The highest sequence number received.
    var received: UInt64 = 0
    /// The highest acknowledged.
    var acknowledged: UInt64 = 0
}

/// What a node's remote registry holds, and the receptionist keys this node knows the type of.
struct _RemoteRegistry {
    var version: UInt64
    var system: String
    var entries: Set<_RegistryEntry>
}

/// A remote actor watched from this node.
struct _RemoteActorKey: Hashable {
    let node: ClusterNode
    let actor: _WireActor
}

/// Everything the core shares between threads, behind one lock.
struct _CoreState {
    var membership: _Membership
    var links: [ClusterNode: _PeerLink] = [:]
    var inbound: [ClusterNode: _InboundLink] = [:]
    var exports: [_WireActor: _Export] = [:]
    /// The exports that are asks' reply refs (a superset: other paths remove them from
    /// `exports` only; the heartbeat tidies this up).
    var askExports: Set<_WireActor> = []
    var remoteWatches: [_RemoteActorKey: Set<RemoteWatcher>] = [:]
    /// Refs to remote actors, held weakly, so that two refs to one actor are equal.
    var interned: [ActorAddress: any Sendable] = [:]
    var registries: [ClusterNode: _RemoteRegistry] = [:]
    /// The receptionist keys whose message type this node knows: how to list a remote entry.
    var registryAppliers: [String: _RegistryApplier] = [:]
    /// This node's own registrations, by key.
    var localRegistry: [String: Set<_WireActor>] = [:]
    var localRegistryVersion: UInt64 = 0
    /// Nodes frames from which were lost since the last tick: watches are reconciled with
    /// them at the next tick (`watchSync` both ways).
    var resyncs: Set<ClusterNode> = []
    /// Per service key, the next turn among this node's actors for queue-group messages.
    var queueTurns: [String: Int] = [:]
    /// Downed incarnations told so since the last tick (told once per tick at most).
    var toldDowned: Set<ClusterNode> = []
    var statistics = ClusterStatistics()
    var ticks: UInt64 = 0
    var isShutDown = false
    /// This node was downed by the others.
    var wasDowned = false
}

/// Lists and unlists remote registrations of one key in the local receptionist, with the key's
/// message type.
struct _RegistryApplier {
    let apply: @Sendable (_ added: [ActorAddress], _ removed: [ActorAddress]) -> Void
}

/// The cluster node's machinery: membership, links, exports, watches and the registry
/// gossip, over one transport (a NATS connection, or the simulation's in-memory one) and one
/// clock. `ClusterSystem` is its public face.
///
/// Threads: the transport delivers each subscription's frames in order (NATS: on its reading
/// thread); the heartbeat runs on the clock's timer; refs call in from any thread. Shared state is `state`; effects
/// (publishing, telling actors, firing watches) run outside its lock.
final class _ClusterCore: Sendable {
    let me: ClusterNode
    let system: ActorSystem
    let configuration: ClusterConfiguration
    /// The messaging engine: a `NATSConnection`, or a simulated transport.
    let transport: any _ClusterTransport
    /// Where `now` and the heartbeat's timer come from.
    let clock: _ClusterClock
    let ownsConnection: Bool
    let subjects: _Subjects
    let state: LockedValueBox<_CoreState>
    let memberEvents: Signal<MemberEvent, Never>
    let memberEventsInput: Signal<MemberEvent, Never>.Observer
    let membersProperty: MutableProperty<[Member]>
    private let start: Duration
    private let resources = LockedValueBox<[any Disposable]>([])
    let sequenceOffset: Int
    /// Messages sent to remote actors (counted outside the state's lock: once per message).
    let sentMessages = Atomic<UInt64>(0)
    /// This node's queue subscriptions by service key; its lock also orders their changes
    /// (taken before `state`'s, never inside it).
    let queueSubscriptions = LockedValueBox<[String: any Disposable]>([:])
    /// This node's distributed actors, by ID (weakly), and the counter of their IDs.
    let distributedActors = LockedValueBox<[ActorAddress: _WeakDistributedActor]>([:])
    let distributedIDs = Atomic<UInt64>(0)

    convenience init(me: ClusterNode, system: ActorSystem, configuration: ClusterConfiguration, connection: NATSConnection, ownsConnection: Bool) {
        self.init(me: me, system: system, configuration: configuration, transport: connection, clock: .wall, ownsConnection: ownsConnection)
    }

    init(
        me: ClusterNode, system: ActorSystem, configuration: ClusterConfiguration, transport: any _ClusterTransport, clock: _ClusterClock,
        ownsConnection: Bool
    ) {
        self.me = me
        self.system = system
        self.configuration = configuration
        self.transport = transport
        self.clock = clock
        self.start = clock.now()
        self.ownsConnection = ownsConnection
        self.subjects = _Subjects(cluster: configuration.clusterName)
        self.state = LockedValueBox(_CoreState(membership: _Membership(me: me, settings: configuration.membershipSettings, now: .zero)))
        (memberEvents, memberEventsInput) = Signal<MemberEvent, Never>.pipe()
        membersProperty = MutableProperty([Member(node: me, status: .up)])
        sequenceOffset = _Envelope.sequenceOffset(from: me)
    }

    /// A cluster dropped without `leave()`: stop what would call into it, close what it owns.
    deinit {
        for resource in resources.withLockedValue({ $0 }) { resource.dispose() }
        if ownsConnection { transport.close() }
    }

    /// Time since the node started: the membership's clock.
    var now: Duration { clock.now() - start }

    /// The NATS connection the node runs on.
    ///
    /// - Precondition: the node runs on NATS (not on a simulated transport).
    var connection: NATSConnection {
        guard let connection = transport as? NATSConnection else {
            preconditionFailure("this cluster node runs on a simulated transport (\(type(of: transport))), not on a NATS connection")
        }
        return connection
    }

    // MARK: Starting and stopping

    /// Subscribes to the node's subjects, starts the heartbeat and says hello.
    func startUp() throws(NATSError) {
        let node = try transport.clusterSubscribe(to: subjects.node(me), queue: nil) { [weak self] message in
            self?.receivedDirected(message)
        }
        let members = try transport.clusterSubscribe(to: subjects.heartbeats, queue: nil) { [weak self] message in
            self?.receivedBroadcast(message)
        }
        let registries = try transport.clusterSubscribe(to: subjects.registries, queue: nil) { [weak self] message in
            self?.receivedBroadcast(message)
        }
        let noResponders = try transport.clusterSubscribe(to: subjects.noRespondersWildcard(me), queue: nil) { [weak self] message in
            self?.receivedNoResponders(message)
        }
        let linkWatch = transport.state.producer.startWithValues { [weak self] linkState in
            self?.linkChanged(linkState)
        }
        let timer = clock.repeating(configuration.heartbeatInterval) { [weak self] in self?.tick() }
        resources.withLockedValue {
            $0 = [node, members, registries, noResponders, linkWatch, timer]
        }
    }

    /// Leaves in order: tells the others, stops the heartbeat, closes the links (waiting sends
    /// fail), and the connection if the cluster made it.
    func shutDown() async {
        let alreadyDown = state.withLockedValue { state -> Bool in
            defer { state.isShutDown = true }
            return state.isShutDown
        }
        guard !alreadyDown else { return }
        publish(.leaving, to: subjects.heartbeats)
        try? await transport.flush(timeout: .seconds(2))
        let disposables = resources.withLockedValue { resources -> [any Disposable] in
            defer { resources = [] }
            return resources
        }
        // The timer's handler may be running: wait for it to finish.
        for disposable in disposables { disposable.dispose() }
        clock.quiesce()
        endQueueSubscriptions()
        let (links, exports) = state.withLockedValue { state -> ([_PeerLink], [_Export]) in
            defer {
                state.links = [:]
                state.exports = [:]
            }
            return (Array(state.links.values), Array(state.exports.values))
        }
        for link in links { link.close() }
        for export in exports { export.termination?.dispose() }
        if ownsConnection {
            transport.close()
            await transport.closed()
        }
    }

    // MARK: Publishing unsequenced frames

    func publish(_ frame: _Frame, to subject: String, replyTo: String? = nil) {
        let bytes = _Envelope(from: me, sequence: 0, frame: frame).encoded()
        try? transport.publish(bytes, to: subject, replyTo: replyTo, headers: nil)
    }

    // MARK: The heartbeat

    func tick() {
        let now = self.now
        let tick = state.withLockedValue { state -> (_Membership.TickOutcome, [(ClusterNode, UInt64)], [_PeerLink], UInt64, Set<ClusterNode>)? in
            // After `leave()` this node says nothing more (a late heartbeat would bring it back).
            guard !state.isShutDown, !state.wasDowned else { return nil }
            state.ticks += 1
            state.toldDowned = []
            let outcome = state.membership.tick(at: now)
            var acks: [(ClusterNode, UInt64)] = []
            for (node, var link) in state.inbound where link.received > link.acknowledged {
                link.acknowledged = link.received
                state.inbound[node] = link
                acks.append((node, link.received))
            }
            // Forget ask reply refs whose ask has completed (or that went another way).
            for actor in state.askExports {
                if let export = state.exports[actor], !export.isCompleted() { continue }
                state.exports[actor] = nil
                state.askExports.remove(actor)
            }
            if state.ticks % 64 == 0 {
                state.interned = state.interned.filter { ($0.value as? any _WeakChecking)?.isAlive ?? false }
            }
            defer { state.resyncs = [] }
            return (outcome, acks, Array(state.links.values), state.localRegistryVersion, state.resyncs)
        }
        guard let (outcome, acks, stalledLinks, registryVersion, resyncs) = tick else { return }
        for node in resyncs { sendWatchSync(to: node, asking: true) }
        publish(.heartbeat(status: .up, system: system.name, registryVersion: registryVersion), to: subjects.heartbeats)
        for (node, sequence) in acks { publish(.ack(sequence: sequence), to: subjects.node(node)) }
        for link in stalledLinks {
            if let sequence = link.stalledSequence() { publish(.probe(sequence: sequence), to: link.subject) }
        }
        for node in outcome.probes { probe(node) }
        apply(outcome.events)
    }

    /// Asks `node` whether it is there (a request on its subject).
    private func probe(_ node: ClusterNode) {
        let bytes = _Envelope(from: me, sequence: 0, frame: _Frame.ping).encoded()
        let subject = subjects.node(node)
        let timeout = configuration.probeTimeout
        transport.request(bytes, to: subject, timeout: timeout) { [self] result in
            let now = self.now
            let events = state.withLockedValue { state -> [MemberEvent] in
                switch result {
                case .success: return state.membership.probeAnswered(node, at: now)
                case let .failure(error) where error.code == .noResponders: return state.membership.probeFoundNoResponders(node, at: now)
                case let .failure(error) where error.code == .timedOut: return state.membership.probeTimedOut(node, at: now)
                case .failure: return state.membership.probeTimedOut(node, at: now)
                }
            }
            apply(events)
        }
    }

    private func linkChanged(_ linkState: NATSConnectionState) {
        let now = self.now
        state.withLockedValue { state in
            switch linkState {
            case .connected: state.membership.linkRestored(at: now)
            case .reconnecting, .connecting, .closed: state.membership.linkLost()
            }
        }
    }
}

/// A weak box the sweep can ask about.
protocol _WeakChecking {
    var isAlive: Bool { get }
}

extension WeakActorRef: _WeakChecking {
    var isAlive: Bool { ref != nil }
}
