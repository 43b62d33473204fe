import Testing
@testable import Mailbox

@Suite("System events as signals")
struct SystemEventSignalTests {
    @Test func eventsSignal_deliversEvents_andCompletesAtShutdown() async throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let completed = Inbox<Bool>()
        let disposable = system.events.observe { event in
            switch event {
            case let .value(value): seen.record(value.description)
            case .completed: completed.record(true)
            default: break
            }
        }
        let letters = Inbox<String>()
        system.deadLetters.observeValues { letters.record("\($0.message) \($0.reason)") }
        let ref = try system.spawn(Behavior<Int>.receiveMessage { _ in .stopped }, name: "brief")
        ref.tell(1)
        ref.tell(2)
        scheduler.runDue()
        #expect(seen.values == ["spawned /user/brief", "stopped /user/brief", "dead letter to /user/brief (recipient terminated): 2"])
        #expect(letters.values == ["2 recipient terminated"])
        system.beginShutdown()
        scheduler.runDue()
        await system.shutdown()
        #expect(completed.values == [true])
        _ = disposable
    }

    @Test func disposingTheObservation_stopsDelivery() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let disposable = system.events.observeValues { seen.record($0.description) }
        _ = try system.spawn(Behavior<Int>.ignore, name: "a")
        disposable?.dispose()
        _ = try system.spawn(Behavior<Int>.ignore, name: "b")
        scheduler.runDue()
        #expect(seen.values == ["spawned /user/a"])
    }
}
