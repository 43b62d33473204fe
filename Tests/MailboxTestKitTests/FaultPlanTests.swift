import Foundation
import Mailbox
import MailboxTestKit
import Testing

@Suite struct FaultPlanTests {
    /// The hits among 1...n at which `check(point)` throws.
    func failingHits(_ injector: FaultInjector, _ point: String, upTo n: Int) -> [Int] {
        (1 ... n).filter { _ in (try? injector.check(point)) == nil }
    }

    @Test func hitTriggers_fireAtTheNamedHits() {
        let plan = FaultPlan(seed: 1)
            .failing("a", .atHit(3))
            .failing("b", .atHits([2, 5]))
            .failing("c", .fromHit(4))
            .failing("d", .everyNthHit(3))
            .failing("e", .always)
        let injector = FaultInjector(plan: plan)
        #expect(failingHits(injector, "a", upTo: 8) == [3])
        #expect(failingHits(injector, "b", upTo: 8) == [2, 5])
        #expect(failingHits(injector, "c", upTo: 8) == [4, 5, 6, 7, 8])
        #expect(failingHits(injector, "d", upTo: 8) == [3, 6])
        #expect(failingHits(injector, "e", upTo: 3) == [1, 2, 3])
        #expect(failingHits(injector, "unplanned", upTo: 8) == [])
        #expect(injector.hits("a") == 8)
        #expect(injector.failures("c") == 5)
        #expect(injector.hits("never hit") == 0)
    }

    @Test func check_throwsAnInjectedFaultNamingPointHitAndSeed() throws {
        let injector = FaultInjector(plan: FaultPlan(seed: 99).failing("handler", .atHit(2)))
        #expect(try injector.check("handler") == 1)
        let fault = try #require(throws: InjectedFault.self) { try injector.check("handler") }
        #expect(fault == InjectedFault(point: "handler", hit: 2, seed: 99))
        #expect("\(fault)" == "injected fault at 'handler' hit 2 (seed 99)")
        #expect(injector.injected == [fault])
    }

    @Test func probability_isReproducibleFromTheSeed_andDiffersBetweenSeeds() {
        func hits(seed: UInt64) -> [Int] {
            failingHits(FaultInjector(plan: FaultPlan(seed: seed).failing("io", .withProbability(0.3))), "io", upTo: 1_000)
        }
        let first = hits(seed: 42)
        #expect(first == hits(seed: 42))
        #expect(first != hits(seed: 43))
        #expect((200 ... 400).contains(first.count), "about 30% of 1000 hits, got \(first.count)")
        #expect(hits(seed: 7).isEmpty == false)
        #expect(failingHits(FaultInjector(plan: FaultPlan(seed: 1).failing("x", .withProbability(0))), "x", upTo: 100).isEmpty)
        #expect(failingHits(FaultInjector(plan: FaultPlan(seed: 1).failing("x", .withProbability(1))), "x", upTo: 100).count == 100)
    }

    @Test func probability_ofOnePoint_doesNotDependOnOtherPointsHitInBetween() {
        let plan = FaultPlan(seed: 5).failing("p", .withProbability(0.5)).failing("q", .withProbability(0.5))
        let alone = failingHits(FaultInjector(plan: plan), "p", upTo: 200)
        let interleaved = FaultInjector(plan: plan)
        var hits: [Int] = []
        for hit in 1 ... 200 {
            _ = try? interleaved.check("q")
            if (try? interleaved.check("p")) == nil { hits.append(hit) }
        }
        #expect(hits == alone)
        #expect(alone != failingHits(FaultInjector(plan: plan), "q", upTo: 200), "points draw independently")
    }

    @Test func firstRuleAddedWins_andDelayRulesDoNotThrow() throws {
        let plan = FaultPlan(seed: 0)
            .delaying("p", by: .seconds(1), .atHit(1))
            .failing("p", .always)
        let injector = FaultInjector(plan: plan)
        #expect(try injector.check("p") == 1)
        #expect(throws: InjectedFault.self) { try injector.check("p") }
        #expect(plan.effect(atHit: 1, of: "p") == .delay(.seconds(1)))
        #expect(plan.effect(atHit: 2, of: "p") == .fail)
        #expect(plan.rules.count == 2)
    }

    @Test func failingHandler_atMessageK_failsThatMessage_andTheActorStops() throws {
        let scheduler = TestScheduler()
        let system = makeSystem(scheduler)
        let injector = FaultInjector(plan: FaultPlan(seed: 3).failing(FaultPlan.handler, .atHit(3)))
        let probe = try TestProbe<Int>(system: system)
        let failures = Recorded([String]())
        system.events.observeValues { event in
            if case let .failed(address, error) = event { failures.append("\(address.path): \(error)") }
        }
        let worker = try system.spawn(Behavior<Int>.receiveMessage { n in
            try injector.check(FaultPlan.handler)
            probe.ref.tell(n)
            return .same
        }, name: "worker")
        for n in 1 ... 5 { worker.tell(n) }
        #expect(try probe.receiveMessages(2) == [1, 2])
        try probe.expectTerminated(worker)
        try probe.expectNoMessage(for: .seconds(1))
        #expect(injector.hits(FaultPlan.handler) == 3)
        #expect(injector.failures(FaultPlan.handler) == 1)
        #expect(failures.snapshot == ["/user/worker: injected fault at 'handler' hit 3 (seed 3)"])
    }

    @Test func failingSetup_fromHit2_letsTheFirstStartThroughAndFailsLaterOnes() throws {
        let scheduler = TestScheduler()
        let system = makeSystem(scheduler)
        let injector = FaultInjector(plan: FaultPlan(seed: 0).failingSetup(.fromHit(2)))
        let probe = try TestProbe<String>(system: system)
        func guarded(_ name: String) -> Behavior<String> {
            .setup { _ in
                try injector.check(FaultPlan.setup)
                probe.ref.tell("\(name) started")
                return .ignore
            }
        }
        let first = try system.spawn(guarded("first"), name: "first")
        let second = try system.spawn(guarded("second"), name: "second")
        #expect(try probe.expectMessage() == "first started")
        try probe.expectTerminated(second)
        try probe.expectNoMessage(for: .seconds(1))
        #expect(first.tell("still alive") == .enqueued)
        #expect(injector.injected == [InjectedFault(point: "setup", hit: 2, seed: 0)])
    }

    @Test func fillMailbox_countsEnqueuedAndDropped() throws {
        let scheduler = TestScheduler()
        let system = makeSystem(scheduler)
        let bounded = try system.spawn(Behavior<Int>.ignore, name: "bounded", props: Props(mailbox: .bounded(capacity: 3, overflow: .dropNewest)))
        scheduler.advance(by: .nanoseconds(0))
        let fill = fillMailbox(bounded, with: 7, count: 5)
        #expect(fill.enqueued == 3)
        #expect(fill.dropped == 2)
        #expect(fill.results == [.enqueued, .enqueued, .enqueued, .dropped(.mailboxFull(.dropNewest)), .dropped(.mailboxFull(.dropNewest))])
        #expect(system.droppedCount == 2)
        let numbered = fillMailbox(bounded, count: 2) { $0 }
        #expect(numbered.dropped == 2)
        scheduler.advance(by: .nanoseconds(0))
        #expect(fillMailbox(bounded, count: 3) { $0 }.enqueued == 3, "room again once the actor ran")
    }
}
