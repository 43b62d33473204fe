import Dispatch
import Testing
@testable import Mailbox

private struct BridgeFailure: Error {}

/// Messages of the actors that publish outputs and state in these tests.
private enum Publishing: Sendable {
    case emit(Int)
    case fail
    case stop
}

private func publisher(_ output: ActorOutput<Int>) -> Behavior<Publishing> {
    .receiveMessage { message in
        switch message {
        case let .emit(value): output.publish(value)
        case .fail: throw BridgeFailure()
        case .stop: return .stopped
        }
        return .same
    }
}

private func accumulator(_ state: ActorState<Int>) -> Behavior<Publishing> {
    .receiveMessage { message in
        switch message {
        case let .emit(value): state.publish(state.current + value)
        case .fail: throw BridgeFailure()
        case .stop: return .stopped
        }
        return .same
    }
}

@Suite("Bridges: actor outputs and actor-backed properties")
struct ActorOutputAndStateTests {
    @Test func output_sendsPublishedValues_thenCompletesWhenTheActorStops() throws {
        let (system, scheduler) = makeTestSystem()
        let (ref, output) = try system.spawn(name: "ticker", output: Int.self, publisher)
        let events = EventRecorder<Int, Never>()
        output.observe { events.record($0) }
        ref.tell(.emit(1))
        ref.tell(.emit(2))
        #expect(events.values == [])          // nothing runs before the scheduler does
        scheduler.runDue()
        #expect(events.values == [1, 2])
        #expect(!events.hasTerminated)
        ref.tell(.stop)
        scheduler.runDue()
        #expect(events.events.last?.isCompleted == true)
    }

    @Test func output_isInterrupted_notCompleted_whenTheActorFails() throws {
        let (system, scheduler) = makeTestSystem()
        let (ref, output) = try system.spawn(name: "fragile", output: Int.self, publisher)
        let events = EventRecorder<Int, Never>()
        output.observe { events.record($0) }
        ref.tell(.emit(7))
        ref.tell(.fail)
        scheduler.runDue()
        #expect(events.values == [7])
        #expect(events.events.count == 2)
        #expect(events.events.last?.isInterruption == true)
    }

    @Test func output_ofAChild_completesWhenTheParentStopsIt() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<String>()
        let parent = try system.spawn(Behavior<String>.setup { context in
            let (child, output) = try context.spawn(name: "child", output: Int.self, publisher)
            output.observe { event in seen.record("\(event)") }
            child.tell(.emit(3))
            return .receiveMessage { _ in .stopped }
        }, name: "parent")
        scheduler.runDue()
        parent.tell("stop")
        scheduler.runDue()
        #expect(seen.values == ["\(Event<Int, Never>.value(3))", "\(Event<Int, Never>.completed)"])
    }

    @Test func spawnWithOutput_duplicateName_throws() throws {
        let (system, _) = makeTestSystem()
        _ = try system.spawn(Behavior<Int>.ignore, name: "taken")
        #expect(throws: ActorSystemError.self) {
            _ = try system.spawn(name: "taken", output: Int.self, publisher)
        }
    }

    @Test func property_valueIsTheLatestPublishedState_producerStartsWithIt_completesOnStop() throws {
        let (system, scheduler) = makeTestSystem()
        let (ref, total) = try system.spawn(name: "total", initialState: 10, accumulator)
        #expect(total.value == 10)
        let fromStart = EventRecorder<Int, Never>()
        total.producer.start { fromStart.record($0) }
        let changes = EventRecorder<Int, Never>()
        total.signal.observe { changes.record($0) }
        ref.tell(.emit(5))
        ref.tell(.emit(1))
        scheduler.runDue()
        #expect(total.value == 16)
        #expect(fromStart.values == [10, 15, 16])
        #expect(changes.values == [15, 16])
        // A producer started now begins with the latest state.
        let late = EventRecorder<Int, Never>()
        total.producer.start { late.record($0) }
        #expect(late.values == [16])
        ref.tell(.stop)
        scheduler.runDue()
        #expect(fromStart.events.last?.isCompleted == true)
        #expect(late.events.last?.isCompleted == true)
        #expect(changes.events.last?.isCompleted == true)
        #expect(total.value == 16)            // keeps the last state
    }

    @Test func property_completesWhenTheActorFails() throws {
        let (system, scheduler) = makeTestSystem()
        let (ref, total) = try system.spawn(name: "total", initialState: 0, accumulator)
        let events = EventRecorder<Int, Never>()
        total.producer.start { events.record($0) }
        ref.tell(.emit(2))
        ref.tell(.fail)
        scheduler.runDue()
        #expect(events.values == [0, 2])
        #expect(events.events.last?.isCompleted == true)
    }

    /// The actor is parked inside a handler (after publishing) on its own thread; reading the
    /// property from here must return the published state at once, not wait for the handler.
    @Test func property_readingNeverWaitsForTheActor() async throws {
        let system = ActorSystem(name: "busy", configuration: .init(logHandler: nil))
        let gate = Gate()
        let (ref, state) = try system.spawn(name: "busy", initialState: 0) { (state: ActorState<Int>) -> Behavior<Int> in
            .receiveMessage { value in
                state.publish(value)
                gate.hold()                   // the actor is busy until the test opens the gate
                return .same
            }
        }
        ref.tell(42)
        #expect(gate.waitUntilHeld())
        let readReturned = DispatchSemaphore(value: 0)
        let read = Locked(0)
        DispatchQueue.global().async {
            read.withLock { $0 = state.value }
            readReturned.signal()
        }
        #expect(readReturned.waitBounded())   // while the actor is still inside its handler
        #expect(read.snapshot == 42)
        gate.open()
        #expect(await system.shutdown().isClean)
    }
}
