import ClusterSimulation
import Foundation
import Mailbox
import MailboxCluster
import MailboxNATS
import MailboxTestKit
import Testing

/// A numbered message from one node's sender to another node's inbox.
struct Numbered: Codable, Sendable, Hashable {
    var from: String
    var sequence: Int
}

/// A delivery seen by an inbox: where, from whom, which number.
struct Arrival: Hashable {
    var at: String
    var from: String
    var sequence: Int
}

/// How many seeds each property runs: `MAILBOX_SIM_SEEDS` multiplies them (`10` for a soak,
/// `0.1` under ThreadSanitizer); at least one.
enum SimulationBudget {
    static let factor = Double(ProcessInfo.processInfo.environment["MAILBOX_SIM_SEEDS"] ?? "") ?? 1

    static func seeds(_ count: Int) -> Range<UInt64> {
        0..<UInt64(max(1, (Double(count) * factor).rounded()))
    }
}

/// Five nodes named a…e.
let simulatedNames = ["a", "b", "c", "d", "e"]

@Suite("Cluster simulation: five nodes on an in-memory NATS with seeded faults, replayable with MAILBOX_SEED")
struct ClusterSimulationTests {
    /// Drops, duplicates, delays and reorders by the seed.
    static func lossyPlan(_ sim: Simulation, rate: Double) -> FaultPlan {
        sim.faultPlan()
            .failing(SimulatedNetwork.FaultPoint.drop, .withProbability(rate))
            .failing(SimulatedNetwork.FaultPoint.duplicate, .withProbability(rate))
            .delaying(SimulatedNetwork.FaultPoint.delay, by: .milliseconds(4), .withProbability(rate))
            .delaying(SimulatedNetwork.FaultPoint.reorder, by: .milliseconds(6), .withProbability(rate))
    }

    /// What one run of the delivery property saw.
    struct DeliveryRun: Equatable {
        var sent: Int
        var arrivals: [Arrival]
        var statistics: SimulatedNetwork.Statistics
        var faulty: Bool
    }

    /// Five nodes, an inbox on each; numbered tells between random pairs at random times, on a
    /// network that drops, duplicates, delays and reorders (three seeds in four; the fourth
    /// runs without faults). Checks at-most-once and FIFO per pair, and without faults that
    /// everything arrived.
    static func deliveryRun(_ sim: Simulation) async throws -> DeliveryRun {
        let faulty = sim.seed % 4 != 0
        let cluster = try SimulatedCluster(
            seed: sim.seed, scheduler: sim.scheduler, plan: faulty ? Self.lossyPlan(sim, rate: 0.08) : sim.faultPlan(), names: simulatedNames)
        let arrivals = LockedValueBox<[Arrival]>([])
        let addresses = try spawnInboxes(on: cluster, recordingInto: arrivals)
        var refs: [[ActorRef<Numbered>?]] = []
        for node in cluster.nodes {
            refs.append(addresses.map { $0.node == node.node ? nil : node.cluster.resolve($0, as: Numbered.self) })
        }
        var next: [String: Int] = [:]
        var sent = 0
        let count = cluster.nodes.count
        for _ in 0..<Int.random(in: 5...20, using: &cluster.random) {
            let from = Int.random(in: 0..<count, using: &cluster.random)
            var to = Int.random(in: 0..<(count - 1), using: &cluster.random)
            if to >= from { to += 1 }
            let pair = "\(from)>\(to)"
            let sequence = next[pair, default: 0] + 1
            next[pair] = sequence
            #expect(refs[from][to]!.tell(Numbered(from: simulatedNames[from], sequence: sequence)) == .enqueued)
            sent += 1
            cluster.run(for: .microseconds(Int64.random(in: 0...3_000, using: &cluster.random)))
        }
        cluster.run(for: .milliseconds(100))
        let seen = arrivals.withLockedValue { $0 }
        // At-most-once and FIFO: per pair, strictly increasing numbers.
        var last: [String: Int] = [:]
        for arrival in seen {
            let pair = "\(arrival.from)>\(arrival.at)"
            let previous = last[pair, default: 0]
            #expect(arrival.sequence > previous, "seed \(sim.seed): \(pair) got \(arrival.sequence) after \(previous) (\(cluster.network.statistics))")
            last[pair] = arrival.sequence
        }
        if !faulty {
            #expect(seen.count == sent, "seed \(sim.seed): \(seen.count) of \(sent) arrived without faults")
        }
        let run = DeliveryRun(sent: sent, arrivals: seen, statistics: cluster.network.statistics, faulty: faulty)
        let unclean = await cluster.shutdown()
        #expect(unclean.isEmpty, "seed \(sim.seed): \(unclean)")
        return run
    }

    @Test("at-most-once and FIFO per sender–receiver pair under drops, duplicates, delays and reorders; everything arrives without faults")
    func deliveryUnderFaults() async throws {
        let totals = LockedValueBox((sent: 0, arrived: 0, duplicatedByNetwork: 0, reorderedByNetwork: 0, droppedByNetwork: 0))
        try await Simulation.run("cluster-delivery", seeds: SimulationBudget.seeds(1_000)) { sim in
            let run = try await Self.deliveryRun(sim)
            totals.withLockedValue {
                $0.sent += run.sent
                $0.arrived += run.arrivals.count
                $0.duplicatedByNetwork += run.statistics.duplicated
                $0.reorderedByNetwork += run.statistics.reordered
                $0.droppedByNetwork += run.statistics.dropped
            }
        }
        let total = totals.withLockedValue { $0 }
        // The faults happened, and most messages still arrived.
        #expect(total.duplicatedByNetwork > 0 && total.reorderedByNetwork > 0 && total.droppedByNetwork > 0, "\(total)")
        #expect(total.arrived > total.sent / 2, "\(total)")
    }

    @Test("a seed replays: the same seed twice gives the same deliveries and the same faults")
    func sameSeedSameRun() async throws {
        for seed: UInt64 in [1, 2, 3, 17, 42] {
            var runs: [DeliveryRun] = []
            for _ in 0..<2 {
                let sim = Simulation(seed: seed, name: "replay")
                runs.append(try await Self.deliveryRun(sim))
                _ = await sim.shutdown()
            }
            #expect(runs[0] == runs[1], "seed \(seed): \(runs[0].statistics) / \(runs[1].statistics)")
            #expect(runs[0].statistics.published > 0)
        }
    }
}

/// Spawns an `inbox` on every node of `cluster` that records what it is told in `arrivals`;
/// returns their addresses, in node order.
func spawnInboxes(on cluster: SimulatedCluster, recordingInto arrivals: LockedValueBox<[Arrival]>) throws -> [ActorAddress] {
    try cluster.nodes.map { node in
        let name = node.name
        let inbox = try node.system.spawn(Behavior<Numbered>.receiveMessage { message in
            arrivals.withLockedValue { $0.append(Arrival(at: name, from: message.from, sequence: message.sequence)) }
            return .same
        }, name: "inbox")
        return node.cluster.address(of: inbox)
    }
}
