import Foundation
import Mailbox

/// A whole actor system on a seeded `TestScheduler`: deterministic, so that a run replays
/// exactly from its seed.
///
/// Everything a simulation needs at random must come from `random` (or from a `FaultPlan`
/// built with `faultPlan()`), both derived from `seed`; nothing runs until the body moves the
/// virtual clock (or a `TestProbe` does).
///
/// ```swift
/// try await Simulation.run(seeds: 0 ..< 100) { sim in
///     let counter = try sim.system.spawn(counterBehavior(), name: "counter")
///     let probe = try sim.probe(Int.self)
///     let n = Int.random(in: 1 ... 10, using: &sim.random)
///     for _ in 0 ..< n { counter.tell(.increment) }
///     counter.tell(.get(replyTo: probe.ref))
///     try probe.expectMessage(n)
/// }
/// ```
///
/// `run` shuts each system down cleanly and reports a failure with its seed: replay it with
/// `MAILBOX_SEED=<seed> swift test --filter <test>`.
///
/// Thread-safety: a simulation belongs to the task that runs its body; it is not `Sendable`.
/// Its system and scheduler are, but the scheduler must be advanced from that task only.
public final class Simulation {
    /// The seed everything random in this run comes from.
    public let seed: UInt64
    /// The virtual clock; nothing runs until it is advanced.
    public let scheduler: TestScheduler
    /// The system under test, on `scheduler`.
    public let system: ActorSystem
    /// Random numbers for the body, from `seed`.
    public var random: SeededRandom

    /// Creates a system named `name` on a fresh `TestScheduler`.
    ///
    /// - Parameters:
    ///   - runLength: The system's run length (user messages per mailbox run).
    ///   - logHandler: Receives the system's log lines (failures); discarded by default.
    public init(seed: UInt64, name: String = "simulation", runLength: Int = 64, logHandler: (@Sendable (String) -> Void)? = nil) {
        self.seed = seed
        self.scheduler = TestScheduler()
        self.system = ActorSystem(name: name, configuration: .init(
            scheduler: scheduler, runLength: runLength, logHandler: logHandler, randomSeed: SplitMix64.mix(seed)))
        // A stream of its own, so that a plan built from the seed does not mirror `random`.
        self.random = SeededRandom(seed: SplitMix64.mix(seed ^ 0x5EED_5EED_5EED_5EED))
    }

    /// An empty fault plan with this run's seed, to add rules to.
    public func faultPlan() -> FaultPlan {
        FaultPlan(seed: seed)
    }

    /// A probe in this simulation's system, on its virtual clock.
    ///
    /// - Throws: `ActorSystemError` if the name is invalid or taken.
    public func probe<Message: Sendable>(_ type: Message.Type = Message.self, name: String? = nil) throws -> TestProbe<Message> {
        try TestProbe<Message>(system: system, name: name, virtualClock: scheduler)
    }

    /// Runs what is due, then steps from action to action until nothing is scheduled within
    /// `limit` of virtual time from now; the clock stays at the last action run.
    ///
    /// - Returns: Whether the scheduler is idle (nothing scheduled at all). Repeating timers
    ///   keep a system from ever being idle; they stop at `limit`.
    @discardableResult
    public func settle(within limit: Duration = .seconds(3_600)) -> Bool {
        let deadline = _adding(scheduler.elapsed, limit)
        scheduler.advance(by: .nanoseconds(0))
        while let next = scheduler.nextActionElapsed, next <= deadline {
            let now = scheduler.elapsed
            scheduler.advance(by: next > now ? next - now : .zero)
        }
        return scheduler.pendingActionCount == 0
    }

    /// Shuts the system down on virtual time: begins the shutdown, lets it settle (up to
    /// `limit`), then awaits `ActorSystem.shutdown`. Actors that have not stopped by then are
    /// listed in the report, at once (no wall-clock wait).
    public func shutdown(within limit: Duration = .seconds(3_600)) async -> ActorSystem.ShutdownReport {
        system.beginShutdown()
        settle(within: limit)
        let stopped = system.topLevelActors.isEmpty
        return await system.shutdown(timeout: stopped ? .seconds(10) : .zero)
    }

    /// Runs `body` once per seed of `seeds`, each on a fresh simulation, and shuts each one
    /// down; stops at the first failure.
    ///
    /// If `environment` has `MAILBOX_SEED` (a decimal `UInt64`), only that seed runs — the way
    /// to replay a failure, whether or not the seed is among `seeds`.
    ///
    /// - Parameters:
    ///   - name: Names the run in failure messages, and the systems.
    ///   - environment: Where `MAILBOX_SEED` is read; the process environment by default
    ///     (tests inject their own dictionary).
    /// - Returns: The seeds that ran, in order.
    /// - Throws: `SimulationFailure` naming the seed, the error and how to replay it, when the
    ///   body throws or the system does not shut down cleanly; `SimulationFailure` with code
    ///   `.invalidSeed` if `MAILBOX_SEED` is not a number.
    @discardableResult
    public static func run(
        _ name: String = "simulation",
        seeds: some Sequence<UInt64>,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        _ body: (Simulation) async throws -> Void
    ) async throws -> [UInt64] {
        let selected: [UInt64]
        if let text = environment[replayVariable] {
            guard let seed = UInt64(text.trimmingCharacters(in: .whitespaces)) else {
                throw SimulationFailure(code: .invalidSeed, name: name, seed: nil, underlying: nil, detail: "\(replayVariable)=\(text) is not a seed (a decimal UInt64)")
            }
            selected = [seed]
        } else {
            selected = Array(seeds)
        }
        for seed in selected {
            // A run of thousands of seeds is synchronous work on the cooperative pool: let
            // other tasks (other tests) run between seeds.
            await Task.yield()
            let simulation = Simulation(seed: seed, name: Self.systemName(name))
            var bodyError: (any Error)?
            do {
                try await body(simulation)
            } catch {
                bodyError = error
            }
            let report = await simulation.shutdown()
            if let bodyError {
                throw SimulationFailure(code: .bodyFailed, name: name, seed: seed, underlying: bodyError, detail: "\(bodyError)")
            }
            if !report.isClean {
                throw SimulationFailure(code: .uncleanShutdown, name: name, seed: seed, underlying: nil, detail: report.description)
            }
        }
        return selected
    }

    /// The environment variable that restricts `run` to one seed.
    public static let replayVariable = "MAILBOX_SEED"

    /// `name` if it is a valid actor-system name, else "simulation".
    private static func systemName(_ name: String) -> String {
        let allowed = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        return !name.isEmpty && allowed ? name : "simulation"
    }
}

/// A simulation run failed: for which seed, why, and how to replay it.
///
/// ```
/// simulation 'bank' failed for seed 17: InjectedFault(...)
/// replay: MAILBOX_SEED=17 swift test --filter <this test>
/// ```
public struct SimulationFailure: Error, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case bodyFailed, uncleanShutdown, invalidSeed
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The body threw (`underlying` is its error).
        public static let bodyFailed = Code(.bodyFailed)
        /// The body passed but actors were still running after the shutdown.
        public static let uncleanShutdown = Code(.uncleanShutdown)
        /// `MAILBOX_SEED` was set to something that is not a seed.
        public static let invalidSeed = Code(.invalidSeed)

        public var description: String { "\(value)" }
    }

    /// The kind of failure.
    public let code: Code
    /// The run's name.
    public let name: String
    /// The seed that failed (`nil` for `.invalidSeed`).
    public let seed: UInt64?
    /// The body's error, for `.bodyFailed`.
    public let underlying: (any Error)?
    /// What went wrong, in words.
    public let detail: String

    /// How to replay the failing seed, e.g. `MAILBOX_SEED=17 swift test --filter <test>`.
    public var replayHint: String? {
        seed.map { "\(Simulation.replayVariable)=\($0) swift test --filter <this test>" }
    }

    public var description: String {
        guard let seed else { return "simulation '\(name)': \(detail)" }
        let what = code == .uncleanShutdown ? "did not shut down cleanly" : "failed"
        return "simulation '\(name)' \(what) for seed \(seed): \(detail)\nreplay: \(replayHint ?? "")"
    }
}
