import Foundation
import Mailbox
import MailboxTestKit
import Testing

enum CounterMessage: Sendable {
    case add(Int)
    case get(replyTo: ActorRef<Int>)
}

func counter() -> Behavior<CounterMessage> {
    .setup { _ in
        var total = 0
        return .receiveMessage { message in
            switch message {
            case let .add(n): total += n
            case let .get(replyTo): replyTo.tell(total)
            }
            return .same
        }
    }
}

struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

@Suite struct SimulationTests {
    /// A randomised scenario: several senders with random delays, some failures injected at
    /// random; returns the order in which the counter saw things, as text.
    func scenario(_ sim: Simulation) throws -> [String] {
        let injector = FaultInjector(plan: sim.faultPlan().failing("add", .withProbability(0.2)))
        let probe = try sim.probe(String.self)
        let sink = probe.ref
        let actor = try sim.system.spawn(Behavior<Int>.receiveMessage { n in
            if (try? injector.check("add")) == nil { sink.tell("fault \(n)") } else { sink.tell("add \(n)") }
            return .same
        }, name: "counter")
        let count = Int.random(in: 5 ... 15, using: &sim.random)
        for n in 0 ..< count {
            let delay = Duration.milliseconds(Int.random(in: 0 ... 100, using: &sim.random))
            sim.scheduler.schedule(after: delay) { actor.tell(n) }
        }
        return try probe.receiveMessages(count)
    }

    @Test func run_passesEverySeed_andReturnsThem() async throws {
        let seen = try await Simulation.run("counting", seeds: 0 ..< 20, environment: [:]) { sim in
            let ref = try sim.system.spawn(counter(), name: "counter")
            let probe = try sim.probe(Int.self)
            let adds = (0 ..< 10).map { _ in Int.random(in: 0 ... 9, using: &sim.random) }
            for n in adds { ref.tell(.add(n)) }
            ref.tell(.get(replyTo: probe.ref))
            try probe.expectMessage(adds.reduce(0, +))
        }
        #expect(seen == Array(0 ..< 20))
    }

    @Test func sameSeed_replaysExactly_differentSeedsDiffer() async throws {
        var traces: [UInt64: [String]] = [:]
        for _ in 0 ..< 2 {
            try await Simulation.run(seeds: [1, 2, 3], environment: [:]) { sim in
                let trace = try scenario(sim)
                if let earlier = traces[sim.seed] {
                    #expect(trace == earlier, "seed \(sim.seed) must replay exactly")
                }
                traces[sim.seed] = trace
            }
        }
        #expect(Set(traces.values).count == 3)
    }

    @Test func aFailingSeed_isReported_withHowToReplayIt() async throws {
        let ran = Recorded([UInt64]())
        let failure = try await #require(throws: SimulationFailure.self) {
            try await Simulation.run("flaky", seeds: 0 ..< 100, environment: [:]) { sim in
                ran.append(sim.seed)
                if sim.seed == 17 { throw Boom() }
            }
        }
        #expect(failure.seed == 17)
        #expect(failure.code == .bodyFailed)
        #expect(failure.underlying is Boom)
        #expect(ran.snapshot == Array(0 ... 17), "the run stops at the first failing seed")
        #expect("\(failure)" == "simulation 'flaky' failed for seed 17: boom\nreplay: MAILBOX_SEED=17 swift test --filter <this test>")
    }

    @Test func mailboxSeed_narrowsTheRunToThatSeed() async throws {
        let ran = Recorded([UInt64]())
        let seeds = try await Simulation.run(seeds: 0 ..< 100, environment: ["MAILBOX_SEED": "12345"]) { sim in
            ran.append(sim.seed)
        }
        #expect(seeds == [12345])
        #expect(ran.snapshot == [12345])
        let failure = try await #require(throws: SimulationFailure.self) {
            try await Simulation.run(seeds: 0 ..< 1, environment: ["MAILBOX_SEED": "twelve"]) { _ in }
        }
        #expect(failure.code == .invalidSeed)
        #expect(failure.seed == nil)
    }

    @Test func aReplayedSeed_reproducesTheFailure() async throws {
        // Fails for the seeds whose plan injects a fault at hit 1 of "p": find one, then replay it.
        func body(_ sim: Simulation) throws {
            let injector = FaultInjector(plan: sim.faultPlan().failing("p", .withProbability(0.1)))
            try injector.check("p")
        }
        let failure = try await #require(throws: SimulationFailure.self) {
            try await Simulation.run(seeds: 0 ..< 1_000, environment: [:]) { try body($0) }
        }
        let seed = try #require(failure.seed)
        let replay = try await #require(throws: SimulationFailure.self) {
            try await Simulation.run(seeds: 0 ..< 1_000, environment: ["MAILBOX_SEED": "\(seed)"]) { try body($0) }
        }
        #expect(replay.seed == seed)
        #expect((replay.underlying as? InjectedFault) == InjectedFault(point: "p", hit: 1, seed: seed))
    }

    @Test func anActorThatDoesNotStop_makesTheRunFail() async throws {
        let elsewhere = TestScheduler()               // never advanced during the run
        let failure = try await #require(throws: SimulationFailure.self) {
            try await Simulation.run("leaky", seeds: [4], environment: [:]) { sim in
                try sim.system.spawn(Behavior<Int>.ignore, name: "stuck", props: Props(scheduler: elsewhere))
            }
        }
        #expect(failure.code == .uncleanShutdown)
        #expect(failure.seed == 4)
        #expect("\(failure)".contains("did not shut down cleanly for seed 4"))
        #expect("\(failure)".contains("/user/stuck"))
        elsewhere.advance(by: .nanoseconds(0))      // let it stop now
    }

    @Test func shutdown_stopsEverythingOnVirtualTime() async throws {
        let sim = Simulation(seed: 9)
        let ref = try sim.system.spawn(counter(), name: "counter")
        let probe = try sim.probe(Int.self)
        try probe.watch(ref)
        let report = await sim.shutdown()
        #expect(report.isClean)
        #expect(sim.system.topLevelActors.isEmpty)
        #expect(sim.system.isShuttingDown)
    }
}
