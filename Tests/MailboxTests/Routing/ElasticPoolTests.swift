import Dispatch
import Foundation
import Testing
@testable import Mailbox

/// Pool routers that route on the sender's thread, smallest-mailbox routing, and resizers.
@Suite("Elastic pools")
struct ElasticPoolTests {
    typealias Work = RouterTests.Work

    /// A routee that records "<name> <n>" for each job; fails for `.fail`.
    static func routee(_ log: Inbox<String>, refs: Inbox<ActorRef<Work>>? = nil) -> @Sendable () -> Behavior<Work> {
        RouterTests.routee(log, refs: refs)
    }

    func handled(by name: String, _ log: Inbox<String>) -> [String] {
        log.values.filter { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }

    /// The numbers each routee handled, by routee name.
    func byRoutee(_ log: Inbox<String>) -> [String: [Int]] {
        var result: [String: [Int]] = [:]
        for line in log.values {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let n = Int(parts[1]) else { continue }
            result[String(parts[0]), default: []].append(n)
        }
        return result
    }

    // MARK: Routing on the sender's thread

    @Test func messagesReachTheRoutees_withoutTheRoutersOwnRun() throws {
        let (system, scheduler) = makeTestSystem()
        let routerScheduler = StepScheduler()
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 2, Self.routee(log)), name: "pool", props: Props(scheduler: routerScheduler))
        routerScheduler.runAll()           // the router starts: its routees exist
        scheduler.runDue()
        for n in 0..<4 { pool.tell(.job(n)) }
        #expect(routerScheduler.queued == 0)   // nothing went through the router's mailbox
        scheduler.runDue()
        #expect(handled(by: "routee-0", log) == ["0", "2"])
        #expect(handled(by: "routee-1", log) == ["1", "3"])
    }

    @Test func messagesSentBeforeTheFirstRoutees_waitForThem_andKeepTheirOrderWithThoseSentAfter() throws {
        let (system, scheduler) = makeTestSystem()
        let routerScheduler = StepScheduler()
        let log = Inbox<String>()
        let dead = Inbox<String>()
        system.deadLetters.observeValues { dead.record("\($0)") }
        let pool = try system.spawn(Routers.pool(size: 2, Self.routee(log)), name: "pool", props: Props(scheduler: routerScheduler))
        for n in 0..<4 { #expect(pool.tell(.job(n)) == .enqueued) }   // no routee yet: they wait
        scheduler.runDue()
        #expect(log.values.isEmpty)
        routerScheduler.runAll()                 // the routees exist: the four are routed first
        for n in 4..<6 { pool.tell(.job(n)) }
        scheduler.runDue()
        #expect(handled(by: "routee-0", log) == ["0", "2", "4"])
        #expect(handled(by: "routee-1", log) == ["1", "3", "5"])
        #expect(dead.values.isEmpty)
    }

    @Test func aPoolStoppedRightAfterItsStart_accountsForEveryMessage() throws {
        let (system, scheduler) = makeTestSystem()
        let routerScheduler = StepScheduler()
        let dead = Inbox<String>()
        system.deadLetters.observeValues { dead.record("\($0.recipient.path) \($0.message)") }
        let pool = try system.spawn(Routers.pool(size: 2) { Behavior<Int>.ignore }, name: "pool", props: Props(scheduler: routerScheduler))
        pool.tell(1)
        pool.tell(2)
        system.beginShutdown()                   // stopped in its first run, right after its start
        routerScheduler.runAll()                 // the two waiting went to the routees...
        scheduler.runDue()                       // ...which stopped before handling them
        routerScheduler.runAll()                 // the router hears of it and terminates
        #expect(pool.tell(3) == .dropped(.recipientTerminated))
        #expect(dead.values == ["/user/pool/routee-0 1", "/user/pool/routee-1 2", "/user/pool 3"])
    }

    @Test func thePoolsRef_watchesStopsAndComparesAsItsRoutersActor() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let events = Inbox<String>()
        let plain = try system.spawn(Behavior<Work>.ignore, name: "plain")
        #expect(plain.poolSize == nil)
        try system.spawn(Behavior<Int>.setup { context in
            let pool = try context.spawn(Routers.pool(size: 2, Self.routee(log)), name: "pool")
            events.record("size \(pool.poolSize?.value ?? -1)")
            context.watch(pool)
            return Behavior<Int>.receiveMessage { _ in
                try context.stop(pool)
                return .same
            }.receiveLifecycle { _, event in
                if case let .terminated(ref) = event {
                    events.record("terminated \(ref.path) same=\(ref == pool.asAny) is=\(ref.is(pool))")
                }
                return .same
            }
        }, name: "parent").tell(1)
        scheduler.runDue()
        #expect(events.values == ["size 0", "terminated /user/parent/pool same=true is=true"])
    }

    // MARK: Smallest mailbox

    @Test func smallestMailbox_skipsTheBusyRoutee_andRotatesTies() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let refs = Inbox<ActorRef<Work>>()
        let pool = try system.spawn(Routers.pool(size: 3, Self.routee(log, refs: refs)).withSmallestMailboxRouting(), name: "pool")
        scheduler.runDue()
        let first = try #require(refs.values.first { $0.path.hasSuffix("routee-0") })
        for n in 100..<105 { first.tell(.job(n)) }   // routee-0 has five messages queued
        for n in 0..<4 { pool.tell(.job(n)) }
        scheduler.runDue()
        #expect(handled(by: "routee-0", log) == ["100", "101", "102", "103", "104"])
        #expect(handled(by: "routee-1", log) == ["0", "2"])
        #expect(handled(by: "routee-2", log) == ["1", "3"])
    }

    // MARK: The resizer

    @Test func resizerArithmetic_followsAkkasDefaultResizer() {
        let resizer = Resizer(lowerBound: 2, upperBound: 10)
        #expect(resizer.change(size: 4, busy: 4) == 1)    // all busy: ceil(0.2 × 4)
        #expect(resizer.change(size: 10, busy: 10) == 0)  // at the upper bound
        #expect(resizer.change(size: 4, busy: 2) == 0)    // half busy: keep
        #expect(resizer.change(size: 10, busy: 2) == -1)  // 20 % busy: floor(0.1 × 10)
        #expect(resizer.change(size: 3, busy: 0) == -1)   // at least one
        #expect(resizer.change(size: 2, busy: 0) == 0)    // at the lower bound
        #expect(resizer.change(size: 1, busy: 0) == 1)    // below it (a routee left): back to it
        #expect(Resizer(upperBound: 20, rampupRate: 0.5).change(size: 5, busy: 5) == 3)
        #expect(Resizer(lowerBound: 1, backoffRate: 0.5).change(size: 8, busy: 1) == -4)
        #expect(Resizer(lowerBound: 3, upperBound: 5).initialSize(1) == 3)
        #expect(Resizer(lowerBound: 3, upperBound: 5).initialSize(9) == 5)
    }

    /// A pool whose router runs on `scheduler` and whose routees run on `work`: the test decides
    /// when routees handle their messages, and so how busy they look to the resizer.
    func elasticPool(
        _ resizer: Resizer, size: Int, log: Inbox<String>
    ) throws -> (ActorSystem, pool: ActorRef<Work>, router: TestScheduler, work: TestScheduler, resizes: Inbox<PoolResized>, dead: Inbox<String>) {
        let (system, scheduler) = makeTestSystem()
        let work = TestScheduler()
        let resizes = Inbox<PoolResized>()
        let dead = Inbox<String>()
        system.events.observeValues { event in
            if case let .poolResized(resize) = event { resizes.record(resize) }
        }
        system.deadLetters.observeValues { dead.record("\($0)") }
        let pool = try system.spawn(
            Routers.pool(size: size, Self.routee(log)).withResizer(resizer).withRouteeProps(Props(scheduler: work)),
            name: "pool")
        scheduler.runDue()
        work.runDue()
        return (system, pool, scheduler, work, resizes, dead)
    }

    @Test func aLoadStepUp_growsThePoolToItsBound_andAStepDownShrinksItBack_losingNothing() throws {
        let log = Inbox<String>()
        let (_, pool, router, work, resizes, dead) = try elasticPool(
            Resizer(lowerBound: 2, upperBound: 6, messagesPerResize: 4), size: 2, log: log)
        let sizes = Inbox<Int>()
        pool.poolSize?.producer.startWithValues { sizes.record($0) }
        var sent = 0
        // Step up: routees do not keep up (their scheduler does not run), so every sample finds
        // every routee busy.
        for _ in 0..<10 {
            for _ in 0..<4 { pool.tell(.job(sent)); sent += 1 }
            router.runDue()
        }
        #expect(pool.poolSize?.value == 6)
        #expect(resizes.values.map(\.to) == [3, 4, 5, 6])
        work.runDue()
        // Step down: each message is handled before the next is sent: nobody is busy.
        for _ in 0..<40 {
            pool.tell(.job(sent)); sent += 1
            work.runDue()
            router.runDue()
        }
        router.advance(by: .milliseconds(5))   // retired routees found empty, and stopped
        work.runDue()
        router.runDue()
        #expect(pool.poolSize?.value == 2)
        #expect(resizes.values.map(\.to) == [3, 4, 5, 6, 5, 4, 3, 2])
        #expect(sizes.values == [2, 3, 4, 5, 6, 5, 4, 3, 2])
        // Nothing lost or handled twice; each routee handled its messages in order.
        let handledNumbers = byRoutee(log)
        #expect(handledNumbers.values.flatMap { $0 }.sorted() == Array(0..<sent))
        for (name, numbers) in handledNumbers {
            #expect(numbers == numbers.sorted(), "\(name) handled out of order: \(numbers)")
        }
        #expect(dead.values.isEmpty)
    }

    @Test func aRetiredRoutee_finishesEveryMessageItAccepted_thenStops() throws {
        let log = Inbox<String>()
        let (system, pool, router, work, resizes, dead) = try elasticPool(
            Resizer(lowerBound: 1, upperBound: 4, pressureThreshold: 3, messagesPerResize: 4), size: 4, log: log)
        let stopped = Inbox<String>()
        system.events.observeValues { if case let .stopped(address) = $0 { stopped.record(address.path) } }
        for n in 0..<4 { pool.tell(.job(n)) }   // one each: nobody counts as busy (threshold 3)
        router.runDue()                          // the sample retires routee-3, which holds job 3
        #expect(resizes.values.map(\.to) == [3])
        #expect(stopped.values.isEmpty)          // not while job 3 waits
        for n in 4..<10 { pool.tell(.job(n)) }  // none of these reach routee-3
        router.advance(by: .milliseconds(3))
        #expect(stopped.values.isEmpty)
        work.runDue()                            // everything handled, job 3 by routee-3
        router.advance(by: .milliseconds(64))    // routee-3 is found empty (the checks back off
                                                 // while it is busy: 1, 2, 4, … 64 ms) and stopped
        work.runDue()
        router.runDue()
        #expect(handled(by: "routee-3", log) == ["3"])
        #expect(stopped.values == ["/user/pool/routee-3"])
        #expect(byRoutee(log).values.flatMap { $0 }.sorted() == Array(0..<10))
        #expect(dead.values.isEmpty)
        // The second sample found the three left all busy (three jobs each) and grew the pool
        // again, with a new routee: routee-3's name stays with the retired actor.
        #expect(resizes.values.map(\.to) == [3, 4])
        #expect(pool.poolSize?.value == 4)
        work.runDue()                            // routee-4 starts
        for n in 10..<14 { pool.tell(.job(n)) }
        work.runDue()
        #expect(handled(by: "routee-4", log).count == 1)
    }

    @Test func theCooldown_spacesResizes_onTheRoutersClock() throws {
        let log = Inbox<String>()
        let (_, pool, router, _, resizes, _) = try elasticPool(
            Resizer(lowerBound: 1, upperBound: 10, messagesPerResize: 1, cooldown: .seconds(1)), size: 1, log: log)
        for n in 0..<5 { pool.tell(.job(n)); router.runDue() }
        #expect(resizes.values.map(\.to) == [2])      // one resize, then the cool-down
        router.advance(by: .seconds(1))
        pool.tell(.job(5)); router.runDue()
        #expect(resizes.values.map(\.to) == [2, 3])
    }

    @Test(arguments: [UInt64(1), 2, 3, 42, 2026])
    func faultsWhileResizing_keepEveryInvariant(seed: UInt64) throws {
        print("faultsWhileResizing seed \(seed)")
        var random = SplitMix64(seed: seed)
        let log = Inbox<String>()
        let resizer = Resizer(lowerBound: 2, upperBound: 7, messagesPerResize: 3)
        let (system, pool, router, work, resizes, dead) = try elasticPool(resizer, size: 3, log: log)
        let failures = Inbox<String>()
        system.events.observeValues { if case let .failed(address, _) = $0 { failures.record(address.path) } }
        var sent = 0
        var failing = 0
        for _ in 0..<400 {
            if random.next() % 10 == 0 {
                pool.tell(.fail); failing += 1
            } else {
                pool.tell(.job(sent)); sent += 1
            }
            switch random.next() % 6 {
            case 0: router.runDue()
            case 1: work.runDue()
            case 2: router.advance(by: .milliseconds(1))
            default: break   // let work pile up
            }
            let size = pool.poolSize?.value ?? 0
            #expect(size >= resizer.lowerBound && size <= resizer.upperBound)
        }
        for _ in 0..<5 {
            work.runDue()
            router.advance(by: .milliseconds(2))
        }
        // Every job handled once, in order per routee; every failure seen and supervised (the
        // failing message is dropped by the restart, as in Akka); nothing dead-lettered.
        let handledNumbers = byRoutee(log)
        #expect(handledNumbers.values.flatMap { $0 }.sorted() == Array(0..<sent))
        for numbers in handledNumbers.values { #expect(numbers == numbers.sorted()) }
        #expect(failures.values.count == failing)
        #expect(dead.values.isEmpty)
        #expect(!resizes.values.isEmpty)
        for resize in resizes.values {
            #expect(resize.to >= resizer.lowerBound && resize.to <= resizer.upperBound)
        }
    }

    // MARK: Re-entrance and threads

    @Test func aRouteeTellingItsPool_onItsOwnThread_neitherDeadlocksNorLosesAMessage() throws {
        let system = ActorSystem(name: "inline", configuration: .init(scheduler: ImmediateScheduler(), timerScheduler: TestScheduler(), logHandler: nil))
        let log = Inbox<String>()
        let holder = LockedValueBox<ActorRef<Int>?>(nil)
        let pool = try system.spawn(Routers.pool(size: 3) {
            Behavior<Int>.receive { context, n in
                log.record("\(context.name) \(n)")
                if n > 0, let pool = holder.withLockedValue({ $0 }) {
                    pool.tell(n - 1)                       // re-enters the pool on this thread
                    _ = pool.poolSize?.value                // and reads its size
                }
                return .same
            }
        }.withResizer(Resizer(lowerBound: 3, upperBound: 5, messagesPerResize: 2)), name: "pool")
        holder.withLockedValue { $0 = pool }
        let observed = Inbox<Int>()
        pool.poolSize?.signal.observeValues { size in
            observed.record(size)
            pool.tell(0)                                   // an observer of the size tells the pool
        }
        pool.tell(9)
        #expect(byRoutee(log).values.flatMap { $0 }.filter { $0 > 0 }.sorted() == Array(1...9))
        #expect(log.values.count == 10 + observed.values.count)
        _ = system
    }

    @Test func manySendersOnThePool_eachSendersMessagesKeepTheirOrderPerRoutee() async throws {
        let system = ActorSystem(name: "threads")
        let senders = 2
        let perSender = 5_000
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 3) {
            Behavior<Int>.receive { context, n in
                log.record("\(context.name) \(n)")
                return .same
            }
        }.withResizer(Resizer(lowerBound: 2, upperBound: 6, messagesPerResize: 50)), name: "pool")
        DispatchQueue.concurrentPerform(iterations: senders) { sender in
            for i in 0..<perSender { pool.tell(sender * 1_000_000 + i) }
        }
        #expect(await log.waitForCount(senders * perSender))
        let handledNumbers = byRoutee(log)
        #expect(handledNumbers.values.flatMap { $0 }.count == senders * perSender)
        #expect(Set(handledNumbers.values.flatMap { $0 }).count == senders * perSender)
        for numbers in handledNumbers.values {
            for sender in 0..<senders {
                let mine = numbers.filter { $0 / 1_000_000 == sender }
                #expect(mine == mine.sorted())
            }
        }
        await system.shutdown()
    }
}

/// A scheduler that runs nothing until told, one action at a time.
final class StepScheduler: Scheduler, Sendable {
    private let actions = LockedValueBox<[@Sendable () -> Void]>([])

    func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        actions.withLockedValue { $0.append(action) }
        return nil
    }

    /// Actions waiting.
    var queued: Int { actions.withLockedValue { $0.count } }

    /// Runs the oldest action, if any.
    func runOne() {
        let action = actions.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
        action?()
    }

    /// Runs actions until none is left.
    func runAll() {
        while queued > 0 { runOne() }
    }
}
