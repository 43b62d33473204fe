import Foundation
import Mailbox
import MailboxTestKit
import Testing

// Every snippet of docs/Testing.md, as a test. Keep them in sync: the doc's lines appear here in
// the same order (with assertions between them), and `snippetsOfTheDoc_appearInTheseTests` fails
// if a snippet changes without its test. Declarations are at file scope; statements are in tests.

// MARK: - Probes

enum Ping: Sendable {
    case ping(replyTo: ActorRef<String>)
}

// MARK: - Fault plans

func worker(_ injector: FaultInjector, reportTo probe: ActorRef<Int>) -> Behavior<Int> {
    .setup { _ in
        try injector.check(FaultPlan.setup)
        return .receiveMessage { n in
            try injector.check(FaultPlan.handler)
            probe.tell(n)
            return .same
        }
    }
}

// MARK: - Simulation

enum TallyMessage: Sendable {
    case add(Int)
    case get(replyTo: ActorRef<Int>)
}

func tally() -> Behavior<TallyMessage> {
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

@Suite struct TestingDocTests {
    @Test func testSchedulerAndProbes() throws {
        let log = Recorded([String]())
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "docs", configuration: .init(scheduler: scheduler, logHandler: nil))

        scheduler.schedule(after: .seconds(2)) { log.append("two seconds") }
        scheduler.advance(by: .seconds(1))          // nothing yet
        #expect(log.snapshot.isEmpty)
        scheduler.advance(by: .seconds(1))          // runs it: log == ["two seconds"]
        #expect(log.snapshot == ["two seconds"])
        scheduler.advance(by: .nanoseconds(0))      // runs what is due now (mailbox runs), no time passes
        #expect(scheduler.elapsed == .seconds(2))

        let start = scheduler.elapsed
        let probe = try TestProbe<String>(system: system, name: "probe")
        let ponger = try system.spawn(Behavior<Ping>.receive { context, message in
            guard case let .ping(replyTo) = message else { return .same }
            context.scheduler.schedule(after: .seconds(2)) { replyTo.tell("pong") }
            return .same
        }, name: "ponger")
        ponger.tell(.ping(replyTo: probe.ref))
        try probe.expectMessage("pong", within: .seconds(3))    // returns at 2 s of virtual time
        #expect(scheduler.elapsed - start == .seconds(2))
        try probe.expectNoMessage(for: .seconds(1))             // the clock is now at exactly 3 s
        #expect(scheduler.elapsed - start == .seconds(3))
        stopUnexpectedly(ponger)
        try probe.expectTerminated(ponger)

        var caught = false
        do {
            try probe.expectMessage(within: .seconds(2))
        } catch let error as ProbeError {
            caught = true
            #expect(error.code == .timedOut)
            // error.code == .timedOut
            #expect("\(error)" == "probe /user/probe timed out after 2.0 seconds of virtual time waiting for a message; nothing arrived")
            // "\(error)" == "probe /user/probe timed out after 2.0 seconds of virtual time waiting for a message; nothing arrived"
        }
        #expect(caught)
    }

    @Test func faultPlans() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "docs", configuration: .init(scheduler: scheduler, logHandler: nil))

        let plan = FaultPlan(seed: 42)
            .failing(FaultPlan.handler, .atHit(3))      // the 3rd message handled throws
            .failingSetup(.fromHit(2))                  // every start after the first fails in setup
            .failing("io", .withProbability(0.1))       // 10% of "io" hits: the same ones for seed 42
        let injector = FaultInjector(plan: plan)

        let numbers = try TestProbe<Int>(system: system)
        let ref = try system.spawn(worker(injector, reportTo: numbers.ref), name: "worker")
        for n in 1 ... 5 { ref.tell(n) }
        try numbers.expectMessage(1)
        try numbers.expectMessage(2)
        try numbers.expectTerminated(ref)      // message 3 failed: without supervision, the actor stops
        #expect(injector.hits(FaultPlan.handler) == 3)
        #expect(injector.failures(FaultPlan.handler) == 1)
        // injector.hits(FaultPlan.handler) == 3, injector.failures(FaultPlan.handler) == 1

        // A second worker's setup is the point's second hit: it fails.
        let again = try system.spawn(worker(injector, reportTo: numbers.ref), name: "again")
        try numbers.expectTerminated(again)
        #expect(injector.injected.map(\.point) == ["handler", "setup"])

        let bounded = try system.spawn(Behavior<Int>.ignore, name: "bounded", props: Props(mailbox: .bounded(capacity: 4, overflow: .dropNewest)))
        let fill = fillMailbox(bounded, with: 0, count: 10)    // fill.enqueued == 4, fill.dropped == 6
        #expect(fill.enqueued == 4)
        #expect(fill.dropped == 6)
        stopUnexpectedly(bounded)
        try numbers.expectTerminated(bounded)
    }

    @Test func faultyScheduler() throws {
        let base = TestScheduler()
        let faulty = FaultyScheduler(wrapping: base, plan: FaultPlan(seed: 1).delaying(by: .milliseconds(50), .everyNthHit(10)))
        let slowSystem = ActorSystem(name: "slow", configuration: .init(scheduler: faulty, logHandler: nil))
        let slowProbe = try TestProbe<String>(system: slowSystem)
        base.advance(by: .nanoseconds(0))                  // the probe starts
        faulty.stall(for: .seconds(1))                      // hold back everything for one second
        slowProbe.ref.tell("held")
        try slowProbe.expectMessage("held")                 // arrives at 1 s: base.elapsed == .seconds(1)
        #expect(base.elapsed == .seconds(1))
        #expect(faulty.heldBackCount == 1)
    }

    @Test func simulation() async throws {
        try await Simulation.run("tally", seeds: 0 ..< 100) { sim in
            let ref = try sim.system.spawn(tally(), name: "tally")
            let probe = try sim.probe(Int.self)
            let adds = (0 ..< 10).map { _ in Int.random(in: 0 ... 9, using: &sim.random) }
            for n in adds { ref.tell(.add(n)) }
            ref.tell(.get(replyTo: probe.ref))
            try probe.expectMessage(adds.reduce(0, +))
        }
    }

    @Test func supervisionUnderTest() throws {
        let scheduler = TestScheduler()
        let system = ActorSystem(name: "docs", configuration: .init(scheduler: scheduler, logHandler: nil))

        let flakyInjector = FaultInjector(plan: FaultPlan(seed: 7).failing(FaultPlan.handler, .atHit(2)))   // the 2nd message fails
        let decisions = try TestProbe<SupervisorDirective>(system: system)
        system.events.observeValues { event in
            if case let .supervised(decision) = event { decisions.ref.tell(decision.directive) }
        }
        let results = try TestProbe<Int>(system: system)
        let supervised = try system.spawn(
            .supervise(worker(flakyInjector, reportTo: results.ref)).onFailure(.restart(limit: 3, within: .seconds(1))),
            name: "supervised")
        for n in 1 ... 3 { supervised.tell(n) }
        try results.expectMessage(1)
        try decisions.expectMessage(.restart)     // message 2 failed: a restart, and message 2 is dropped
        try results.expectMessage(3)              // the new state handles the rest; same ref, same mailbox
        #expect(flakyInjector.hits(FaultPlan.setup) == 2)
        // flakyInjector.hits(FaultPlan.setup) == 2: the start and the restart
        try decisions.expectNoMessage(for: .seconds(1))
        #expect(supervised.tell(4) == .enqueued)
    }

    @Test func supervisionUnderTest_simulation() async throws {
        let lossless = Recorded([Bool]())
        try await Simulation.run("restarts", seeds: 0 ..< 50) { sim in
            let injector = FaultInjector(plan: sim.faultPlan().failing(FaultPlan.handler, .withProbability(0.2)))
            let handled = try sim.probe(Int.self)
            let ref = try sim.system.spawn(.supervise(worker(injector, reportTo: handled.ref)).onFailure(.restart), name: "worker")
            for n in 1 ... 20 { ref.tell(n) }
            sim.settle()
            lossless.append(handled.queuedMessages.count + injector.failures(FaultPlan.handler) == 20)
            // handled.queuedMessages.count + injector.failures(FaultPlan.handler) == 20
        }
        #expect(lossless.snapshot.count == 50)
        #expect(lossless.snapshot.allSatisfy { $0 })
    }

    @Test func docHasTheSupervisionPlaceholderSection() throws {
        let markdown = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/Testing.md"), encoding: .utf8)
        #expect(markdown.contains("\n## Supervision under test\n"))
    }

    @Test func snippetsOfTheDoc_appearInTheseTests() throws {
        let markdown = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/Testing.md"), encoding: .utf8)
        let tests = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let testLines = tests.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let snippets = Self.swiftSnippets(of: markdown)
        #expect(snippets.count == 14, "docs/Testing.md gained or lost a snippet: add or remove its test")
        for snippet in snippets {
            var searchFrom = testLines.startIndex
            for line in snippet {
                guard let found = testLines[searchFrom...].firstIndex(of: line) else {
                    Issue.record("docs/Testing.md line not found (in order) in TestingDocTests.swift: \(line)")
                    break
                }
                searchFrom = found + 1
            }
        }
    }

    /// The package's root directory, from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The non-empty, trimmed lines of each ```swift block of `markdown`.
    static func swiftSnippets(of markdown: String) -> [[String]] {
        var snippets: [[String]] = []
        var current: [String]?
        for rawLine in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                snippets.append(current!)
                current = nil
            } else if current != nil, !line.isEmpty {
                current!.append(line)
            }
        }
        return snippets
    }
}
