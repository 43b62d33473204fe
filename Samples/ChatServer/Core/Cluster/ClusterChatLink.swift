import Mailbox
import MailboxCluster

/// `ChatClusterLink` over a MailboxCluster: the nodes' relays find each other through the
/// cluster receptionist (key `chat-relay`), syncs are remote tells to them (FIFO per pair of
/// nodes while both incarnations live, at most once), a node downed or gone (`memberEvents`)
/// is a `peerDown`, and nicks are claims in the cluster's KV bucket.
///
/// A listed relay becomes a peer only once its node is a member here (heard, not down): the
/// listing can arrive before the node's first heartbeat, and a tell to a node never heard
/// counts it as gone for good.
///
/// Thread-safety: `state` is behind a lock; tells and claim tasks start outside it. Claims and
/// releases of one key run one after the other, in the order they were made (a release then a
/// claim of the same nick must not be swapped).
final class ClusterChatLink: ChatClusterLink {
    /// The receptionist key every chat node's relay is registered under.
    static let relayKey = ServiceKey<ChatRelayMessage>("chat-relay")

    private struct State {
        /// The other nodes' relays that are peers: listed, and their node a member.
        var peers: [ClusterNode: ActorRef<ChatRelayMessage>] = [:]
        /// The other nodes' relays, as last listed.
        var listed: [ClusterNode: ActorRef<ChatRelayMessage>] = [:]
        /// The other nodes heard and not down.
        var members: Set<ClusterNode> = []
        /// Nodes downed or gone: never peers again (a new incarnation is another node).
        var gone: Set<ClusterNode> = []
        var subscriptions: [any Disposable] = []
        var relay: ActorRef<ChatRelayMessage>?
        var stopped = false
        /// Per key, the last claim or release queued (and its number, to forget it once done).
        var chains: [String: (number: UInt64, task: Task<Void, Never>)] = [:]
        var nextNumber: UInt64 = 0
    }

    let cluster: ClusterSystem
    let claims: ClusterClaims
    let node: ClusterNode
    private let state = LockedValueBox(State())

    init(cluster: ClusterSystem, claims: ClusterClaims) {
        self.cluster = cluster
        self.claims = claims
        node = cluster.node
    }

    func send(_ sync: ChatSync, to node: ClusterNode) {
        let peer = state.withLockedValue { $0.stopped ? nil : $0.peers[node] }
        peer?.tell(.sync(from: self.node, sync))
    }

    func broadcast(_ sync: ChatSync) {
        let peers = state.withLockedValue { $0.stopped ? [] : Array($0.peers.values) }
        guard !peers.isEmpty else { return }
        let message = ChatRelayMessage.sync(from: node, sync)
        for peer in peers { peer.tell(message) }
    }

    func claim(_ key: String, completion: @escaping @Sendable (Bool?) -> Void) {
        let claims = claims
        enqueue(key) {
            do {
                completion(try await claims.claim(key))
            } catch {
                completion(nil)
            }
        }
    }

    func release(_ key: String) {
        let claims = claims
        enqueue(key) { try? await claims.release(key) }
    }

    func start(relay: ActorRef<ChatRelayMessage>) {
        state.withLockedValue { $0.relay = relay }
        cluster.receptionist.register(relay, with: Self.relayKey)
        let listing = cluster.receptionist.listing(for: Self.relayKey).producer.startWithValues { [weak self] refs in
            self?.listed(refs)
        }
        let members = cluster.memberEvents.observeValues { [weak self] event in
            switch event.member.status {
            case .down, .removed: self?.gone(event.member.node)
            case .joining, .up, .unreachable, .leaving: self?.heard(event.member.node)
            }
        }
        for member in cluster.members.value where member.status != .down && member.status != .removed {
            heard(member.node)
        }
        state.withLockedValue { $0.subscriptions += [listing] + (members.map { [$0] } ?? []) }
    }

    func stop() {
        let (subscriptions, relay) = state.withLockedValue { state -> ([any Disposable], ActorRef<ChatRelayMessage>?) in
            state.stopped = true
            defer { state.subscriptions = [] }
            return (state.subscriptions, state.relay)
        }
        for subscription in subscriptions { subscription.dispose() }
        if let relay { cluster.receptionist.deregister(relay, from: Self.relayKey) }
    }

    /// The listing changed.
    private func listed(_ refs: Set<ActorRef<ChatRelayMessage>>) {
        promote { state in
            state.listed = [:]
            for ref in refs {
                guard let node = ref.address.node, node != self.node else { continue }
                state.listed[node] = ref
            }
        }
    }

    /// `node` is a member (heard, not down).
    private func heard(_ node: ClusterNode) {
        guard node != self.node else { return }
        promote { state in state.members.insert(node) }
    }

    /// Applies `change`, then makes peers of the listed relays whose nodes are members (and
    /// tells the relay of each new one).
    private func promote(after change: (inout State) -> Void) {
        let (relay, found) = state.withLockedValue { state -> (ActorRef<ChatRelayMessage>?, [ClusterNode]) in
            guard !state.stopped else { return (nil, []) }
            change(&state)
            var found: [ClusterNode] = []
            for (node, ref) in state.listed where state.peers[node] == nil && state.members.contains(node) && !state.gone.contains(node) {
                state.peers[node] = ref
                found.append(node)
            }
            return (state.relay, found)
        }
        for node in found { relay?.tell(.peerUp(node)) }
    }

    /// `node` was downed or left.
    private func gone(_ node: ClusterNode) {
        let relay = state.withLockedValue { state -> ActorRef<ChatRelayMessage>? in
            guard node != self.node, state.gone.insert(node).inserted else { return nil }
            state.peers[node] = nil
            state.members.remove(node)
            return state.relay
        }
        relay?.tell(.peerDown(node))
    }

    /// Runs `operation` after every operation queued before on `key`.
    private func enqueue(_ key: String, _ operation: @escaping @Sendable () async -> Void) {
        state.withLockedValue { state in
            let previous = state.chains[key]?.task
            state.nextNumber += 1
            let number = state.nextNumber
            let task = Task { [weak self] in
                await previous?.value
                await operation()
                self?.state.withLockedValue { state in
                    if state.chains[key]?.number == number { state.chains[key] = nil }
                }
            }
            state.chains[key] = (number, task)
        }
    }
}

extension ChatServer {
    /// Starts a chat server as one node of `cluster` (in the cluster's actor system): nicks are
    /// claimed in the cluster's KV bucket `nickBucket` (unique across the nodes), channels span
    /// the nodes, private messages and WHOIS reach users of every node, and a node that is
    /// downed takes its users out of every channel of the others. See docs/ChatServer.md,
    /// "Several nodes", for what is and is not shared.
    ///
    /// The server does not own the cluster's system: `shutdown()` closes the clients, then the
    /// caller leaves the cluster and terminates the system.
    ///
    /// - Throws: `ClusterError` when the claims bucket cannot be made (JetStream off);
    ///   `ActorSystemError` when the server's actors cannot be spawned.
    public static func node(configuration: ChatServerConfiguration, cluster: ClusterSystem,
                            nickBucket: String = "chat-nicks") async throws -> ChatServer {
        let claims = try await cluster.claims(nickBucket)
        return try ChatServer(configuration: configuration, system: cluster.system, link: ClusterChatLink(cluster: cluster, claims: claims))
    }
}
