import Testing
@testable import Mailbox

/// Message adapters as Akka Typed keeps them: one per message type, replaced on re-registration,
/// the newest matching one wins for subtypes, and a throwing adapter fails its owner.
@Suite("Message adapters")
struct MessageAdapterTests {
    enum Message: Sendable, Equatable {
        case register(String)
        case got(String)
        case registerThrowing
    }

    class Animal: @unchecked Sendable { let name: String; init(_ name: String) { self.name = name } }
    final class Dog: Animal, @unchecked Sendable {}

    struct AdapterError: Error {}

    final class Refs: @unchecked Sendable {
        // Written inside the actor's handlers, read after `runDue()` on the test thread (the
        // TestScheduler runs the handlers there).
        var text: [ActorRef<String>] = []
        var animal: ActorRef<Animal>?
        var dog: ActorRef<Dog>?
    }

    func owner(seen: Inbox<String>, refs: Refs) -> Behavior<Message> {
        .receive { context, message in
            switch message {
            case let .register(prefix):
                refs.text.append(context.messageAdapter { (text: String) in .got("\(prefix) \(text)") })
            case .registerThrowing:
                refs.text.append(context.messageAdapter { (text: String) -> Message in
                    if text == "bad" { throw AdapterError() }
                    return .got(text)
                })
            case let .got(text):
                seen.record(text)
            }
            return .same
        }
    }

    @Test func registeringAgain_replacesTheFunction_andTheOldRefUsesTheNewOne() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let refs = Refs()
        let ref = try system.spawn(owner(seen: seen, refs: refs), name: "owner")
        ref.tell(.register("first"))
        ref.tell(.register("second"))
        scheduler.runDue()
        #expect(refs.text.count == 2)
        #expect(refs.text[0] == refs.text[1])  // one adapter per type: the same ref
        refs.text[0].tell("hello")
        scheduler.runDue()
        #expect(seen.values == ["second hello"])
    }

    @Test func registeringInEveryHandler_doesNotGrowTheAdapters() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let refs = Refs()
        let ref = try system.spawn(owner(seen: seen, refs: refs), name: "owner")
        for index in 0..<100 { ref.tell(.register("v\(index)")) }
        scheduler.runDue()
        #expect(Set(refs.text).count == 1)
        #expect(refs.text[0].path.hasSuffix("$adapter1"))
    }

    @Test func theNewestMatchingAdapter_winsForASubtype() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let refs = Refs()
        let ref = try system.spawn(Behavior<Message>.setup { context in
            refs.dog = context.messageAdapter { (dog: Dog) in .got("dog adapter: \(dog.name)") }
            refs.animal = context.messageAdapter { (animal: Animal) in .got("animal adapter: \(animal.name)") }
            return .receiveMessage { message in
                if case let .got(text) = message { seen.record(text) }
                return .same
            }
        }, name: "zoo")
        scheduler.runDue()
        _ = ref
        // A Dog sent through the Animal ref: the Animal adapter is newer, so it wins.
        refs.animal?.tell(Dog("rex"))
        refs.dog?.tell(Dog("fido"))
        refs.animal?.tell(Animal("cat"))
        scheduler.runDue()
        #expect(seen.values == ["animal adapter: rex", "animal adapter: fido", "animal adapter: cat"])
    }

    @Test func aThrowingAdapter_failsItsOwner_supervisedLikeAHandler() throws {
        let events = Inbox<ActorSystemEvent>()
        let (system, scheduler) = makeTestSystem(events: events)
        let seen = Inbox<String>()
        let refs = Refs()
        let ref = try system.spawn(
            Behavior.supervise(owner(seen: seen, refs: refs)).onFailure(.resume), name: "owner")
        ref.tell(.registerThrowing)
        scheduler.runDue()
        refs.text[0].tell("good")
        refs.text[0].tell("bad")
        refs.text[0].tell("after")
        scheduler.runDue()
        #expect(seen.values == ["good", "after"])
        let failures = events.values.filter { event in
            if case let .failed(address, error) = event { return address == ref.address && error is AdapterError }
            return false
        }
        #expect(failures.count == 1)
    }
}
