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
        #expect(await sendIsSuspended(core))
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

/// What a review of the elastic pools found (each failed on the first version).
@Suite("Pools: review regressions")
struct PoolReviewRegressionTests {
    typealias Work = RouterTests.Work

    @Test func sendToAPoolThatRoutesByLogic_routesAtOnce() async throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 2, RouterTests.routee(log)), name: "pool")
        scheduler.runDue()
        try await pool.send(.job(1))                  // used to suspend until the pool stopped
        try await pool.send(.job(2))
        scheduler.runDue()
        #expect(log.values.sorted() == ["routee-0 1", "routee-1 2"])
    }

    @Test func aSendWaitingForRoom_resumesWhenAGrowingPoolsNewRouteesTakeTheQueue() async throws {
        let (system, scheduler) = makeTestSystem()
        let work = TestScheduler()
        let log = Inbox<String>()
        let pool = try system.spawn(
            Routers.balancingPool(size: 1, queueCapacity: 2, RouterTests.routee(log))
                .withResizer(Resizer(lowerBound: 1, upperBound: 3, rampupRate: 2, messagesPerResize: 3))
                .withRouteeProps(Props(scheduler: work)),
            name: "pool")
        scheduler.runDue()
        work.runDue()
        for n in 0..<3 { pool.tell(.job(n)) }        // one in hand, two waiting: full; a sample asked
        let core = try #require((pool.target as? _PoolRouterTarget<Work>)?.core)
        let sent = Task { try await pool.send(.job(3)) }
        #expect(await sendIsSuspended(core))
        scheduler.runDue()                           // the sample grows the pool: new routees take 1 and 2
        try await sent.value                         // ...which made room for the suspended send
        work.advance(by: .nanoseconds(0))
        #expect(log.values.compactMap { Int($0.split(separator: " ")[1]) }.sorted() == [0, 1, 2, 3])
    }

    @Test func aBalancingRouteeInRestartBackOff_isNotHandedMoreWork() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let dead = Inbox<String>()
        system.deadLetters.observeValues { dead.record("\($0)") }
        system.drops.observeValues { dead.record("\($0)") }
        let pool = try system.spawn(
            Routers.balancingPool(size: 2, RouterTests.routee(log))
                .withRouteeSupervision(.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(1), randomFactor: 0)),
            name: "pool")
        scheduler.runDue()
        pool.tell(.fail)                             // routee-0 fails: backing off for 1 s
        scheduler.runDue()
        for n in 0..<6 { pool.tell(.job(n)); scheduler.runDue() }
        // routee-1 did everything; routee-0, restarting, was handed nothing.
        #expect(log.values == (0..<6).map { "routee-1 \($0)" })
        scheduler.advance(by: .seconds(1))
        for n in 6..<8 { pool.tell(.job(n)) }
        scheduler.runDue()
        #expect(log.values.count == 8)
        #expect(dead.values.isEmpty)
    }

    @Test func theLastActiveRouteeStoppingWhileAnotherRetires_stopsTheRouterOnceBothAreGone() throws {
        let (system, scheduler) = makeTestSystem()
        let work = TestScheduler()
        let log = Inbox<String>()
        let terminated = Inbox<String>()
        let pool = try system.spawn(
            Routers.pool(size: 2, RouterTests.routee(log))
                .withResizer(Resizer(lowerBound: 1, upperBound: 2, pressureThreshold: 5, messagesPerResize: 2))
                .withRouteeProps(Props(scheduler: work)),
            name: "pool")
        try recordTerminations(of: pool, into: terminated, in: system)
        scheduler.runDue()
        work.runDue()
        pool.tell(.job(0))                           // to routee-0
        pool.tell(.job(1))                           // to routee-1; a sample: nobody busy
        scheduler.runDue()                           // routee-1 (holding job 1) retires
        #expect(pool.poolSize?.value == 1)
        pool.tell(.stop)                             // routee-0, the last active one, stops
        work.runDue()
        scheduler.runDue()
        #expect(terminated.values.isEmpty)           // routee-1 still finishing
        scheduler.advance(by: .milliseconds(64))     // routee-1 found empty and stopped
        work.runDue()
        scheduler.runDue()
        #expect(log.values.sorted() == ["routee-0 0", "routee-1 1"])
        #expect(terminated.values == ["/user/pool"])
    }

    @Test func anObserverOfThePoolsSize_mayTellThePool_onTheRoutersThread() throws {
        // Timers on virtual time: the retire checks must not run the router on a timer thread
        // meanwhile (they would make the sizes seen here depend on timing).
        let system = ActorSystem(name: "inline", configuration: .init(
            scheduler: ImmediateScheduler(), timerScheduler: TestScheduler(), logHandler: nil))
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 3) {
            Behavior<Int>.receive { context, n in
                log.record("\(context.name) \(n)")
                return .same
            }
        }.withResizer(Resizer(lowerBound: 1, upperBound: 3, messagesPerResize: 2)), name: "pool")
        let observed = Inbox<Int>()
        pool.poolSize?.signal.observeValues { size in
            observed.record(size)
            pool.tell(100 + size)                    // re-enters the pool from the size observer
        }
        for n in 0..<8 { pool.tell(n) }              // inline routees are never busy: it shrinks
        #expect(observed.values == [2, 1])
        #expect(log.values.count == 8 + 2)
        #expect(log.values.contains { $0.hasSuffix(" 102") } && log.values.contains { $0.hasSuffix(" 101") })
    }

    @Test func hugeDurations_areClampedNotTrapped() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let timerOwner = try system.spawn(Behavior<String>.setup { context in
            context.timers.startSingleTimer(key: "far", message: "far", delay: .seconds(1e19))
            return .receiveMessage { message in
                log.record(message)
                return .same
            }
        }, name: "far")
        scheduler.runDue()
        timerOwner.tell("near")
        scheduler.runDue()
        #expect(log.values == ["near"])              // alive; the far timer never fires here
    }

    @Test func aRunLengthSetAfterInit_isCheckedAtSpawn() {
        let (system, _) = makeTestSystem()
        var props = Props()
        props.runLength = 0
        #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<Int>.ignore, name: "x", props: props) }
    }
}

/// Whether a `send` to the pool whose core this is has suspended for room (yields until one has,
/// a bounded number of times: the sending task runs on the cooperative pool).
func sendIsSuspended<Message>(_ core: _PoolRouterCore<Message>) async -> Bool {
    var turns = 0
    while core.roomWaiters.waitingCount == 0, turns < 100_000 {
        await Task.yield()
        turns += 1
    }
    return core.roomWaiters.waitingCount == 1
}

/// Spawns an actor that watches `ref` and records the path of its termination.
func recordTerminations<Message>(of ref: ActorRef<Message>, into terminated: Inbox<String>, in system: ActorSystem) throws {
    try system.spawn(Behavior<Int>.setup { context in
        context.watch(ref)
        return .receiveLifecycle { _, event in
            if case let .terminated(ref) = event { terminated.record(ref.path) }
            return .same
        }
    }, name: "watcher")
}
