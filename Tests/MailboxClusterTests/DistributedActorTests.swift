import Distributed
import Foundation
import Mailbox
import MailboxCluster
import NATSTestSupport
import Testing

distributed actor Greeter {
    typealias ActorSystem = ClusterSystem
    private var greeted: [String] = []

    distributed func greet(_ name: String) -> String {
        greeted.append(name)
        return "Hello, \(name)!"
    }

    distributed func count() -> Int { greeted.count }

    distributed func forget() { greeted = [] }

    distributed func fail(_ why: String) throws -> Int {
        throw GreeterError(why: why)
    }

    distributed func echo<T: Codable & Sendable>(_ value: T) -> T { value }

    /// A ref inside an argument resolves on this node: the greeting goes to that actor.
    distributed func greet(_ name: String, replyTo: ActorRef<String>) {
        replyTo.tell("Hello, \(name)!")
    }
}

struct GreeterError: Error, CustomStringConvertible {
    let why: String
    var description: String { "GreeterError: \(why)" }
}

@Suite("Cluster: distributed actors on a real nats-server", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct DistributedActorTests {
    @Test("a distributed actor on one node is called from another: values, void, generics, thrown errors")
    func calls() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let greeter = Greeter(actorSystem: a.cluster)
        #expect(greeter.id.node == a.node)
        // On its own node the ID resolves to the actor itself.
        let local = try Greeter.resolve(id: greeter.id, using: a.cluster)
        #expect(local === greeter)
        let remote = try Greeter.resolve(id: greeter.id, using: b.cluster)
        #expect(__isRemoteActor(remote))
        #expect(try await remote.greet("Ada") == "Hello, Ada!")
        #expect(try await remote.greet("Grace") == "Hello, Grace!")
        #expect(try await remote.count() == 2)
        try await remote.forget()
        #expect(try await greeter.count() == 0)
        #expect(try await remote.echo([1, 2, 3]) == [1, 2, 3])
        #expect(try await remote.echo("text") == "text")
        do {
            _ = try await remote.fail("on purpose")
            Issue.record("no error")
        } catch let error as DistributedCallError {
            #expect(error.code == .remoteError)
            #expect(error.text.contains("on purpose"))
        }
        // The ID travels as a value: JSON in, the same actor out.
        let id = try JSONDecoder().decode(ActorAddress.self, from: JSONEncoder().encode(greeter.id))
        #expect(id == greeter.id)
        #expect(try await Greeter.resolve(id: id, using: b.cluster).greet("Alan") == "Hello, Alan!")
        for node in nodes { await node.stop() }
    }

    @Test("an actor ref in an argument resolves on the callee's node")
    func refArgument() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        let greeter = Greeter(actorSystem: a.cluster)
        let replies = Collector<String>()
        let inbox = try b.system.spawn(recorder(replies), name: "inbox")
        try await Greeter.resolve(id: greeter.id, using: b.cluster).greet("Barbara", replyTo: inbox)
        #expect(await replies.wait(forCount: 1))
        #expect(replies.all == ["Hello, Barbara!"])
        for node in nodes { await node.stop() }
    }

    @Test("calls fail clearly: a deinitialized actor is not found, a gone node is unreachable at once")
    func failures() async throws {
        let nodes = try await startCluster(2)
        let (a, b) = (nodes[0], nodes[1])
        var greeter: Greeter? = Greeter(actorSystem: a.cluster)
        let id = greeter!.id
        let remote = try Greeter.resolve(id: id, using: b.cluster)
        #expect(try await remote.greet("x") == "Hello, x!")
        greeter = nil
        do {
            _ = try await remote.count()
            Issue.record("answered")
        } catch let error as DistributedCallError {
            #expect(error.code == .actorNotFound)
        }
        await a.stop()
        let started = ContinuousClock.now
        do {
            _ = try await remote.count()
            Issue.record("answered")
        } catch let error as DistributedCallError {
            #expect(error.code == .nodeUnreachable)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        await b.stop()
    }

    @Test("a distributed actor's end is seen by death watch on its own node and on another; a downed node ends its actors' watches")
    func deathWatch() async throws {
        let nodes = try await startCluster(3)
        let (a, b, c) = (nodes[0], nodes[1], nodes[2])
        let log = Collector<String>()
        var greeter: Greeter? = Greeter(actorSystem: a.cluster)
        let id = greeter!.id
        // On its own node: onTermination; on b: an actor that watches it.
        a.cluster.watchRef(of: greeter!).onTermination { _ in log.append("a saw it end") }
        let remote = b.cluster.watchRef(of: id)
        #expect(remote.address.node == a.node)
        _ = try b.system.spawn(Behavior<String>.setup { context in
            context.watch(remote)
            log.append("b watching")
            return Behavior<String>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                if case .terminated = event { log.append("b saw it end") }
                return .same
            }
        }, name: "watcher")
        #expect(await log.wait(until: { $0.contains("b watching") }))
        // The watch frame goes on b's link to a before this message: once a's actor answers,
        // a knows of the watch.
        let echo = try a.system.spawn(counter(), name: "echo")
        _ = try await b.cluster.resolve(a.cluster.address(of: echo), as: Counter.self).ask(timeout: .seconds(10)) { .get(replyTo: $0) }
        #expect(log.all == ["b watching"])
        greeter = nil  // deinitialized: its ID is resigned
        #expect(await log.wait(until: { Set($0) == ["b watching", "a saw it end", "b saw it end"] }))
        // Watching it now (or an ID nobody had) answers at once.
        let late = Collector<Bool>()
        b.cluster.watchRef(of: id).onTermination { _ in late.append(true) }
        a.cluster.watchRef(of: id).onTermination { _ in late.append(true) }
        #expect(await late.wait(forCount: 2))
        // An actor on a node that leaves: its watchers elsewhere hear of it.
        let onC = Greeter(actorSystem: c.cluster)
        let gone = Collector<String>()
        a.cluster.watchRef(of: onC.id).onTermination { failure in gone.append("\(failure.map { "\($0)" } ?? "nil")") }
        let echoC = try c.system.spawn(counter(), name: "echo")
        _ = try await a.cluster.resolve(c.cluster.address(of: echoC), as: Counter.self).ask(timeout: .seconds(10)) { .get(replyTo: $0) }
        await c.stop()
        #expect(await gone.wait(forCount: 1))
        #expect(gone.all.first?.contains("left") == true, "\(gone.all)")
        _ = onC
        for node in [a, b] { await node.stop() }
    }
}
