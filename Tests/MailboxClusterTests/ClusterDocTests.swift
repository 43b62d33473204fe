import Distributed
import Foundation
import Mailbox
import MailboxCluster
import MailboxNATS
import NATSTestSupport
import NetTestSupport
import Testing

// The examples of docs/Cluster.md, verbatim between "doc" comments, run as tests against the
// real server; and the guide's claims that no other test shows. Keep them in sync. This file
// imports MailboxCluster without @testable, so the examples use only what users can.

// doc begins: node
/// What a greeter is told: a name, and the ref to answer.
enum Greet: Codable, Sendable {
    case hello(String, replyTo: ActorRef<String>)
}

/// The service key every node lists its greeter under.
let greeters = ServiceKey<Greet>("greeters")

/// Starts one node: an actor system joined to the cluster, with a greeter that every node lists.
func startNode(_ configuration: ClusterConfiguration) async throws -> ClusterSystem {
    let system = ActorSystem(name: "demo")
    let node = try await ClusterSystem.join(system, configuration)
    let name = configuration.nodeName
    let greeter = try system.spawn(Behavior<Greet>.receiveMessage { message in
        switch message {
        case let .hello(who, replyTo):
            replyTo.tell("Hello, \(who), from \(name)!")
        }
        return .same
    }, name: "greeter")
    node.receptionist.register(greeter, with: greeters)
    return node
}
// doc ends

// doc begins: demo
/// Node `name` of the cluster "demo", on the NATS server at `url`.
func demoNode(_ name: String, nats url: String = "nats://127.0.0.1:4222") -> ClusterConfiguration {
    var configuration = ClusterConfiguration(nodeName: name, nats: url)
    configuration.clusterName = "demo"
    return configuration
}
// doc ends

// doc begins: greet
/// Asks every greeter of the cluster (this node's own too), once `count` of them are listed.
func greetEveryone(from node: ClusterSystem, count: Int) async throws -> [String] {
    let listing = node.receptionist.listing(for: greeters)
    _ = await listing.producer.filter { $0.count >= count }.first()
    var answers: [String] = []
    for greeter in listing.value {
        answers.append(try await greeter.ask(timeout: .seconds(5)) { .hello("Ada", replyTo: $0) })
    }
    return answers.sorted()
}

/// Tells every listed greeter to greet; the answers go to `inbox`, a ref that travels inside
/// the message as its address.
func greetAll(from node: ClusterSystem, answersTo inbox: ActorRef<String>) {
    for greeter in node.receptionist.find(greeters) {
        greeter.tell(.hello("Grace", replyTo: inbox))
    }
}
// doc ends

// doc begins: shop
/// Node `name` of the "shop" cluster, on a NATS cluster of three servers.
func shopNode(_ name: String, servers: [String]) -> ClusterConfiguration {
    var nats = NATSConfiguration(servers: servers)  // e.g. nats://10.0.0.1:4222, …2, …3
    nats.maxReconnectAttempts = -1                   // a cluster node never gives up on NATS
    nats.reconnectWait = .milliseconds(500)
    var configuration = ClusterConfiguration(nodeName: name, nats: nats)
    configuration.clusterName = "shop"
    return configuration
}
// doc ends

// doc begins: rejoin
/// Joins the cluster and stays in it: when the others down this incarnation, it leaves and
/// joins again as a new one, and `setUp` registers this process's actors with it.
@discardableResult
func joinAndStay(
    _ system: ActorSystem, _ configuration: ClusterConfiguration,
    setUp: @escaping @Sendable (ClusterSystem) throws -> Void
) async throws -> ClusterSystem {
    let cluster = try await ClusterSystem.join(system, configuration)
    try setUp(cluster)
    cluster.memberEvents.observeValues { event in
        guard event.member.node == cluster.node, event.member.status == .down else { return }
        Task {
            await cluster.leave()
            do {
                try await joinAndStay(system, configuration, setUp: setUp)
            } catch {
                print("cannot join again: \(error)")  // NATS is gone too: retry, or exit
            }
        }
    }
    return cluster
}
// doc ends

// doc begins: patient
/// A failure detector for a loaded network: slower to suspect, slower to down.
func patientNode(_ name: String, nats: NATSConfiguration) -> ClusterConfiguration {
    var configuration = ClusterConfiguration(nodeName: name, nats: nats)
    configuration.heartbeatInterval = .milliseconds(500)
    configuration.probeAfter = .milliseconds(1_500)  // three heartbeats missed
    configuration.probeTimeout = .seconds(1)
    configuration.goneAfter = .seconds(1)
    configuration.downAfter = .seconds(20)
    return configuration
}
// doc ends

// doc begins: migration
// Release 1.
struct Order: Codable, Sendable {
    var item: String
}

func release1Codecs() -> ClusterCodecs {
    var codecs = ClusterCodecs()
    codecs.register(Order.self, manifest: "shop.Order")  // version 1
    return codecs
}

// Release 2: the Swift type is renamed and gains a field; the manifest stays. It also answers
// to the manifest release 3 will send.
struct PlaceOrder: Codable, Sendable {
    var item: String
    var quantity: Int?  // optional: release 1 leaves it out
}

func release2Codecs() -> ClusterCodecs {
    var codecs = ClusterCodecs()
    codecs.register(PlaceOrder.self, manifest: "shop.Order", version: 2, aliases: ["shop.PlaceOrder"])
    return codecs
}

// Release 3, once no node runs release 1: the manifest is renamed; the old one stays an alias.
func release3Codecs() -> ClusterCodecs {
    var codecs = ClusterCodecs()
    codecs.register(PlaceOrder.self, manifest: "shop.PlaceOrder", version: 3, aliases: ["shop.Order"])
    return codecs
}
// doc ends

// doc begins: binary
/// Asks for a price; the answer goes to `replyTo`. Still `Codable` (every remote message type
/// is), but sent with the hand-written codec below.
struct PriceQuery: Codable, Sendable {
    var item: String
    var replyTo: ActorRef<Int>
}

/// `item`, a newline, then the reply ref's address.
struct PriceQueryCodec: ClusterMessageCodec {
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    func encode(_ message: PriceQuery, context: ClusterCodingContext) throws -> [UInt8] {
        Array("\(message.item)\n\(context.encode(message.replyTo))".utf8)
    }

    func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> PriceQuery {
        guard version == 1 else { throw Unreadable(description: "PriceQuery version \(version)") }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let newline = text.lastIndex(of: "\n") else { throw Unreadable(description: "no reply address") }
        let replyTo = try context.decodeRef(Int.self, from: String(text[text.index(after: newline)...]))
        return PriceQuery(item: String(text[..<newline]), replyTo: replyTo)
    }
}

func priceCodecs() -> ClusterCodecs {
    var codecs = ClusterCodecs()
    codecs.register(PriceQuery.self, manifest: "shop.PriceQuery", codec: PriceQueryCodec())
    return codecs
}
// doc ends

// doc begins: watch
/// Watches every greeter listed on any node, and tells `log` when one terminates.
func greeterWatcher(log: ActorRef<String>) -> Behavior<Receptionist.Listing<Greet>> {
    Behavior<Receptionist.Listing<Greet>>.receive { context, listing in
        for greeter in listing.refs { context.watch(greeter) }  // watching again changes nothing
        return .same
    }.receiveLifecycle { _, event in
        if case let .terminated(greeter) = event {
            log.tell("\(greeter.path) on \(greeter.address.node?.name ?? "this node") terminated")
        }
        return .same
    }
}
// doc ends

// doc begins: router
/// A round-robin router on this node over the greeters of every node.
func greeterRouter(on node: ClusterSystem) throws -> ActorRef<Greet> {
    _ = node.receptionist.listing(for: greeters)  // remote greeters reach system.receptionist
    return try node.system.spawn(Routers.group(greeters), name: "greeter-router")
}
// doc ends

// doc begins: distributed
distributed actor Account {
    typealias ActorSystem = ClusterSystem
    private var balance = 0

    distributed func deposit(_ amount: Int) -> Int {
        balance += amount
        return balance
    }
}

/// Deposits into the account `id` names, wherever it lives; nil when its node is gone.
func deposit(_ amount: Int, into id: ActorAddress, using cluster: ClusterSystem) async throws -> Int? {
    let account = try Account.resolve(id: id, using: cluster)  // a proxy if it lives elsewhere
    do {
        return try await account.deposit(amount)  // a NATS request to the account's node
    } catch let error as DistributedCallError where error.code == .nodeUnreachable {
        return nil  // at once, not after callTimeout
    }
}
// doc ends

// MARK: - Helpers

/// The test server's configuration for `name` in cluster `cluster`, with a quick failure
/// detector (as `TestNode`'s).
func docConfiguration(_ name: String, cluster: String, nats: NATSConfiguration = NATSConfiguration(url: NATSEnvironment.url ?? "")) -> ClusterConfiguration {
    var configuration = ClusterConfiguration(nodeName: name, nats: nats)
    configuration.clusterName = cluster
    configuration.nats.reconnectWait = .milliseconds(100)
    // A handshake on a loaded machine can miss the server's 2 s authentication time-out (seen
    // in CI with every suite running at once): try again rather than fail the test.
    configuration.nats.retryOnFailedConnect = true
    configuration.heartbeatInterval = .milliseconds(100)
    configuration.probeAfter = .milliseconds(250)
    configuration.goneAfter = .milliseconds(200)
    configuration.settle = .zero
    configuration.downAfter = .seconds(2)
    return configuration
}

func stopNodes(_ nodes: [ClusterSystem]) async {
    for node in nodes {
        await node.leave()
        _ = await node.system.shutdown()
    }
}

/// Waits until `node` sees each of `others` with `status`.
func waitUntil(_ node: ClusterSystem, sees others: [ClusterNode], as status: MemberStatus = .up) async -> Bool {
    let wanted = Set(others)
    return await waitFor(node.members) { members in
        wanted.isSubset(of: Set(members.filter { $0.status == status }.map(\.node)))
    }
}

/// Waits until each of `nodes` sees all the others up. (`join` returns before the server has
/// surely taken the node's subscriptions: a message sent to it at once could find nobody.)
func allSeeEachOther(_ nodes: [ClusterSystem]) async -> Bool {
    for node in nodes {
        guard await waitUntil(node, sees: nodes.map(\.node).filter { $0 != node.node }) else { return false }
    }
    return true
}

/// Three nats-servers of a test's own, routed to each other (the guide's configuration, on
/// loopback ports).
final class ThreeServers: @unchecked Sendable {
    // Safe: touched only by the test that owns it, one call at a time.
    let ports: [UInt16]
    let routePorts: [UInt16]
    let directory: URL
    private var processes: [Process?] = [nil, nil, nil]

    var urls: [String] { ports.map { "nats://127.0.0.1:\($0)" } }

    init() throws {
        ports = try (0..<3).map { _ in try LoopbackServer.freePort() }
        routePorts = try (0..<3).map { _ in try LoopbackServer.freePort() }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mailbox-cluster-doc-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let routes = routePorts.map { "    nats-route://127.0.0.1:\($0)" }.joined(separator: "\n")
        for index in 0..<3 {
            let config = """
                server_name: nats-\(index + 1)
                listen: 127.0.0.1:\(ports[index])
                cluster {
                  name: doc
                  listen: 127.0.0.1:\(routePorts[index])
                  routes: [
                \(routes)
                  ]
                }

                """
            try config.write(to: directory.appendingPathComponent("nats-\(index + 1).conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: NATSEnvironment.serverBinary ?? "/usr/sbin/nats-server")
            process.arguments = ["-c", directory.appendingPathComponent("nats-\(index + 1).conf").path]
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            processes[index] = process
        }
    }

    /// Waits until every server takes clients.
    func waitUntilReady() async throws {
        for url in urls {
            var configuration = NATSConfiguration(url: url)
            configuration.retryOnFailedConnect = true
            configuration.reconnectWait = .milliseconds(50)
            configuration.connectTimeout = .seconds(30)
            let connection = try await NATSConnection.connect(configuration)
            connection.close()
        }
    }

    /// Kills server `index` (SIGKILL: a crash, as far as clients and routes can tell).
    func crash(_ index: Int) {
        guard let process = processes[index] else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        processes[index] = nil
    }

    deinit {
        for index in 0..<3 { crash(index) }
        try? FileManager.default.removeItem(at: directory)
    }
}

// MARK: - Tests

@Suite("Cluster: docs/Cluster.md examples on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterDocTests {
    @Test("two nodes in code: the listing spans both, tells and asks cross, refs travel in messages")
    func twoNodes() async throws {
        // The guide's configuration, in a cluster of this test's own.
        let cluster = uniqueCluster()
        var configurations = [demoNode("a", nats: NATSEnvironment.url!), demoNode("b", nats: NATSEnvironment.url!)]
        #expect(configurations.allSatisfy { $0.clusterName == "demo" })
        for index in configurations.indices { configurations[index].clusterName = cluster }
        let a = try await startNode(configurations[0])
        let b = try await startNode(configurations[1])
        #expect(try await greetEveryone(from: a, count: 2) == ["Hello, Ada, from a!", "Hello, Ada, from b!"])
        #expect(try await greetEveryone(from: b, count: 2) == ["Hello, Ada, from a!", "Hello, Ada, from b!"])
        let answers = Collector<String>()
        let inbox = try a.system.spawn(Behavior<String>.receiveMessage { answers.append($0); return .same }, name: "inbox")
        greetAll(from: a, answersTo: inbox)
        #expect(await answers.wait(forCount: 2))
        #expect(Set(answers.all) == ["Hello, Grace, from a!", "Hello, Grace, from b!"])
        #expect(await waitUntil(a, sees: [b.node]))
        #expect(a.members.value.map(\.node) == [a.node, b.node])
        await stopNodes([a, b])
    }

    @Test("a group router over a cluster key routes to the greeters of both nodes")
    func groupRouter() async throws {
        let cluster = uniqueCluster()
        let a = try await startNode(docConfiguration("a", cluster: cluster))
        let b = try await startNode(docConfiguration("b", cluster: cluster))
        let router = try greeterRouter(on: a)
        #expect(await waitFor(a.receptionist.listing(for: greeters)) { $0.count == 2 })
        let answers = Collector<String>()
        let inbox = try a.system.spawn(Behavior<String>.receiveMessage { answers.append($0); return .same }, name: "inbox")
        // The router (an actor) follows the listing on its own: greet until both have answered.
        var told = 0
        while Set(answers.all).count < 2, told < 100 {
            router.tell(.hello("Alan", replyTo: inbox))
            told += 1
            #expect(await answers.wait(forCount: told))
        }
        #expect(Set(answers.all) == ["Hello, Alan, from a!", "Hello, Alan, from b!"])
        await stopNodes([a, b])
    }

    @Test("a queue-group router: one job to one worker on one node")
    func queueGroupExample() async throws {
        let name = uniqueCluster()
        let workerNode = try await ClusterSystem.join(ActorSystem(name: "w"), docConfiguration("w", cluster: name))
        let senderNode = try await ClusterSystem.join(ActorSystem(name: "s"), docConfiguration("s", cluster: name))
        let done = Collector<String>()
        let worker = worker("worker", done)
        do {
            let cluster = workerNode, system = workerNode.system
            // doc begins: queue-group
            let jobs = ServiceKey<Job>("jobs")
            // on every worker node:
            cluster.receptionist.register(try system.spawn(worker, name: "worker"), with: jobs)
            // doc ends
        }
        #expect(await waitFor(senderNode.receptionist.listing(for: ServiceKey<Job>("jobs"))) { $0.count == 1 })
        try await workerNode.connection.flush(timeout: .seconds(10))
        do {
            let cluster = senderNode, jobs = ServiceKey<Job>("jobs")
            // doc begins: queue-group-send
            // on any node:
            let anyWorker = cluster.receptionist.queueGroup(jobs)
            anyWorker.tell(Job(number: 1))  // to one worker, on one node
            // doc ends
        }
        #expect(await done.wait(forCount: 1))
        #expect(done.all == ["worker:1"])
        await stopNodes([senderNode, workerNode])
    }

    @Test("claims: a nick is claimed, owned, released; lost is observed")
    func claimsExample() async throws {
        let name = uniqueCluster()
        let cluster = try await ClusterSystem.join(ActorSystem(name: "c"), docConfiguration("c", cluster: name))
        let other = try await ClusterSystem.join(ActorSystem(name: "d"), docConfiguration("d", cluster: name))
        _ = try await other.claims("nicks").claim("bob")
        var owners: [ClusterNode?] = []
        for key in ["alice", "bob"] {
            // doc begins: claims
            let nicks = try await cluster.claims("nicks")
            if try await nicks.claim(key) {
                // this node owns key until it releases it, leaves, or is downed
                owners.append(cluster.node)
            } else {
                let owner = try await nicks.owner(of: key)  // the live node that has it
                owners.append(owner)
            }
            try await nicks.release(key)
            nicks.lost.observeValues { key in /* another node took a key this node owned: stop using it */ _ = key }
            // doc ends
        }
        #expect(owners == [cluster.node, other.node])
        #expect(try await other.claims("nicks").claim("alice"))
        await stopNodes([cluster, other])
    }

    @Test("remote death watch: the watcher hears that the other node's greeter terminated when its node leaves")
    func watch() async throws {
        let cluster = uniqueCluster()
        let a = try await startNode(docConfiguration("a", cluster: cluster))
        let b = try await startNode(docConfiguration("b", cluster: cluster))
        #expect(await waitFor(a.receptionist.listing(for: greeters)) { $0.count == 2 })
        let log = Collector<String>()
        let logger = try a.system.spawn(Behavior<String>.receiveMessage { log.append($0); return .same }, name: "log")
        a.receptionist.subscribe(greeters, try a.system.spawn(greeterWatcher(log: logger), name: "watcher"))
        // Whether the watcher watches before or after b leaves, it hears of the end once.
        await b.leave()
        #expect(await log.wait(forCount: 1))
        #expect(log.all == ["/user/greeter on b terminated"])
        #expect(await waitFor(a.receptionist.listing(for: greeters)) { $0.count == 1 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(log.count == 1)
        _ = await b.system.shutdown()
        await stopNodes([a])
    }

    @Test("a distributed actor is called from another node; a gone node fails the call at once")
    func distributedAccount() async throws {
        let cluster = uniqueCluster()
        let a = try await ClusterSystem.join(ActorSystem(name: "a"), docConfiguration("a", cluster: cluster))
        let b = try await ClusterSystem.join(ActorSystem(name: "b"), docConfiguration("b", cluster: cluster))
        #expect(await allSeeEachOther([a, b]))
        let account = Account(actorSystem: a)
        // The ID travels as a value (here through JSON, as inside a message).
        let id = try JSONDecoder().decode(ActorAddress.self, from: JSONEncoder().encode(account.id))
        #expect(id.node == a.node)
        #expect(try await deposit(10, into: id, using: b) == 10)
        #expect(try await deposit(20, into: id, using: b) == 30)
        #expect(try await deposit(1, into: id, using: a) == 31)  // local: the actor itself
        await a.leave()
        let started = ContinuousClock.now
        #expect(try await deposit(5, into: id, using: b) == nil)
        #expect(ContinuousClock.now - started < .seconds(5))
        withExtendedLifetime(account) {}
        _ = await a.system.shutdown()
        await stopNodes([b])
    }

    @Test("a downed incarnation joins again as a new one (here: a second process took its name)")
    func rejoin() async throws {
        let cluster = uniqueCluster()
        let a = try await ClusterSystem.join(ActorSystem(name: "a"), docConfiguration("a", cluster: cluster))
        let joined = Collector<ClusterSystem>()
        let seenByB = Collector<MemberEvent>()
        let system = ActorSystem(name: "b")
        let first = try await joinAndStay(system, docConfiguration("b", cluster: cluster)) { cluster in
            joined.append(cluster)
            cluster.memberEvents.observeValues { seenByB.append($0) }
        }
        #expect(await waitUntil(a, sees: [first.node]))
        // Another process under the same name: the cluster downs the older incarnation, which
        // is told so and joins again; that new incarnation in turn downs the impostor.
        let impostor = try await ClusterSystem.join(ActorSystem(name: "b"), docConfiguration("b", cluster: cluster))
        let seenByImpostor = Collector<MemberEvent>()
        impostor.memberEvents.observeValues { seenByImpostor.append($0) }
        #expect(await joined.wait(forCount: 2))
        let second = try #require(joined.all.last)
        #expect(second.node.name == "b")
        #expect(second.node != first.node && second.node != impostor.node)
        #expect(seenByB.all.contains { $0.member == Member(node: first.node, status: .down) })
        #expect(await waitFor(a.members) { members in
            members.contains(Member(node: second.node, status: .up)) && !members.contains { $0.node == first.node }
        })
        #expect(await seenByImpostor.wait { $0.contains { $0.member == Member(node: impostor.node, status: .down) } })
        await impostor.leave()
        _ = await impostor.system.shutdown()
        await stopNodes([second, a])
    }

    @Test("migration: releases 1 and 2, and 2 and 3, exchange orders both ways; 3 cannot reach 1")
    func migration() async throws {
        let cluster = uniqueCluster()
        var configurations = [docConfiguration("r1", cluster: cluster), docConfiguration("r2", cluster: cluster), docConfiguration("r3", cluster: cluster)]
        configurations[0].codecs = release1Codecs()
        configurations[1].codecs = release2Codecs()
        configurations[2].codecs = release3Codecs()
        var nodes: [ClusterSystem] = []
        for configuration in configurations {
            nodes.append(try await ClusterSystem.join(ActorSystem(name: "shop"), configuration))
        }
        #expect(await allSeeEachOther(nodes))
        let (r1, r2, r3) = (nodes[0], nodes[1], nodes[2])
        let atR1 = Collector<String>(), atR2 = Collector<String>(), atR3 = Collector<String>()
        let inbox1 = r1.address(of: try r1.system.spawn(Behavior<Order>.receiveMessage { atR1.append($0.item); return .same }, name: "orders"))
        let inbox2 = r2.address(of: try r2.system.spawn(Behavior<PlaceOrder>.receiveMessage { atR2.append("\($0.item) \($0.quantity ?? 0)"); return .same }, name: "orders"))
        let inbox3 = r3.address(of: try r3.system.spawn(Behavior<PlaceOrder>.receiveMessage { atR3.append("\($0.item) \($0.quantity ?? 0)"); return .same }, name: "orders"))
        let deadAtR1 = Collector<DeadLetter>()
        r1.system.deadLetters.observeValues { deadAtR1.append($0) }

        r1.resolve(inbox2, as: Order.self).tell(Order(item: "tea"))                    // 1 → 2
        r2.resolve(inbox1, as: PlaceOrder.self).tell(PlaceOrder(item: "jam", quantity: 2))  // 2 → 1
        r2.resolve(inbox3, as: PlaceOrder.self).tell(PlaceOrder(item: "oil", quantity: 3))  // 2 → 3
        r3.resolve(inbox2, as: PlaceOrder.self).tell(PlaceOrder(item: "rye", quantity: 4))  // 3 → 2
        r1.resolve(inbox3, as: Order.self).tell(Order(item: "fig"))                    // 1 → 3
        r3.resolve(inbox1, as: PlaceOrder.self).tell(PlaceOrder(item: "nut", quantity: 5))  // 3 → 1: not understood

        #expect(await atR2.wait(forCount: 2))
        #expect(Set(atR2.all) == ["tea 0", "rye 4"])
        #expect(await atR3.wait(forCount: 2))
        #expect(Set(atR3.all) == ["oil 3", "fig 0"])
        #expect(await atR1.wait(forCount: 1))
        #expect(atR1.all == ["jam"])
        #expect(await deadAtR1.wait(forCount: 1))
        let letter = try #require(deadAtR1.all.first)
        #expect(letter.reason == .notUnderstood)
        let why = (letter.message as? UndeliveredRemoteMessage)?.why ?? ""
        #expect(why == "manifest 'shop.PlaceOrder' is not the recipient's type 'shop.Order'", "\(letter)")
        #expect(r1.statistics.notUnderstood == 1)
        await stopNodes(nodes)
    }

    @Test("a binary codec with a ref inside: an ask across nodes")
    func binaryCodec() async throws {
        let cluster = uniqueCluster()
        var configurations = [docConfiguration("a", cluster: cluster), docConfiguration("b", cluster: cluster)]
        for index in configurations.indices { configurations[index].codecs = priceCodecs() }
        let a = try await ClusterSystem.join(ActorSystem(name: "shop"), configurations[0])
        let b = try await ClusterSystem.join(ActorSystem(name: "shop"), configurations[1])
        #expect(await allSeeEachOther([a, b]))
        let prices = try b.system.spawn(Behavior<PriceQuery>.receiveMessage { query in
            query.replyTo.tell(query.item.count * 100)
            return .same
        }, name: "prices")
        let remote = a.resolve(b.address(of: prices), as: PriceQuery.self)
        #expect(try await remote.ask(timeout: .seconds(10)) { PriceQuery(item: "tea\nfor two", replyTo: $0) } == 1_100)
        await stopNodes([a, b])
    }

    @Test("a NATS server of three is killed: its clients move to another, nobody is downed, messages flow")
    func threeServers() async throws {
        let servers = try ThreeServers()
        try await servers.waitUntilReady()
        let cluster = uniqueCluster()
        var nodes: [ClusterSystem] = []
        for (index, name) in ["a", "b", "c"].enumerated() {
            // Node i starts on server i (the guide's configuration, servers in a fixed order).
            let rotated = Array(servers.urls[index...] + servers.urls[..<index])
            var configuration = shopNode(name, servers: rotated)
            configuration.clusterName = cluster
            configuration.nats.randomizeServers = false
            configuration.nats.retryOnFailedConnect = true
            nodes.append(try await startNode(configuration))
        }
        #expect(await allSeeEachOther(nodes))
        // A node downed or removed. (`unreachable` may come and go on a loaded machine: with
        // the default settings a heartbeat 300 ms late is probed. It costs nothing.)
        let downs = Collector<MemberEvent>()
        for node in nodes {
            node.memberEvents.observeValues { event in
                if event.member.status == .down || event.member.status == .removed { downs.append(event) }
            }
        }
        let reconnected = Collector<Bool>()
        nodes[0].connection.events.observeValues { if case .connected = $0 { reconnected.append(true) } }
        servers.crash(0)
        #expect(await reconnected.wait(forCount: 1))
        try await Task.sleep(for: .seconds(3))  // well past the no-responders path (probeAfter + goneAfter)
        #expect(downs.all.isEmpty, "\(downs.all)")
        #expect(try await greetEveryone(from: nodes[1], count: 3) == ["Hello, Ada, from a!", "Hello, Ada, from b!", "Hello, Ada, from c!"])
        #expect(try await greetEveryone(from: nodes[0], count: 3).count == 3)
        await stopNodes(nodes)
    }
}

/// Told to an actor that sends `count` numbers to `to`, then stops.
private enum Burst: Codable, Sendable {
    case send(count: Int, to: ActorRef<Int>)
}

/// The guide's claims about limits, shown so that a change of behavior is noticed.
@Suite("Cluster: docs/Cluster.md guarantees and limits on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterDocClaimTests {
    @Test("an ask waiting for a node that is downed fails then, not at its time-out")
    func askFailsWhenItsNodeIsDowned() async throws {
        let cluster = uniqueCluster()
        let a = try await ClusterSystem.join(ActorSystem(name: "a"), docConfiguration("a", cluster: cluster))
        let b = try await ClusterSystem.join(ActorSystem(name: "b"), docConfiguration("b", cluster: cluster))
        let mute = try b.system.spawn(Behavior<Greet>.ignore, name: "mute")  // never answers
        let remote = a.resolve(b.address(of: mute), as: Greet.self)
        #expect(await allSeeEachOther([a, b]))
        let started = ContinuousClock.now
        let ask = Task { try await remote.ask(timeout: .seconds(60)) { Greet.hello("x", replyTo: $0) } }
        try await Task.sleep(for: .milliseconds(300))  // the question has arrived
        b.connection.close()  // a crash, as NATS sees it
        do {
            _ = try await ask.value
            Issue.record("answered")
        } catch let error as AskError {
            #expect(error.code == .notDelivered)
        }
        #expect(ContinuousClock.now - started < .seconds(20))
        _ = await b.system.shutdown()
        await stopNodes([a])
    }

    @Test("an ask to a remote actor that has stopped, on a live node, fails at once (as a local ask does)")
    func askToAStoppedActorFailsAtOnce() async throws {
        let cluster = uniqueCluster()
        let a = try await ClusterSystem.join(ActorSystem(name: "a"), docConfiguration("a", cluster: cluster))
        let b = try await ClusterSystem.join(ActorSystem(name: "b"), docConfiguration("b", cluster: cluster))
        let once = try b.system.spawn(Behavior<Greet>.receiveMessage { message in
            if case let .hello(who, replyTo) = message { replyTo.tell("bye, \(who)") }
            return .stopped
        }, name: "once")
        #expect(await allSeeEachOther([a, b]))
        let remote = a.resolve(b.address(of: once), as: Greet.self)
        #expect(try await remote.ask(timeout: .seconds(10)) { .hello("Ada", replyTo: $0) } == "bye, Ada")
        let dead = Collector<DeadLetter>()
        b.system.deadLetters.observeValues { dead.append($0) }
        let started = ContinuousClock.now
        do {
            _ = try await remote.ask(timeout: .seconds(30)) { .hello("Grace", replyTo: $0) }
            Issue.record("answered")
        } catch let error as AskError {
            #expect(error.code == .notDelivered)
            #expect(error.deliveryFailure == .recipientTerminated)
        }
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(await dead.wait(forCount: 1))  // the question is a dead letter on b
        await stopNodes([a, b])
    }

    @Test("a remote terminated is handled after every message the actor sent before it, even those still queued in the watcher")
    func terminatedAfterQueuedMessages() async throws {
        let cluster = uniqueCluster()
        let a = try await ClusterSystem.join(ActorSystem(name: "a"), docConfiguration("a", cluster: cluster))
        let b = try await ClusterSystem.join(ActorSystem(name: "b"), docConfiguration("b", cluster: cluster))
        // On b: sends `count` numbers, then stops.
        let source = try b.system.spawn(Behavior<Burst>.receiveMessage { message in
            if case let .send(count, target) = message {
                for number in 0..<count { target.tell(number) }
            }
            return .stopped
        }, name: "source")
        #expect(await allSeeEachOther([a, b]))
        let remoteSource = a.resolve(b.address(of: source), as: Burst.self)
        // On a: watches the source; slow on the first number, so the rest queue up.
        let log = Collector<String>()
        let sink = try a.system.spawn(Behavior<Int>.setup { context in
            context.watch(remoteSource)
            log.append("watching")
            return Behavior<Int>.receiveMessage { number in
                if number == 0 { Thread.sleep(forTimeInterval: 0.5) }
                log.append("\(number)")
                return .same
            }.receiveLifecycle { _, event in
                if case .terminated = event { log.append("terminated") }
                return .same
            }
        }, name: "sink")
        #expect(await log.wait(forCount: 1))
        remoteSource.tell(.send(count: 50, to: sink))
        #expect(await log.wait(forCount: 52))
        let lines = log.all
        #expect(lines.filter { $0 == "terminated" }.count == 1)
        #expect(Set(lines.filter { $0 != "terminated" && $0 != "watching" }) == Set((0..<50).map(String.init)))
        // Every number was handled before the termination (Erlang's order), though most of
        // them still waited in the mailbox when the termination arrived.
        #expect(lines.last == "terminated", "\(lines)")
        #expect(lines.dropFirst().dropLast() == ArraySlice((0..<50).map(String.init)))
        #expect(a.statistics.lostFrames == 0)
        await stopNodes([a, b])
    }
}

/// The configurations of the guide, checked without a server.
@Suite("Cluster: docs/Cluster.md configurations")
struct ClusterDocConfigurationTests {
    @Test func shop() {
        let configuration = shopNode("a", servers: ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222", "nats://10.0.0.3:4222"])
        #expect(configuration.nodeName == "a")
        #expect(configuration.clusterName == "shop")
        #expect(configuration.nats.servers.count == 3)
        #expect(configuration.nats.maxReconnectAttempts == -1)
    }

    @Test func patient() {
        let configuration = patientNode("a", nats: NATSConfiguration(url: "nats://127.0.0.1:4222"))
        #expect(configuration.probeAfter == .milliseconds(1_500))
        #expect(configuration.downAfter == .seconds(20))
    }

    @Test("the defaults the guide lists")
    func defaults() {
        let configuration = ClusterConfiguration(nodeName: "a")
        #expect(configuration.clusterName == "mailbox")
        #expect(configuration.nats.servers == ["nats://127.0.0.1:4222"])
        #expect(configuration.heartbeatInterval == .milliseconds(200))
        #expect(configuration.probeAfter == .milliseconds(300))
        #expect(configuration.probeTimeout == .milliseconds(500))
        #expect(configuration.goneAfter == .milliseconds(400))
        #expect(configuration.settle == .seconds(3))
        #expect(configuration.downAfter == .seconds(5))
        #expect(configuration.callTimeout == .seconds(10))
        #expect(configuration.outboundWindow == 65_536)
        #expect(configuration.ackEvery == 1_024)
    }
}
