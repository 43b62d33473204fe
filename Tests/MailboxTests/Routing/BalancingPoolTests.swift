import Dispatch
import Testing
@testable import Mailbox

/// Balancing pools: routees pull their work from one shared queue.
@Suite("Balancing pools")
struct BalancingPoolTests {
    typealias Work = RouterTests.Work

    func handled(by name: String, _ log: Inbox<String>) -> [String] {
        log.values.filter { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }

    @Test func aBlockedRoutee_holdsOnlyItsOwnMessage_whileTheOthersDoAllTheRest() async throws {
        let system = ActorSystem(name: "balancing", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let gate = Gate()
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.balancingPool(size: 3) {
            Behavior<Int>.receive { context, n in
                if n == 0 { gate.hold() }          // the first message blocks its routee
                log.record("\(context.name) \(n)")
                return .same
            }
        }, name: "pool")
        pool.tell(0)
        #expect(gate.waitUntilHeld())
        for n in 1...30 { pool.tell(n) }
        // With routing by logic, a third of these would wait behind the blocked routee.
        #expect(await log.waitForCount(30))
        gate.open()
        #expect(await log.waitForCount(31))
        let blocked = try #require(log.values.last?.split(separator: " ").first.map(String.init))
        #expect(log.values.last == "\(blocked) 0")
        #expect(log.values.dropLast().allSatisfy { !$0.hasPrefix(blocked + " ") })
        await system.shutdown()
    }

    @Test func eachRouteeHoldsOneMessageAtATime_andTheQueueIsFirstInFirstOut() throws {
        let (system, scheduler) = makeTestSystem()
        let work = TestScheduler()
        let log = Inbox<String>()
        let refs = Inbox<ActorRef<Work>>()
        let pool = try system.spawn(
            Routers.balancingPool(size: 3, RouterTests.routee(log, refs: refs)).withRouteeProps(Props(scheduler: work)),
            name: "pool")
        for n in 0..<2 { pool.tell(.job(n)) }    // before the routees exist: they wait
        scheduler.runDue()
        for n in 2..<10 { pool.tell(.job(n)) }
        // One message in each routee's hands, the other seven in the shared queue.
        let core = try #require((pool.target as? _PoolRouterTarget<Work>)?.core)
        #expect(core.withLock { core.queued } == 7)
        work.advance(by: .nanoseconds(0))
        #expect(log.values.count == 10)
        // Every routee took one message at a time from the queue, in queue order.
        let order = log.values.compactMap { Int($0.split(separator: " ")[1]) }
        #expect(order.sorted() == Array(0..<10))
        for name in ["routee-0", "routee-1", "routee-2"] {
            let mine = handled(by: name, log).compactMap(Int.init)
            #expect(mine == mine.sorted())
            #expect(!mine.isEmpty)
        }
    }

    @Test func aFullQueue_dropsWhatATellBrings_andASendWaitsForRoom() async throws {
        let (system, scheduler) = makeTestSystem()
        let work = TestScheduler()
        let log = Inbox<String>()
        let drops = Inbox<String>()
        system.drops.observeValues { drops.record("\($0.recipient.path) \($0.message)") }
        let pool = try system.spawn(
            Routers.balancingPool(size: 1, queueCapacity: 2, RouterTests.routee(log)).withRouteeProps(Props(scheduler: work)),
            name: "pool")
        scheduler.runDue()
        work.runDue()
        #expect(pool.tell(.job(0)) == .enqueued)     // to the idle routee
        #expect(pool.tell(.job(1)) == .enqueued)     // waits in the queue
        #expect(pool.tell(.job(2)) == .enqueued)     // waits in the queue: now full
        #expect(pool.tell(.job(3)) == .dropped(.mailboxFull(.dropNewest)))
        #expect(drops.values == ["/user/pool job(3)"])

        let core = try #require((pool.target as? _PoolRouterTarget<Work>)?.core)
        let sent = Task { try await pool.send(.job(4)) }
        var turns = 0
        while core.roomWaiters.waitingCount == 0, turns < 100_000 {   // the send is suspended
            await Task.yield()
            turns += 1
        }
        #expect(core.roomWaiters.waitingCount == 1)
        work.runDue()                                 // the routee works through 0, 1, 2: room
        try await sent.value
        work.runDue()
        #expect(handled(by: "routee-0", log) == ["0", "1", "2", "4"])
        #expect(drops.values.count == 1)
    }

    @Test func aBalancingPoolWithAResizer_growsWhenEveryRouteeIsWorking() throws {
        let (system, scheduler) = makeTestSystem()
        let work = TestScheduler()
        let log = Inbox<String>()
        let pool = try system.spawn(
            Routers.balancingPool(size: 2, RouterTests.routee(log))
                .withResizer(Resizer(lowerBound: 2, upperBound: 4, messagesPerResize: 2))
                .withRouteeProps(Props(scheduler: work)),
            name: "pool")
        scheduler.runDue()
        work.runDue()
        for n in 0..<12 {
            pool.tell(.job(n))
            scheduler.runDue()
        }
        #expect(pool.poolSize?.value == 4)
        work.advance(by: .nanoseconds(0))
        #expect(log.values.compactMap { Int($0.split(separator: " ")[1]) }.sorted() == Array(0..<12))
    }
}
