import Dispatch
import Testing
@testable import Mailbox

@Suite("Receptionist")
struct ReceptionistTests {
    enum Job: Sendable, Equatable {
        case work(Int)
        case stop
    }

    static func worker(_ log: Inbox<String>? = nil) -> Behavior<Job> {
        .receive { context, message in
            switch message {
            case let .work(n):
                log?.record("\(context.myself.path) \(n)")
                return .same
            case .stop:
                return .stopped
            }
        }
    }

    static let workers = ServiceKey<Job>("workers")

    @Test func registeredActors_areFound_andRegisteringTwiceChangesNothing() throws {
        let (system, scheduler) = makeTestSystem()
        let a = try system.spawn(Self.worker(), name: "a")
        let b = try system.spawn(Self.worker(), name: "b")
        scheduler.runDue()
        #expect(system.receptionist.find(Self.workers).isEmpty)
        system.receptionist.register(a, with: Self.workers)
        system.receptionist.register(b, with: Self.workers)
        system.receptionist.register(a, with: Self.workers)
        #expect(system.receptionist.find(Self.workers) == [a, b])
        system.receptionist.deregister(a, from: Self.workers)
        system.receptionist.deregister(a, from: Self.workers)
        #expect(system.receptionist.find(Self.workers) == [b])
    }

    @Test func keysWithTheSameIdButAnotherMessageType_areDifferentServices() throws {
        let (system, scheduler) = makeTestSystem()
        let a = try system.spawn(Self.worker(), name: "a")
        let text = try system.spawn(Behavior<String>.ignore, name: "text")
        scheduler.runDue()
        system.receptionist.register(a, with: ServiceKey<Job>("svc"))
        system.receptionist.register(text, with: ServiceKey<String>("svc"))
        #expect(system.receptionist.find(ServiceKey<Job>("svc")) == [a])
        #expect(system.receptionist.find(ServiceKey<String>("svc")) == [text])
        #expect(ServiceKey<Job>("svc").description == "ServiceKey<Job>(svc)")
    }

    @Test func aTerminatedActor_isDeregisteredAutomatically() throws {
        let (system, scheduler) = makeTestSystem()
        let a = try system.spawn(Self.worker(), name: "a")
        let b = try system.spawn(Self.worker(), name: "b")
        scheduler.runDue()
        system.receptionist.register(a, with: Self.workers)
        system.receptionist.register(b, with: Self.workers)
        a.tell(.stop)
        scheduler.runDue()
        #expect(system.receptionist.find(Self.workers) == [b])
    }

    @Test func registeringAnActorThatHasTerminated_leavesItOut() throws {
        let (system, scheduler) = makeTestSystem()
        let a = try system.spawn(Self.worker(), name: "a")
        a.tell(.stop)
        scheduler.runDue()
        system.receptionist.register(a, with: Self.workers)
        scheduler.runDue()
        #expect(system.receptionist.find(Self.workers).isEmpty)
    }

    @Test func theListingProperty_followsEveryChange_inOrder() throws {
        let (system, scheduler) = makeTestSystem()
        let listing = system.receptionist.listing(for: Self.workers)
        let sizes = Inbox<Int>()
        listing.producer.startWithValues { sizes.record($0.count) }
        let a = try system.spawn(Self.worker(), name: "a")
        let b = try system.spawn(Self.worker(), name: "b")
        scheduler.runDue()
        system.receptionist.register(a, with: Self.workers)
        system.receptionist.register(b, with: Self.workers)
        b.tell(.stop)
        scheduler.runDue()
        system.receptionist.deregister(a, from: Self.workers)
        #expect(sizes.values == [0, 1, 2, 1, 0])
        #expect(listing.value.isEmpty)
    }

    @Test func anActorSubscriber_getsTheListingNowAndAfterEachChange_untilItTerminates() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<[String]>()
        let subscriber = try system.spawn(Behavior<Receptionist.Listing<Job>>.receiveMessage { listing in
            seen.record(listing.refs.map(\.path).sorted())
            return listing.refs.count == 2 ? .stopped : .same
        }, name: "subscriber")
        system.receptionist.subscribe(Self.workers, subscriber)
        let a = try system.spawn(Self.worker(), name: "a")
        let b = try system.spawn(Self.worker(), name: "b")
        scheduler.runDue()
        system.receptionist.register(a, with: Self.workers)
        scheduler.runDue()
        system.receptionist.register(b, with: Self.workers)
        scheduler.runDue()
        let deadLetters = system.deadLetterCount
        system.receptionist.deregister(b, from: Self.workers)
        scheduler.runDue()
        #expect(seen.values == [[], ["/user/a"], ["/user/a", "/user/b"]])
        #expect(system.deadLetterCount == deadLetters, "no listing is told to a terminated subscriber")
    }

    /// Re-entrance: an observer of a listing that registers and looks up (same thread) gets
    /// the nested change depth-first, and nothing deadlocks.
    @Test func anObserverOfAListing_mayRegisterAndFind() throws {
        let (system, scheduler) = makeTestSystem()
        let a = try system.spawn(Self.worker(), name: "a")
        let b = try system.spawn(Self.worker(), name: "b")
        scheduler.runDue()
        let receptionist = system.receptionist
        let seen = Inbox<Int>()
        receptionist.listing(for: Self.workers).signal.observeValues { refs in
            seen.record(refs.count)
            if refs == [a] {
                receptionist.register(b, with: Self.workers)
                seen.record(receptionist.find(Self.workers).count * 10)
            }
        }
        receptionist.register(a, with: Self.workers)
        #expect(seen.values == [1, 2, 20])
        #expect(receptionist.find(Self.workers) == [a, b])
    }

    /// Registrations from several threads at once: the listing ends as the table does (an
    /// older snapshot never overwrites a newer one).
    @Test func concurrentRegistrations_leaveTheListingEqualToTheRegistrations() throws {
        let (system, scheduler) = makeTestSystem()
        let refs = try (0..<64).map { try system.spawn(Self.worker(), name: "w\($0)") }
        scheduler.runDue()
        let receptionist = system.receptionist
        let listing = receptionist.listing(for: Self.workers)
        for _ in 0..<20 {
            DispatchQueue.concurrentPerform(iterations: refs.count) { index in
                receptionist.register(refs[index], with: Self.workers)
                if index.isMultiple(of: 2) { receptionist.deregister(refs[index], from: Self.workers) }
            }
            let expected = Set(refs.enumerated().filter { !$0.offset.isMultiple(of: 2) }.map(\.element))
            #expect(receptionist.find(Self.workers) == expected)
            #expect(listing.value == expected)
            DispatchQueue.concurrentPerform(iterations: refs.count) { index in
                receptionist.deregister(refs[index], from: Self.workers)
            }
            #expect(listing.value.isEmpty)
        }
    }

    @Test func registeredActors_canBeSentWork_fromAFoundListing() throws {
        let (system, scheduler) = makeTestSystem()
        let log = Inbox<String>()
        for name in ["a", "b"] {
            system.receptionist.register(try system.spawn(Self.worker(log), name: name), with: Self.workers)
        }
        for ref in system.receptionist.find(Self.workers) { ref.tell(.work(1)) }
        scheduler.runDue()
        #expect(log.values.sorted() == ["/user/a 1", "/user/b 1"])
    }
}
