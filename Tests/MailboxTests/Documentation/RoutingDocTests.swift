import Testing
@testable import Mailbox

/// Every example of docs/Routing.md, run.
@Suite("docs/Routing.md")
struct RoutingDocTests {
    enum Job: Sendable {
        case work(Int)
        case stop
    }

    func worker(log: Recorder) -> Behavior<Job> {
        .receive { context, message in
            switch message {
            case let .work(n):
                log.record("\(context.myself.path) \(n)")
                return .same
            case .stop:
                return .stopped
            }
        }
    }

    @Test func aPoolRouter() throws {
        let (system, scheduler, log) = docTestSystem()
        let pool = try system.spawn(Routers.pool(size: 3) { worker(log: log) }, name: "pool")
        for job in 1...6 { pool.tell(.work(job)) }
        scheduler.advance(by: .nanoseconds(0))
        // log.all.sorted() == ["/user/pool/routee-0 1", "/user/pool/routee-0 4", "/user/pool/routee-1 2",
        //                      "/user/pool/routee-1 5", "/user/pool/routee-2 3", "/user/pool/routee-2 6"]
        #expect(log.all.sorted() == ["/user/pool/routee-0 1", "/user/pool/routee-0 4", "/user/pool/routee-1 2",
                                     "/user/pool/routee-1 5", "/user/pool/routee-2 3", "/user/pool/routee-2 6"])
    }

    @Test func anElasticPool() throws {
        let (system, scheduler, log) = docTestSystem()
        let work = TestScheduler()     // the routees' scheduler: here they fall behind until it runs
        let pool = try system.spawn(
            Routers.pool(size: 2) { worker(log: log) }
                .withResizer(Resizer(lowerBound: 2, upperBound: 4, messagesPerResize: 2))
                .withRouteeProps(Props(scheduler: work)),
            name: "elastic")
        scheduler.advance(by: .nanoseconds(0))          // the router starts with 2 routees
        for job in 1...8 {
            pool.tell(.work(job))
            scheduler.advance(by: .nanoseconds(0))      // the router samples every 2 messages
        }
        // pool.poolSize?.value == 4: every routee was busy, so the pool grew to its upper bound
        work.advance(by: .nanoseconds(0))               // the routees catch up: all 8 handled
        #expect(pool.poolSize?.value == 4)
        #expect(log.all.count == 8)
    }

    @Test func theReceptionist() throws {
        let (system, scheduler, log) = docTestSystem()
        let workers = ServiceKey<Job>("workers")
        let w1 = try system.spawn(worker(log: log), name: "w1")
        let w2 = try system.spawn(worker(log: log), name: "w2")
        system.receptionist.register(w1, with: workers)
        system.receptionist.register(w2, with: workers)
        system.receptionist.register(w1, with: workers)   // already registered: nothing changes
        // system.receptionist.find(workers) == [w1, w2]
        #expect(system.receptionist.find(workers) == [w1, w2])

        let sizes = Recorder()
        system.receptionist.listing(for: workers).producer.startWithValues { sizes.record("\($0.count)") }
        w2.tell(.stop)                              // w2 terminates...
        scheduler.advance(by: .nanoseconds(0))      // ...and leaves the listing
        // sizes.all == ["2", "1"]
        #expect(sizes.all == ["2", "1"])

        system.receptionist.register(try system.spawn(worker(log: log), name: "w3"), with: workers)
let listed = system.receptionist.find(workers).sorted { $0.path < $1.path }
        for (index, job) in (1...4).enumerated() {
            listed[index % listed.count].tell(.work(job))   // round-robin by hand
        }
        scheduler.advance(by: .nanoseconds(0))
        // log.all.sorted() == ["/user/w1 1", "/user/w1 3", "/user/w3 2", "/user/w3 4"]   (no order between actors)
        #expect(log.all.sorted() == ["/user/w1 1", "/user/w1 3", "/user/w3 2", "/user/w3 4"])
    }

    @Test func snippetsOfTheDoc_appearInTheseTests() throws {
        try docExpectSnippets(of: "docs/Routing.md", count: 5, inTestFile: #filePath)
    }
}
