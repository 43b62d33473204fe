import Foundation
import Mailbox
import MailboxTestKit
import Synchronization
import Testing

// Invariants of supervision, checked over thousands of seeded simulations: a whole actor system
// on a TestScheduler, a workload and a fault plan drawn from the seed. A failing seed is named in
// the failure with the command that replays it (MAILBOX_SEED=<seed>).
//
// `MAILBOX_FAULT_SEEDS` sets the number of seeds per scenario (default 2,000).

let seedsPerScenario: UInt64 = {
    if let text = ProcessInfo.processInfo.environment["MAILBOX_FAULT_SEEDS"], let count = UInt64(text), count > 0 {
        return count
    }
    return 2_000
}()

/// A thread-safe list (actors on the TestScheduler run on the test's thread, but observers and
/// handlers are `@Sendable`).
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
    func record(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// An invariant that did not hold, with what was seen.
struct InvariantViolation: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw InvariantViolation(message()) }
}

enum Work: Sendable, Equatable {
    case value(Int)
    case fail
}

// MARK: - One supervised actor under random failures

@Suite("Fault injection: a supervised actor")
struct SupervisedActorFaultTests {
    enum Plan: CustomStringConvertible {
        case restart
        case resume
        case limited(Int, Duration)
        case backoff(min: Duration, max: Duration, randomFactor: Double, stash: Int)

        var strategy: SupervisorStrategy {
            switch self {
            case .restart: return SupervisorStrategy.restart.withLogging(false)
            case .resume: return SupervisorStrategy.resume.withLogging(false)
            case let .limited(limit, window): return SupervisorStrategy.restart(limit: limit, within: window).withLogging(false)
            case let .backoff(min, max, randomFactor, stash):
                return SupervisorStrategy.restartWithBackoff(minBackoff: min, maxBackoff: max, randomFactor: randomFactor)
                    .withStashCapacity(stash).withLogging(false)
            }
        }

        var description: String { "\(strategy)" }
    }

    @Test func noAcceptedMessageIsLostOrHandledTwice_andDecisionsFollowTheStrategy() async throws {
        try await Simulation.run("supervised-actor", seeds: 0..<seedsPerScenario) { simulation in
            var random = simulation.random
            let plan: Plan
            switch Int.random(in: 0..<4, using: &random) {
            case 0: plan = .restart
            case 1: plan = .resume
            case 2: plan = .limited(Int.random(in: 1...4, using: &random), .milliseconds(Int.random(in: 100...2_000, using: &random)))
            default:
                plan = .backoff(min: .milliseconds(Int.random(in: 10...100, using: &random)),
                                max: .milliseconds(Int.random(in: 100...1_000, using: &random)),
                                randomFactor: Double.random(in: 0...0.5, using: &random),
                                stash: Int.random(in: 0...20, using: &random))
            }
            let probability = Double.random(in: 0.02...0.3, using: &random)
            let injector = FaultInjector(plan: simulation.faultPlan().failing(FaultPlan.handler, .withProbability(probability)))
            let scheduler = simulation.scheduler
            let processed = Recorder<Int>()
            let setups = Recorder<Date>()
            let decisions = Recorder<(decision: SupervisionDecision, at: Date)>()
            // Dead letters and drops (a full back-off stash): messages accepted but not handled.
            let deadLetters = Recorder<(recipient: ActorAddress, message: any Sendable)>()
            simulation.system.events.observeValues { event in
                switch event {
                case let .supervised(decision): decisions.record((decision, scheduler.currentDate))
                case let .deadLetter(letter): deadLetters.record((letter.recipient, letter.message))
                case let .dropped(drop): deadLetters.record((drop.recipient, drop.message))
                default: break
                }
            }
            let worker = try simulation.system.spawn(.supervise(Behavior<Work>.setup { _ in
                setups.record(scheduler.currentDate)
                return .receiveMessage { message in
                    if case let .value(value) = message {
                        try injector.check(FaultPlan.handler)
                        processed.record(value)
                    }
                    return .same
                }
            }).onFailure(plan.strategy), name: "worker")
            let terminations = Recorder<String>()
            try simulation.system.spawn(Behavior<Int>.setup { context in
                context.watch(worker)
                return .receiveLifecycle { _, event in
                    if case let .terminated(ref) = event { terminations.record(ref.path) }
                    return .same
                }
            }, name: "watcher")

            let count = Int.random(in: 50...200, using: &random)
            for value in 0..<count {
                _ = worker.tell(.value(value))
                if Int.random(in: 0..<4, using: &random) == 0 {
                    scheduler.advance(by: .milliseconds(Int.random(in: 0...300, using: &random)))
                }
            }
            simulation.settle()
            stopUnexpectedly(worker)
            simulation.settle()

            let context = "plan \(plan), p=\(probability)"
            // Order, and nothing handled twice.
            let done = processed.values
            try require(zip(done, done.dropFirst()).allSatisfy { $0 < $1 }, "\(context): handled out of order or twice: \(done)")
            // Every message is handled, dropped as the failing one, or a counted dead letter or drop.
            let failed = decisions.values.compactMap { $0.decision.message as? Work }.compactMap { work -> Int? in
                if case let .value(value) = work { return value }
                return nil
            }
            let dead = deadLetters.values.filter { $0.recipient == worker.address }.compactMap { letter -> Int? in
                if case let .value(value) = letter.message as? Work { return value }
                return nil
            }
            try require((done + failed + dead).sorted() == Array(0..<count),
                        "\(context): handled \(done.count) + failed \(failed.count) + dead \(dead.count) != sent \(count)")
            try require(failed.count == injector.failures(FaultPlan.handler),
                        "\(context): \(failed.count) failure decisions for \(injector.failures(FaultPlan.handler)) injected failures")
            // Decisions follow the strategy.
            let directives = decisions.values.map(\.decision.directive)
            switch plan {
            case .restart:
                try require(directives.allSatisfy { $0 == .restart }, "\(context): \(directives)")
            case .resume:
                try require(directives.allSatisfy { $0 == .resume }, "\(context): \(directives)")
                try require(setups.count == 1, "\(context): resumed but set up \(setups.count) times")
            case let .limited(limit, window):
                // The sliding window, as a reference model.
                var restarts: [Date] = []
                var expected: [SupervisorDirective] = []
                for (_, at) in decisions.values {
                    restarts.removeAll { $0 < at.addingTimeInterval(-window.seconds) }
                    if restarts.count + 1 > limit {
                        expected.append(.stop)
                        break
                    }
                    restarts.append(at)
                    expected.append(.restart)
                }
                try require(directives == expected, "\(context): decisions \(directives), model \(expected)")
            case let .backoff(min, max, randomFactor, _):
                try require(directives.allSatisfy { $0 == .restart }, "\(context): \(directives)")
                let upper = max.seconds * (1 + randomFactor) + 1e-9
                for (index, (decision, at)) in decisions.values.enumerated() {
                    let delay = decision.backoff?.seconds ?? -1
                    try require(delay >= min.seconds - 1e-9 && delay <= upper, "\(context): back-off \(delay)s out of [\(min), \(upper)s]")
                    // The restart that follows did not come early.
                    if index + 1 < setups.count {
                        try require(setups.values[index + 1].timeIntervalSince(at) >= delay - 1e-9,
                                    "\(context): restarted \(setups.values[index + 1].timeIntervalSince(at))s after the failure, back-off \(delay)s")
                    }
                }
            }
            // Restarts: one setup per restart that completed.
            let restartsDecided = directives.filter { $0 == .restart }.count
            try require(setups.count <= 1 + restartsDecided && setups.count >= restartsDecided,
                        "\(context): \(setups.count) setups for \(restartsDecided) restarts")
            // The termination (a system message) reached the watcher exactly once.
            try require(terminations.values == [worker.path], "\(context): watcher saw \(terminations.values)")
        }
    }
}

// MARK: - Supervisor trees: the restarted set

@Suite("Fault injection: supervision trees")
struct SupervisorTreeFaultTests {
    @Test func eachFailureRestartsExactlyTheSetOTPRestarts_andSiblingsKeepTheirMessages() async throws {
        try await Simulation.run("tree-sets", seeds: 0..<seedsPerScenario) { simulation in
            var random = simulation.random
            let strategies: [Supervisor.RestartScope] = [.oneForOne, .allForOne, .restForOne]
            let strategy = strategies[Int.random(in: 0..<3, using: &random)]
            let size = Int.random(in: 2...5, using: &random)
            let types: [ChildSpec.Restart] = (0..<size).map { _ in
                switch Int.random(in: 0..<6, using: &random) {
                case 0: return .temporary
                case 1: return .transient
                default: return .permanent
                }
            }
            let log = Recorder<String>()
            let processed = Recorder<(child: Int, value: Int)>()
            let specs = (0..<size).map { index in
                ChildSpec(id: "c\(index)", restart: types[index]) {
                    Behavior<Work>.setup { _ in
                        log.record("setup \(index)")
                        return Behavior<Work>.receiveMessage { message in
                            switch message {
                            case let .value(value): processed.record((index, value))
                            case .fail: throw InjectedFault(point: "c\(index)", hit: 0, seed: 0)
                            }
                            return .same
                        }.receiveLifecycle { _, event in
                            if case .preRestart = event { log.record("pre \(index)") }
                            return .same
                        }
                    }
                }
            }
            let deadLetters = Recorder<DeadLetter>()
            simulation.system.deadLetters.observeValues { deadLetters.record($0) }
            let supervisor = try simulation.system.spawn(
                Supervisor.behavior(strategy: strategy, intensity: 1_000, period: .seconds(1), children: specs), name: "sup")
            let probe = try simulation.probe([SupervisedChild].self)
            supervisor.tell(.whichChildren(replyTo: probe.ref))
            let children = try probe.expectMessage().compactMap { $0.ref?.typed(as: Work.self) }
            try require(children.count == size, "expected \(size) children, got \(children.count)")
            try require(log.values == (0..<size).map { "setup \($0)" }, "start order \(log.values)")

            var alive = Array(0..<size)   // the model: children in start order
            var sent: [[Int]] = Array(repeating: [], count: size)
            var nextValue = 0
            func sendSome() {
                for _ in 0..<Int.random(in: 0...6, using: &random) {
                    let child = Int.random(in: 0..<size, using: &random)
                    _ = children[child].tell(.value(nextValue))
                    sent[child].append(nextValue)
                    nextValue += 1
                }
            }
            let context = "\(strategy) types \(types)"
            for _ in 0..<Int.random(in: 3...12, using: &random) {
                sendSome()
                simulation.settle()
                guard !alive.isEmpty else { break }
                let failing = alive[Int.random(in: 0..<alive.count, using: &random)]
                let before = log.count
                _ = children[failing].tell(.fail)
                sendSome()   // queued during the restart
                simulation.settle()
                // What OTP does, as a model.
                var expected: [String] = []
                if types[failing] == .temporary {
                    alive.removeAll { $0 == failing }
                } else {
                    let position = alive.firstIndex(of: failing)!
                    let set: [Int]
                    switch strategy {
                    case .oneForOne: set = [failing]
                    case .allForOne: set = alive
                    case .restForOne: set = Array(alive[position...])
                    }
                    for child in set.reversed() where types[child] != .temporary || child == failing {
                        expected.append("pre \(child)")
                    }
                    for child in set where types[child] != .temporary || child == failing {
                        expected.append("setup \(child)")
                    }
                    alive.removeAll { set.contains($0) && types[$0] == .temporary && $0 != failing }
                }
                let seen = Array(log.values[before...])
                try require(seen == expected, "\(context): child \(failing) failed; restarts \(seen), OTP restarts \(expected)")
            }
            // Every value was handled once, in order per child, or (sent to a temporary child
            // that was stopped) is a counted dead letter.
            let dead = Set(deadLetters.values.compactMap { letter -> Int? in
                if case let .value(value) = letter.message as? Work { return value }
                return nil
            })
            for child in 0..<size {
                let handled = processed.values.filter { $0.child == child }.map(\.value)
                try require(handled == handled.sorted() && Set(handled).count == handled.count, "\(context): c\(child) handled \(handled)")
                let missing = Set(sent[child]).subtracting(handled)
                try require(missing.isSubset(of: dead), "\(context): c\(child) lost \(missing.subtracting(dead).sorted())")
                try require(Set(handled).isDisjoint(with: dead), "\(context): c\(child) handled a dead letter")
            }
        }
    }

    @Test func intensityIsASlidingWindow_andExceedingItStopsTheWholeTree() async throws {
        try await Simulation.run("tree-intensity", seeds: 0..<seedsPerScenario) { simulation in
            var random = simulation.random
            let intensity = Int.random(in: 0...3, using: &random)
            let period = Duration.milliseconds(Int.random(in: 200...3_000, using: &random))
            let setups = Recorder<Int>()
            let specs = (0..<2).map { index in
                ChildSpec(id: "c\(index)") {
                    Behavior<Work>.setup { _ in
                        setups.record(index)
                        return .receiveMessage { message in
                            if case .fail = message { throw InjectedFault(point: "c\(index)", hit: 0, seed: 0) }
                            return .same
                        }
                    }
                }
            }
            let supervisor = try simulation.system.spawn(
                Supervisor.behavior(strategy: .oneForOne, intensity: intensity, period: period, children: specs), name: "sup")
            let watcher = try simulation.probe(Int.self)
            try watcher.watch(supervisor)
            let probe = try simulation.probe([SupervisedChild].self)
            supervisor.tell(.whichChildren(replyTo: probe.ref))
            let children = try probe.expectMessage().compactMap { $0.ref?.typed(as: Work.self) }

            var restarts: [Date] = []
            var exceeded = false
            var expectedSetups = 2
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                simulation.scheduler.advance(by: .milliseconds(Int.random(in: 0...1_500, using: &random)))
                let now = simulation.scheduler.currentDate
                let child = Int.random(in: 0..<2, using: &random)
                let result = children[child].tell(.fail)
                simulation.settle(within: .zero)
                if exceeded {
                    try require(result == .dropped(.recipientTerminated), "a child of a terminated tree accepted a message")
                    continue
                }
                restarts.removeAll { $0 < now.addingTimeInterval(-period.seconds) }
                if restarts.count + 1 > intensity {
                    exceeded = true
                } else {
                    restarts.append(now)
                    expectedSetups += 1
                }
            }
            let context = "intensity \(intensity) period \(period)"
            try require(setups.count == expectedSetups, "\(context): \(setups.count) setups, model \(expectedSetups)")
            if exceeded {
                try watcher.expectTerminated(supervisor, within: .seconds(1))
            } else {
                try watcher.expectNoMessage(for: .milliseconds(1))
                try require(supervisor.tell(.whichChildren(replyTo: probe.ref)) == .enqueued, "\(context): the tree stopped early")
            }
        }
    }
}

extension Duration {
    /// Seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
