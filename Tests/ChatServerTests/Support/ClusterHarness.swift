import Foundation
import Mailbox
import Testing
@testable import ChatServerCore

/// An in-memory cluster for chat servers: relays find each other at once, syncs are local
/// tells (FIFO per pair, as the real link), claims live in a dictionary. Claims are answered at
/// once, or held until `settleClaims()` when `holdClaims` is set.
///
/// Thread-safety: `state` is behind a lock.
final class InMemoryChatCluster: Sendable {
    private struct State {
        var relays: [ClusterNode: ActorRef<ChatRelayMessage>] = [:]
        var claims: [String: ClusterNode] = [:]
        var down: Set<ClusterNode> = []
        var holdClaims = false
        var heldClaims: [(node: ClusterNode, key: String, completion: @Sendable (Bool?) -> Void)] = []
        /// Syncs sent, by receiving node.
        var sent: [ClusterNode: [ChatSync]] = [:]
    }

    private let state = LockedValueBox(State())

    func link(_ name: String, incarnation: UInt64 = 1) -> Link {
        Link(node: ClusterNode(name: name, incarnation: incarnation), hub: self)
    }

    /// Claims are held until `settleClaims()`.
    var holdClaims: Bool {
        get { state.withLockedValue { $0.holdClaims } }
        set { state.withLockedValue { $0.holdClaims = newValue } }
    }

    /// Answers the claims held, in order.
    func settleClaims() {
        let held = state.withLockedValue { state in
            defer { state.heldClaims = [] }
            return state.heldClaims
        }
        for claim in held { claim.completion(decide(claim.key, for: claim.node)) }
    }

    /// Who owns `key` now.
    func owner(of key: String) -> ClusterNode? {
        state.withLockedValue { $0.claims[key] }
    }

    /// The syncs sent to `node` so far (and forgets them).
    func takeSent(to node: ClusterNode) -> [ChatSync] {
        state.withLockedValue { state in
            defer { state.sent[node] = [] }
            return state.sent[node] ?? []
        }
    }

    /// `node` is downed: it is cut off, its claims are released and every other relay hears.
    func down(_ node: ClusterNode) {
        let others = state.withLockedValue { state -> [ActorRef<ChatRelayMessage>] in
            state.down.insert(node)
            state.relays[node] = nil
            state.claims = state.claims.filter { $0.value != node }
            return Array(state.relays.values)
        }
        for relay in others { relay.tell(.peerDown(node)) }
    }

    /// Delivers `sync` to `to`'s relay as if `from` had sent it (bad or late input).
    func inject(_ sync: ChatSync, from: ClusterNode, to: ClusterNode) {
        let relay = state.withLockedValue { $0.relays[to] }
        relay?.tell(.sync(from: from, sync))
    }

    fileprivate func decide(_ key: String, for node: ClusterNode) -> Bool? {
        state.withLockedValue { state in
            guard !state.down.contains(node) else { return nil }
            if let owner = state.claims[key], owner != node { return false }
            state.claims[key] = node
            return true
        }
    }

    fileprivate func claim(_ key: String, for node: ClusterNode, completion: @escaping @Sendable (Bool?) -> Void) {
        let held = state.withLockedValue { state -> Bool in
            guard state.holdClaims else { return false }
            state.heldClaims.append((node, key, completion))
            return true
        }
        if !held { completion(decide(key, for: node)) }
    }

    fileprivate func release(_ key: String, for node: ClusterNode) {
        state.withLockedValue { state in
            if state.claims[key] == node { state.claims[key] = nil }
        }
    }

    fileprivate func send(_ sync: ChatSync, from: ClusterNode, to: ClusterNode) {
        let relay = state.withLockedValue { state -> ActorRef<ChatRelayMessage>? in
            guard !state.down.contains(from), let relay = state.relays[to] else { return nil }
            state.sent[to, default: []].append(sync)
            return relay
        }
        relay?.tell(.sync(from: from, sync))
    }

    fileprivate func others(than node: ClusterNode) -> [ClusterNode] {
        state.withLockedValue { Array($0.relays.keys.filter { $0 != node }) }
    }

    fileprivate func start(_ node: ClusterNode, relay: ActorRef<ChatRelayMessage>) {
        let others = state.withLockedValue { state -> [ClusterNode: ActorRef<ChatRelayMessage>] in
            defer { state.relays[node] = relay }
            return state.relays
        }
        for (other, otherRelay) in others {
            otherRelay.tell(.peerUp(node))
            relay.tell(.peerUp(other))
        }
    }

    fileprivate func stop(_ node: ClusterNode) {
        state.withLockedValue { $0.relays[node] = nil }
    }

    /// One node's link.
    final class Link: ChatClusterLink {
        let node: ClusterNode
        private let hub: InMemoryChatCluster

        init(node: ClusterNode, hub: InMemoryChatCluster) {
            self.node = node
            self.hub = hub
        }

        func send(_ sync: ChatSync, to node: ClusterNode) { hub.send(sync, from: self.node, to: node) }
        func broadcast(_ sync: ChatSync) {
            for other in hub.others(than: node) { hub.send(sync, from: node, to: other) }
        }
        func claim(_ key: String, completion: @escaping @Sendable (Bool?) -> Void) { hub.claim(key, for: node, completion: completion) }
        func release(_ key: String) { hub.release(key, for: node) }
        func start(relay: ActorRef<ChatRelayMessage>) { hub.start(node, relay: relay) }
        func stop() { hub.stop(node) }
    }
}

/// Chat servers on one virtual clock, as nodes of an `InMemoryChatCluster`, with in-memory
/// clients.
final class ClusterHarness {
    let scheduler = TestScheduler()
    let hub = InMemoryChatCluster()
    private(set) var systems: [ActorSystem] = []
    private(set) var servers: [String: ChatServer] = [:]
    private(set) var links: [String: InMemoryChatCluster.Link] = [:]
    /// Connection ids are unique in the whole harness (as they are on one node).
    private var nextID: UInt64 = 1

    /// Starts a node named `name` (its server name `name`.test).
    /// `beforeLink` runs once the server exists and before its link starts (to observe its
    /// events from the first peer on).
    @discardableResult
    func start(_ name: String, incarnation: UInt64 = 1, beforeLink: (ChatServer) -> Void = { _ in }) throws -> ChatServer {
        var configuration = ChatServerConfiguration()
        configuration.serverName = "\(name).test"
        configuration.createdAt = Date(timeIntervalSince1970: 0)
        configuration.floodControl = false
        let system = ActorSystem(name: "chat-\(name)", configuration: .init(scheduler: scheduler, logHandler: nil))
        let link = hub.link(name, incarnation: incarnation)
        let server = try ChatServer(configuration: configuration, system: system, link: link)
        beforeLink(server)
        server.startLink()
        systems.append(system)
        servers[name] = server
        links[name] = link
        run()
        return server
    }

    func node(_ name: String) -> ClusterNode { links[name]!.node }

    /// Runs everything due now.
    func run() {
        scheduler.advance(by: .nanoseconds(0))
    }

    /// A new connection to node `name`, not registered.
    func connect(to name: String) -> FakeConnection {
        let connection = FakeConnection(id: nextID)
        nextID += 1
        servers[name]!.attach(connection)
        run()
        return connection
    }

    /// A registered client of node `node`, joined to `channels`; everything it was sent so far
    /// is consumed, and so is what `others` were sent.
    func client(_ nick: String, on node: String, in channels: String..., others: [FakeConnection] = []) -> FakeConnection {
        let connection = connect(to: node)
        connection.type("NICK \(nick)", "USER \(nick) 0 * :Real \(nick)")
        run()
        let welcome = connection.take()
        #expect(welcome.contains { $0.contains(" 001 \(nick) ") }, "no welcome for \(nick) on \(node): \(welcome)")
        for channel in channels { connection.type("JOIN \(channel)") }
        run()
        _ = connection.take()
        for other in others { _ = other.take() }
        return connection
    }

    func shutdown() async {
        for system in systems { system.beginShutdown() }
        run()
        for system in systems { _ = await system.shutdown() }
    }
}
