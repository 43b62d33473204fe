import Mailbox
import MailboxNATS
import NATSTestSupport
import Testing

// The examples of docs/NATS.md, verbatim between "doc" comments, run as tests against the real
// server. Keep them in sync.

// doc begins: basics
func greet(url: String) async throws -> String {
    let nats = try await NATSConnection.connect(to: url)
    defer { nats.close() }

    // A service: answers every request on "greet".
    try nats.subscribe(to: "greet", queue: "greeters") { request in
        try? nats.respond(to: request, with: Array("hello, \(request.string)".utf8))
    }
    try await nats.flush()  // the server has the subscription

    // A client: asks and waits for the reply (noResponders at once if nobody listens).
    let reply = try await nats.request("world", to: "greet", timeout: .seconds(2))
    return reply.string  // "hello, world"
}
// doc ends

// doc begins: actor
enum Inventory: Sendable {
    case order(String)
}

func feedInventory(from nats: NATSConnection, system: ActorSystem) throws -> ActorRef<Inventory> {
    // A bounded mailbox: a slow actor drops (and the connection counts) what it cannot take.
    let inventory = try system.spawn(
        Behavior<Inventory>.receiveMessage { _ in .same },
        name: "inventory",
        props: Props(mailbox: .bounded(capacity: 10_000, overflow: .dropNewest)))
    let orders = try nats.subscribe(to: "orders.>")
    orders.deliver(to: inventory) { .order($0.string) }
    // Or with the stream bridge, as for any Signal: inventory <~ orders.messages.map { .order($0.string) }
    return inventory
}
// doc ends

// doc begins: claim
/// Claims `resource` for `node` in a key/value bucket: exactly one claimant wins.
func claim(_ resource: String, for node: String, nats: NATSConnection) async throws -> Bool {
    var configuration = NATSKeyValueConfiguration(bucket: "claims")
    configuration.history = 5
    let claims = try await nats.createKeyValue(configuration)  // or finds it
    do {
        try await claims.create(resource, Array(node.utf8))
        return true
    } catch {
        guard error.code == .keyExists else { throw error }
        return false  // another node holds it
    }
}
// doc ends

@Suite("NATS docs/NATS.md examples", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct NATSDocTests {
    @Test func basics() async throws {
        #expect(try await greet(url: NATSEnvironment.url!) == "hello, world")
    }

    @Test func actor() async throws {
        let system = ActorSystem(name: "doc")
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let inventory = try feedInventory(from: nats, system: system)
        #expect(inventory.path.hasSuffix("inventory"))
        _ = await system.terminate()
    }

    @Test func claimHasOneWinner() async throws {
        let nats = try await connectToTestServer()
        defer { nats.close() }
        let resource = "room-\(UInt32.random(in: 0...UInt32.max))"
        async let first = claim(resource, for: "node-a", nats: nats)
        async let second = claim(resource, for: "node-b", nats: nats)
        let a = try await first
        let b = try await second
        let results = [a, b]
        #expect(results.filter { $0 }.count == 1)
    }
}
