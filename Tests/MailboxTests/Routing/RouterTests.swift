import Testing
@testable import Mailbox

@Suite("Routers")
struct RouterTests {
    enum Work: Sendable, Equatable {
        case job(Int)
        case keyed(String)
        case everyone(String)
        case fail
        case stop
        case stopKeyed(String)
    }

    /// A routee that records "<name> <what>" for each message it handles.
    static func routee(_ log: Inbox<String>, starts: Inbox<String>? = nil, refs: Inbox<ActorRef<Work>>? = nil) -> @Sendable () -> Behavior<Work> {
        {
            .setup { context in
                starts?.record(context.myself.path)
                refs?.record(context.myself)
                return .receive { context, message in
                    let name = context.myself.address.name
                    switch message {
                    case let .job(n): log.record("\(name) \(n)")
                    case let .keyed(key): log.record("\(name) \(key)")
                    case let .everyone(text): log.record("\(name) \(text)")
                    case .fail: throw TestFailure()
                    case .stop, .stopKeyed: return .stopped
                    }
                    return .same
                }
            }
        }
    }

    struct TestFailure: Error {}

    func handled(by name: String, _ log: Inbox<String>) -> [String] {
        log.values.filter { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }

    @Test func roundRobinPool_givesEachRouteeItsTurn_andKeepsEachRouteesOrder() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 4, Self.routee(log)), name: "pool")
        for n in 0..<12 { pool.tell(.job(n)) }
        scheduler.runDue()
        #expect(handled(by: "routee-0", log) == ["0", "4", "8"])
        #expect(handled(by: "routee-1", log) == ["1", "5", "9"])
        #expect(handled(by: "routee-2", log) == ["2", "6", "10"])
        #expect(handled(by: "routee-3", log) == ["3", "7", "11"])
    }

    @Test func randomPool_withASeed_makesTheSameChoicesEveryRun_andUsesEveryRoutee() throws {
        func choices() throws -> [String] {
            let (system, scheduler) = makeTestSystem()
            let log = Inbox<String>()
            let pool = try system.spawn(Routers.pool(size: 3, Self.routee(log)).withRandomRouting(seed: 7), name: "pool")
            for n in 0..<60 { pool.tell(.job(n)) }
            scheduler.runDue()
            return (0..<3).map { handled(by: "routee-\($0)", log).joined(separator: ",") }
        }
        let first = try choices()
        #expect(try choices() == first)
        #expect(first.allSatisfy { !$0.isEmpty }, "60 random choices over 3 routees used them all")
        #expect(first != ["0,3,6", "1,4,7", "2,5,8"])
    }

    @Test func consistentHashing_sendsAKeyToOneRoutee_andADepartureMovesOnlyItsKeys() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let pool = try system.spawn(
            Routers.pool(size: 4, Self.routee(log)).withConsistentHashingRouting { message in
                switch message {
                case let .keyed(key), let .stopKeyed(key): return key
                default: return ""
                }
            }, name: "pool")
        let keys = (0..<200).map { "user-\($0)" }
        func owners(from start: Int = 0) -> [String: String] {
            var owners: [String: String] = [:]
            for line in log.values[start...] {
                let parts = line.split(separator: " ")
                owners[String(parts[1])] = String(parts[0])
            }
            return owners
        }
        for key in keys { pool.tell(.keyed(key)) }
        for key in keys { pool.tell(.keyed(key)) }
        scheduler.runDue()
        let before = owners()
        #expect(before.count == 200)
        #expect(log.values.count == 400)
        // Each key went to one routee both times.
        let pairs = Set(log.values)
        #expect(pairs.count == 200)
        #expect(Set(before.values).count == 4, "every routee owns some keys")

        // routee-2 leaves: stopped by a message keyed with one of its own keys.
        let itsKey = try #require(keys.first { before[$0] == "routee-2" })
        pool.tell(.stopKeyed(itsKey))
        scheduler.runDue()
        let start = log.values.count
        for key in keys { pool.tell(.keyed(key)) }
        scheduler.runDue()
        let after = owners(from: start)
        #expect(after.count == 200)
        for key in keys where before[key] != "routee-2" {
            #expect(after[key] == before[key], "\(key) moved from \(before[key] ?? "?") to \(after[key] ?? "?")")
        }
        #expect(!after.values.contains("routee-2"))
    }

    @Test func broadcastPredicate_sendsThoseMessagesToEveryRoutee() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 3, Self.routee(log)).withBroadcastPredicate { message in
            if case .everyone = message { return true }
            return false
        }, name: "pool")
        pool.tell(.job(1))
        pool.tell(.everyone("hello"))
        pool.tell(.job(2))
        scheduler.runDue()
        #expect(log.values.filter { $0.hasSuffix("hello") }.sorted() == ["routee-0 hello", "routee-1 hello", "routee-2 hello"])
        #expect(handled(by: "routee-0", log) == ["1", "hello"])
        #expect(handled(by: "routee-1", log) == ["hello", "2"])
    }

    @Test func aFailingRoutee_isRestartedInPlace_andThePoolKeepsItsSize() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let starts = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 2, Self.routee(log, starts: starts)), name: "pool")
        pool.tell(.fail)      // routee-0 fails and restarts
        pool.tell(.job(1))    // routee-1
        pool.tell(.job(2))    // routee-0 again, restarted
        scheduler.runDue()
        #expect(starts.values.sorted() == ["/user/pool/routee-0", "/user/pool/routee-0", "/user/pool/routee-1"])
        #expect(handled(by: "routee-0", log) == ["2"])
        #expect(handled(by: "routee-1", log) == ["1"])
    }

    @Test func stoppedRoutees_leaveThePool_andTheRouterStopsWithTheLast() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let pool = try system.spawn(Routers.pool(size: 2, Self.routee(log)).withRouteeSupervision(.stop), name: "pool")
        let terminated = Inbox<String>()
        try recordTerminations(of: pool, into: terminated, in: system)
        pool.tell(.fail)      // routee-0 fails and, under .stop, leaves
        scheduler.runDue()
        for n in 1...3 { pool.tell(.job(n)) }
        scheduler.runDue()
        #expect(handled(by: "routee-1", log) == ["1", "2", "3"])
        #expect(terminated.values.isEmpty)
        pool.tell(.stop)      // routee-1 stops: no routee is left
        scheduler.runDue()
        #expect(terminated.values == ["/user/pool"])
        #expect(pool.tell(.job(4)) == .dropped(.recipientTerminated))
    }

    @Test func stoppingThePool_stopsItsRoutees() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let refs = Inbox<ActorRef<Work>>()
        try system.spawn(Routers.pool(size: 3, Self.routee(log, refs: refs)), name: "pool")
        scheduler.runDue()
        #expect(refs.values.count == 3)
        system.beginShutdown()
        scheduler.runDue()
        for routee in refs.values {
            #expect(routee.tell(.job(1)) == .dropped(.recipientTerminated))
        }
    }

    @Test func routeesWithBoundedMailboxes_dropWhatDoesNotFit_namingTheRoutee() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let drops = Inbox<String>()
        system.drops.observeValues { drops.record($0.recipient.path) }
        let pool = try system.spawn(
            Routers.pool(size: 2, Self.routee(log)).withRouteeProps(Props(mailbox: .bounded(capacity: 1, overflow: .dropNewest))),
            name: "pool")
        scheduler.runDue()
        for n in 0..<6 { pool.tell(.job(n)) }   // the router runs all six before either routee
        scheduler.runDue()
        #expect(handled(by: "routee-0", log) == ["0"])
        #expect(handled(by: "routee-1", log) == ["1"])
        #expect(drops.values.sorted() == ["/user/pool/routee-0", "/user/pool/routee-0", "/user/pool/routee-1", "/user/pool/routee-1"])
        #expect(system.droppedCount == 4)
    }

    @Test func groupRouter_followsTheReceptionistsListing() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        let key = ServiceKey<Work>("work")
        let dead = Inbox<String>()
        system.deadLetters.observeValues { dead.record("\($0.recipient.path) \($0.reason)") }
        let group = try system.spawn(Routers.group(key), name: "group")
        group.tell(.job(0))                 // nobody registered: a dead letter naming the router
        scheduler.runDue()
        #expect(dead.values == ["/user/group no recipient"])

        let a = try system.spawn(Self.routee(log)(), name: "a")
        let b = try system.spawn(Self.routee(log)(), name: "b")
        scheduler.runDue()
        system.receptionist.register(a, with: key)
        system.receptionist.register(b, with: key)
        for n in 1...4 { group.tell(.job(n)) }
        scheduler.runDue()
        #expect(handled(by: "a", log) == ["1", "3"])
        #expect(handled(by: "b", log) == ["2", "4"])

        b.tell(.stop)                        // b terminates and leaves the listing
        scheduler.runDue()
        for n in 5...6 { group.tell(.job(n)) }
        scheduler.runDue()
        #expect(handled(by: "a", log) == ["1", "3", "5", "6"])
        #expect(dead.values == ["/user/group no recipient"])
    }
}
