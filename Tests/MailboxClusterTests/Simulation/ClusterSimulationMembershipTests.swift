import ClusterSimulation
import Foundation
import Mailbox
import MailboxCluster
import MailboxNATS
import MailboxTestKit
import Testing

@Suite("Cluster simulation: membership after partitions")
struct ClusterSimulationMembershipTests {
    @Test("after a partition heals, membership converges: downed nodes rejoin as new incarnations, no downed incarnation comes back")
    func partitionHeals_membershipConverges() async throws {
        let restarts = LockedValueBox(0)
        try await Simulation.run("cluster-partition", seeds: SimulationBudget.seeds(200)) { sim in
            let plan = sim.faultPlan()
                .failing(SimulatedNetwork.FaultPoint.duplicate, .withProbability(0.03))
                .delaying(SimulatedNetwork.FaultPoint.delay, by: .milliseconds(5), .withProbability(0.03))
            let cluster = try SimulatedCluster(seed: sim.seed, scheduler: sim.scheduler, plan: plan, names: simulatedNames)
            // Per observing incarnation: the incarnations it saw go, and what it saw of them later.
            let gone = LockedValueBox<[ClusterNode: Set<ClusterNode>]>([:])
            let comebacks = LockedValueBox<[String]>([])
            func observe(_ node: SimulatedNode) {
                let observer = node.node
                node.cluster.memberEvents.observeValues { event in
                    let member = event.member.node
                    guard member != observer else { return }
                    let status = event.member.status
                    gone.withLockedValue { gone in
                        if status == .down || status == .removed {
                            gone[observer, default: []].insert(member)
                        } else if gone[observer]?.contains(member) == true {
                            comebacks.withLockedValue { $0.append("\(observer) saw \(member) \(status) after it went") }
                        }
                    }
                }
            }
            for node in cluster.nodes { observe(node) }
            cluster.run(for: .milliseconds(300))
            // Two sides, each non-empty.
            var names = simulatedNames
            names.shuffle(using: &cluster.random)
            let cut = Int.random(in: 1..<names.count, using: &cluster.random)
            let duration = Duration.milliseconds(Int64.random(in: 200...2_500, using: &cluster.random))
            cluster.network.partition([Set(names[..<cut]), Set(names[cut...])], for: duration)
            cluster.run(for: duration)
            // Healed. A node that learns it was downed exits and starts again (a new incarnation).
            var converged = false
            for _ in 0..<60 {
                cluster.run(for: .milliseconds(100))
                for node in cluster.nodes where node.wasDowned {
                    observe(try cluster.restart(node.name))
                    restarts.withLockedValue { $0 += 1 }
                }
                if Self.isConverged(cluster) {
                    converged = true
                    break
                }
            }
            #expect(converged, "seed \(sim.seed): partition \(names[..<cut]) | \(names[cut...]) for \(duration): \(Self.describe(cluster))")
            // It stays so.
            cluster.run(for: .milliseconds(500))
            #expect(Self.isConverged(cluster), "seed \(sim.seed): \(Self.describe(cluster))")
            #expect(comebacks.withLockedValue { $0 }.isEmpty, "seed \(sim.seed): \(comebacks.withLockedValue { $0 })")
            let retired = Set(cluster.retired.map(\.node))
            for node in cluster.nodes {
                #expect(Set(node.cluster.members.value.map(\.node)).isDisjoint(with: retired), "seed \(sim.seed): \(node.node) lists a retired incarnation")
            }
            let unclean = await cluster.shutdown()
            #expect(unclean.isEmpty, "seed \(sim.seed): \(unclean)")
        }
        // Some partitions were long enough to down nodes.
        #expect(restarts.withLockedValue { $0 } > 0)
    }

    @Test("chaos, then calm: under every fault of the plan (partitions and kills included) delivery stays at-most-once and FIFO; once calm, killed and downed nodes rejoin and membership converges")
    func chaosThenCalm() async throws {
        let totals = LockedValueBox((partitions: 0, kills: 0, restarts: 0))
        try await Simulation.run("cluster-chaos", seeds: SimulationBudget.seeds(80)) { sim in
            let plan = ClusterSimulationTests.lossyPlan(sim, rate: 0.03)
                .stalling(SimulatedNetwork.FaultPoint.partition, for: .milliseconds(1_500), .withProbability(0.003))
                .failing(SimulatedNetwork.FaultPoint.kill, .withProbability(0.001))
            let cluster = try SimulatedCluster(seed: sim.seed, scheduler: sim.scheduler, plan: plan, names: simulatedNames)
            let arrivals = LockedValueBox<[Arrival]>([])
            var refs: [[ActorRef<Numbered>?]] = []
            let addresses = try spawnInboxes(on: cluster, recordingInto: arrivals)
            for node in cluster.nodes {
                refs.append(addresses.map { $0.node == node.node ? nil : node.cluster.resolve($0, as: Numbered.self) })
            }
            // Chaos: two seconds of traffic on a faulty network.
            var next: [String: Int] = [:]
            for _ in 0..<40 {
                let from = Int.random(in: 0..<5, using: &cluster.random)
                var to = Int.random(in: 0..<4, using: &cluster.random)
                if to >= from { to += 1 }
                let sequence = next["\(from)>\(to)", default: 0] + 1
                next["\(from)>\(to)"] = sequence
                _ = refs[from][to]!.tell(Numbered(from: simulatedNames[from], sequence: sequence))
                cluster.run(for: .milliseconds(50))
            }
            // Calm: no more faults; who was killed or downed starts again.
            cluster.network.faultsEnabled = false
            cluster.network.heal()
            var converged = false
            for _ in 0..<80 {
                cluster.run(for: .milliseconds(100))
                for node in cluster.nodes where node.wasDowned || node.connection.state.value == .closed {
                    try cluster.restart(node.name)
                    totals.withLockedValue { $0.restarts += 1 }
                }
                if ClusterSimulationMembershipTests.isConverged(cluster) {
                    converged = true
                    break
                }
            }
            #expect(converged, "seed \(sim.seed): \(ClusterSimulationMembershipTests.describe(cluster))")
            var last: [String: Int] = [:]
            for arrival in arrivals.withLockedValue({ $0 }) {
                let pair = "\(arrival.from)>\(arrival.at)"
                #expect(arrival.sequence > last[pair, default: 0], "seed \(sim.seed): \(pair) got \(arrival.sequence) after \(last[pair, default: 0])")
                last[pair] = arrival.sequence
            }
            let statistics = cluster.network.statistics
            totals.withLockedValue {
                $0.partitions += statistics.partitions
                $0.kills += statistics.kills
            }
            let unclean = await cluster.shutdown()
            #expect(unclean.isEmpty, "seed \(sim.seed): \(unclean)")
        }
        let total = totals.withLockedValue { $0 }
        #expect(total.partitions > 0 && total.kills > 0 && total.restarts > 0, "\(total)")
    }

    /// Every current node is up and sees exactly the other current nodes, up.
    static func isConverged(_ cluster: SimulatedCluster) -> Bool {
        let current = Set(cluster.nodes.map(\.node))
        return cluster.nodes.allSatisfy { node in
            let members = node.cluster.members.value
            return !node.wasDowned && members.allSatisfy { $0.status == .up } && Set(members.map(\.node)) == current
        }
    }

    static func describe(_ cluster: SimulatedCluster) -> String {
        cluster.nodes.map { node in
            "\(node.node): " + node.cluster.members.value.map { "\($0.node) \($0.status)" }.joined(separator: ", ")
        }.joined(separator: " | ") + " (\(cluster.network.statistics))"
    }
}
