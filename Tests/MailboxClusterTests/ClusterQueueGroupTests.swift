import Foundation
import Mailbox
@testable import MailboxCluster
import MailboxNATS
import NATSTestSupport
import Testing

/// A job for the queue-group tests: `reply` gets the worker's name when present.
struct Job: Codable, Sendable {
    var number: Int
    var reply: ActorRef<String>?
}

/// A worker that records `name:number` for every job and answers its name when asked.
func worker(_ name: String, _ log: Collector<String>) -> Behavior<Job> {
    .receiveMessage { job in
        log.append("\(name):\(job.number)")
        job.reply?.tell(name)
        return .same
    }
}

@Suite("Cluster queue-group router: each message to one actor, nodes chosen by NATS", .enabled(if: NATSEnvironment.hasServer, NATSEnvironment.skipReason))
struct ClusterQueueGroupTests {
    @Test("every message reaches exactly one worker; both serving nodes get work; a node's workers take turns")
    func balancesAcrossNodes() async throws {
        let nodes = try await startCluster(3)
        let key = ServiceKey<Job>("jobs")
        let log = Collector<String>()
        nodes[1].cluster.receptionist.register(try nodes[1].system.spawn(worker("b1", log), name: "b1"), with: key)
        nodes[2].cluster.receptionist.register(try nodes[2].system.spawn(worker("c1", log), name: "c1"), with: key)
        nodes[2].cluster.receptionist.register(try nodes[2].system.spawn(worker("c2", log), name: "c2"), with: key)
        // The sender only needs to know that someone serves the key.
        #expect(await waitFor(nodes[0].cluster.receptionist.listing(for: key)) { $0.count == 3 })
        try await nodes[1].cluster.connection.flush(timeout: .seconds(10))
        try await nodes[2].cluster.connection.flush(timeout: .seconds(10))
        let router = nodes[0].cluster.receptionist.queueGroup(key)
        let total = 600
        for number in 0..<total { #expect(router.tell(Job(number: number)) == .enqueued) }
        #expect(await log.wait(forCount: total))
        let seen = log.all
        #expect(seen.count == total)
        #expect(Set(seen.map { Int($0.split(separator: ":")[1])! }) == Set(0..<total), "every job exactly once")
        let byWorker = Dictionary(grouping: seen) { String($0.split(separator: ":")[0]) }.mapValues(\.count)
        // NATS picks a node at random per message: 600 messages all to one node is 2^-599.
        #expect((byWorker["b1"] ?? 0) > 0)
        let onC = (byWorker["c1"] ?? 0) + (byWorker["c2"] ?? 0)
        #expect(onC > 0)
        #expect(abs((byWorker["c1"] ?? 0) - (byWorker["c2"] ?? 0)) <= 1, "\(byWorker)")
        for node in nodes { await node.stop() }
    }

    @Test("an ask through the router is answered by the worker that took it")
    func askThroughRouter() async throws {
        let nodes = try await startCluster(2)
        let key = ServiceKey<Job>("askers")
        let log = Collector<String>()
        nodes[1].cluster.receptionist.register(try nodes[1].system.spawn(worker("w", log), name: "w"), with: key)
        #expect(await waitFor(nodes[0].cluster.receptionist.listing(for: key)) { $0.count == 1 })
        try await nodes[1].cluster.connection.flush(timeout: .seconds(10))
        let router = nodes[0].cluster.receptionist.queueGroup(key)
        let name = try await router.ask(timeout: .seconds(10)) { Job(number: 1, reply: $0) }
        #expect(name == "w")
        for node in nodes { await node.stop() }
    }

    @Test("with nobody serving the key a tell is a dead letter and an ask fails at once")
    func nobodyServing() async throws {
        let nodes = try await startCluster(2)
        let key = ServiceKey<Job>("idle")
        let dead = Collector<DeadLetter>()
        nodes[0].system.deadLetters.observeValues { dead.append($0) }
        let router = nodes[0].cluster.receptionist.queueGroup(key)
        #expect(router.tell(Job(number: 1)) == .dropped(.recipientTerminated))
        #expect(await dead.wait(until: { $0.contains { $0.recipient.path == "/cluster/queue/idle" && $0.reason == .recipientTerminated } }))
        let started = ContinuousClock.now
        await #expect(throws: (any Error).self) { try await router.ask(timeout: .seconds(20)) { Job(number: 2, reply: $0) } }
        #expect(ContinuousClock.now - started < .seconds(10), "failed by time-out instead of at once")
        for node in nodes { await node.stop() }
    }

    @Test("a node that stops serving the key leaves the group: later messages go to the others")
    func leavesTheGroup() async throws {
        let nodes = try await startCluster(3)
        let key = ServiceKey<Job>("shifting")
        let log = Collector<String>()
        let leaving = try nodes[1].system.spawn(worker("b", log), name: "b")
        nodes[1].cluster.receptionist.register(leaving, with: key)
        nodes[2].cluster.receptionist.register(try nodes[2].system.spawn(worker("c", log), name: "c"), with: key)
        #expect(await waitFor(nodes[0].cluster.receptionist.listing(for: key)) { $0.count == 2 })
        nodes[1].cluster.receptionist.deregister(leaving, from: key)
        // Once b's node has flushed, the server has its unsubscription.
        try await nodes[1].cluster.connection.flush(timeout: .seconds(10))
        try await nodes[2].cluster.connection.flush(timeout: .seconds(10))
        let router = nodes[0].cluster.receptionist.queueGroup(key)
        for number in 0..<100 { #expect(router.tell(Job(number: number)) == .enqueued) }
        #expect(await log.wait(forCount: 100))
        #expect(log.all.allSatisfy { $0.hasPrefix("c:") }, "\(log.all.filter { !$0.hasPrefix("c:") })")
        for node in nodes { await node.stop() }
    }
}
