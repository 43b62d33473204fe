import ClusterSimulation
import Mailbox
import MailboxCluster
import MailboxNATS
import MailboxTestKit
import Testing

/// Collects what a handler saw (the simulation runs on one thread; the box keeps it Sendable).
final class Seen: Sendable {
    let values = LockedValueBox<[String]>([])
    func append(_ value: String) { values.withLockedValue { $0.append(value) } }
    var all: [String] { values.withLockedValue { $0 } }
}

@Suite("Simulated network: the NATS semantics the cluster relies on, on virtual time")
struct SimulatedNetworkTests {
    let scheduler = TestScheduler()

    func network(_ plan: FaultPlan = FaultPlan()) -> SimulatedNetwork {
        SimulatedNetwork(scheduler: scheduler, plan: plan, latency: .milliseconds(1))
    }

    @Test("subjects with * and > wildcards; nothing arrives before the latency; invalid subjects are refused")
    func wildcards() throws {
        let network = network()
        let a = network.connect(name: "a"), b = network.connect(name: "b")
        let seen = Seen()
        _ = try b.clusterSubscribe(to: "x.*.z", queue: nil) { seen.append("star \($0.subject)") }
        _ = try b.clusterSubscribe(to: "x.>", queue: nil) { seen.append("full \($0.subject)") }
        for subject in ["x.y.z", "x.y.w", "x.y.z.w", "y.x"] { try a.publish([], to: subject, replyTo: nil, headers: nil) }
        #expect(seen.all.isEmpty)
        scheduler.advance(by: .milliseconds(2))
        // Each subscription in publish order; between subscriptions the seeded jitter decides.
        #expect(seen.all.sorted() == ["full x.y.w", "full x.y.z", "full x.y.z.w", "star x.y.z"])
        #expect(seen.all.filter { $0.hasPrefix("full") } == ["full x.y.z", "full x.y.w", "full x.y.z.w"])
        #expect(throws: NATSError.self) { try a.publish([], to: "x.*", replyTo: nil, headers: nil) }
        #expect(throws: NATSError.self) { try a.publish([], to: "x..y", replyTo: nil, headers: nil) }
        #expect(throws: NATSError.self) { _ = try b.clusterSubscribe(to: "x.>.y", queue: nil) { _ in } }
    }

    @Test("requests: a reply, no responders at once, a time-out on the virtual clock; a publication to nobody gets a 503 on its reply subject")
    func requests() throws {
        let network = network()
        let a = network.connect(name: "a"), b = network.connect(name: "b")
        _ = try b.clusterSubscribe(to: "echo", queue: nil) { message in try? b.respond(to: message, with: message.payload, headers: nil) }
        _ = try b.clusterSubscribe(to: "silent", queue: nil) { _ in }
        let outcomes = LockedValueBox<[String]>([])
        for subject in ["echo", "nobody", "silent"] {
            a.request(Array(subject.utf8), to: subject, timeout: .milliseconds(100)) { result in
                let text: String
                switch result {
                case let .success(message): text = "\(subject): \(message.string)"
                case let .failure(error): text = "\(subject): \(error.code)"
                }
                outcomes.withLockedValue { $0.append(text) }
            }
        }
        scheduler.advance(by: .milliseconds(5))
        #expect(outcomes.withLockedValue { $0 }.sorted() == ["echo: echo", "nobody: \(NATSError.Code.noResponders)"])
        scheduler.advance(by: .milliseconds(100))
        #expect(outcomes.withLockedValue { $0 }.last == "silent: \(NATSError.Code.timedOut)")
        let seen = Seen()
        _ = try a.clusterSubscribe(to: "nr.*", queue: nil) { seen.append("\($0.subject) \($0.status ?? 0)") }
        try a.publish([], to: "nobody", replyTo: "nr.1", headers: nil)
        scheduler.advance(by: .milliseconds(2))
        #expect(seen.all == ["nr.1 503"])
    }

    @Test("a handler that publishes and subscribes from inside a delivery (re-entrance) is served")
    func reentrance() throws {
        let network = network()
        let a = network.connect(name: "a")
        let seen = Seen()
        _ = try a.clusterSubscribe(to: "first", queue: nil) { _ in
            seen.append("first")
            _ = try? a.clusterSubscribe(to: "third", queue: nil) { _ in seen.append("third") }
            try? a.publish([], to: "second", replyTo: nil, headers: nil)
            try? a.publish([], to: "third", replyTo: nil, headers: nil)
        }
        _ = try a.clusterSubscribe(to: "second", queue: nil) { _ in seen.append("second") }
        try a.publish([], to: "first", replyTo: nil, headers: nil)
        scheduler.advance(by: .milliseconds(10))
        #expect(seen.all == ["first", "second", "third"])
    }

    @Test("a disconnected link buffers and sends on reconnecting; a killed one is closed and refuses; partitions cut and heal")
    func linkStatesAndPartitions() throws {
        let network = network()
        let a = network.connect(name: "a"), b = network.connect(name: "b")
        let states = LockedValueBox<[NATSConnectionState]>([])
        a.state.producer.startWithValues { state in states.withLockedValue { $0.append(state) } }
        let seen = Seen()
        _ = try b.clusterSubscribe(to: "s", queue: nil) { seen.append($0.string) }
        network.disconnect("a", for: .milliseconds(50))
        try a.publish(Array("buffered".utf8), to: "s", replyTo: nil, headers: nil)
        scheduler.advance(by: .milliseconds(10))
        #expect(seen.all.isEmpty)
        scheduler.advance(by: .milliseconds(50))
        #expect(seen.all == ["buffered"])
        #expect(states.withLockedValue { $0 } == [.connected, .reconnecting, .connected])
        network.partition([["a"]], for: .milliseconds(20))
        try a.publish(Array("cut".utf8), to: "s", replyTo: nil, headers: nil)
        scheduler.advance(by: .milliseconds(25))
        try a.publish(Array("healed".utf8), to: "s", replyTo: nil, headers: nil)
        scheduler.advance(by: .milliseconds(5))
        #expect(seen.all == ["buffered", "healed"])
        #expect(network.statistics.partitioned == 1)
        network.kill("a")
        #expect(states.withLockedValue { $0 }.last == .closed)
        #expect(throws: NATSError.self) { try a.publish([], to: "s", replyTo: nil, headers: nil) }
        #expect(network.killed == ["a"])
    }

    @Test("a queue group gets each message once, members chosen by the seed")
    func queueGroups() throws {
        let network = network()
        let a = network.connect(name: "a"), b = network.connect(name: "b"), c = network.connect(name: "c")
        let seen = Seen()
        _ = try b.clusterSubscribe(to: "q", queue: "g") { _ in seen.append("b") }
        _ = try c.clusterSubscribe(to: "q", queue: "g") { _ in seen.append("c") }
        for _ in 0..<40 { try a.publish([], to: "q", replyTo: nil, headers: nil) }
        scheduler.advance(by: .milliseconds(5))
        #expect(seen.all.count == 40)
        #expect(Set(seen.all) == ["b", "c"])
    }

    @Test("faults from the plan: drops, duplicates and reorders happen at the rates asked, and FIFO holds without reorders")
    func faults() throws {
        let plan = FaultPlan(seed: 9)
            .failing(SimulatedNetwork.FaultPoint.drop, .withProbability(0.1))
            .failing(SimulatedNetwork.FaultPoint.duplicate, .withProbability(0.1))
            .delaying(SimulatedNetwork.FaultPoint.delay, by: .milliseconds(3), .withProbability(0.1))
        let network = network(plan)
        let a = network.connect(name: "a"), b = network.connect(name: "b")
        let seen = LockedValueBox<[Int]>([])
        _ = try b.clusterSubscribe(to: "s", queue: nil) { message in seen.withLockedValue { $0.append(Int(message.payload[0]) | Int(message.payload[1]) << 8) } }
        for number in 0..<1_000 {
            try a.publish([UInt8(number & 0xFF), UInt8(number >> 8)], to: "s", replyTo: nil, headers: nil)
            scheduler.advance(by: .microseconds(100))
        }
        scheduler.advance(by: .milliseconds(10))
        let numbers = seen.withLockedValue { $0 }
        let statistics = network.statistics
        #expect((50...150).contains(statistics.dropped), "\(statistics)")
        #expect((50...150).contains(statistics.duplicated), "\(statistics)")
        #expect(numbers.count == 1_000 - statistics.dropped + statistics.duplicated)
        // Delays keep the order (a slow link): never a smaller number after a larger one.
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 <= $1 })
    }
}
