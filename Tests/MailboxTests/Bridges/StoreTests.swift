import Dispatch
import Testing
@testable import Mailbox

private enum CounterInput: Sendable, Equatable {
    case add(Int)
    case request
    case loaded(Int)
}

private func counterReducer(_ state: Int, _ input: CounterInput) -> Int {
    switch input {
    case let .add(amount): state + amount
    case .request: state
    case let .loaded(value): value
    }
}

@Suite("Store")
struct StoreTests {
    @Test func dispatch_reducesInOrder_andStateIsAProperty() throws {
        let (system, scheduler) = makeTestSystem()
        let store = try Store<Int, CounterInput>(system: system, name: "counter", initialState: 0, reducer: counterReducer)
        let states = EventRecorder<Int, Never>()
        store.state.producer.start { states.record($0) }
        store.dispatch(.add(2))
        store.dispatch(.add(3))
        #expect(store.state.value == 0)        // nothing reduced until the actor runs
        scheduler.runDue()
        #expect(store.state.value == 5)
        #expect(states.values == [0, 2, 5])
    }

    @Test func effects_dispatchTheirValuesBack() throws {
        let (system, scheduler) = makeTestSystem()
        let load: Store<Int, CounterInput>.Effect = { input, _ in
            input == .request ? SignalProducer(value: .loaded(42)) : .empty
        }
        let store = try Store<Int, CounterInput>(system: system, name: "loader", initialState: 0, effects: [load], reducer: counterReducer)
        store.dispatch(.add(1))
        store.dispatch(.request)
        scheduler.runDue()
        #expect(store.state.value == 42)
    }

    @Test func effectsSeeTheStateAfterTheInput_andTimedEffectsRunOnTheScheduler() throws {
        let (system, scheduler) = makeTestSystem()
        let seen = Inbox<Int>()
        let delayedDouble: Store<Int, CounterInput>.Effect = { input, state in
            seen.record(state)
            guard case .add = input else { return .empty }
            return SignalProducer(value: .loaded(state * 2)).delay(1, on: scheduler)
        }
        let store = try Store<Int, CounterInput>(system: system, name: "delayed", initialState: 0, effects: [delayedDouble], reducer: counterReducer)
        store.dispatch(.add(5))
        scheduler.runDue()
        #expect(seen.values == [5])
        #expect(store.state.value == 5)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value == 10)
    }

    @Test func stop_completesTheState_interruptsEffectRuns_andDropsLaterInputs() throws {
        let (system, scheduler) = makeTestSystem()
        let effectEnded = Locked(false)
        let pending: Store<Int, CounterInput>.Effect = { input, _ in
            guard input == .request else { return .empty }
            return SignalProducer { _, lifetime in lifetime.observeEnded { effectEnded.withLock { $0 = true } } }
        }
        let store = try Store<Int, CounterInput>(system: system, name: "stopping", initialState: 0, effects: [pending], reducer: counterReducer)
        let states = EventRecorder<Int, Never>()
        store.state.producer.start { states.record($0) }
        store.dispatch(.request)
        scheduler.runDue()
        #expect(!effectEnded.snapshot)
        #expect(!store.lifetime.hasEnded)
        store.stop()
        scheduler.runDue()
        #expect(effectEnded.snapshot)
        #expect(store.lifetime.hasEnded)
        #expect(states.events.last?.isCompleted == true)
        #expect(store.dispatch(.add(1)) == .dropped(.recipientTerminated))
    }

    @Test func bindingASignalToTheStore_dispatchesEachValue() throws {
        let (system, scheduler) = makeTestSystem()
        let store = try Store<Int, CounterInput>(system: system, name: "bound", initialState: 0, reducer: counterReducer)
        let (signal, input) = Signal<CounterInput, Never>.pipe()
        store <~ signal
        input.send(value: .add(1))
        input.send(value: .add(10))
        scheduler.runDue()
        #expect(store.state.value == 11)
    }

    @Test func dispatchFromManyThreads_everyInputIsReducedOnce() async throws {
        let system = ActorSystem(name: "store-mt", configuration: .init(logHandler: nil))
        let store = try Store<Int, CounterInput>(system: system, name: "counter", initialState: 0, reducer: counterReducer)
        let changes = Locked(0)
        store.state.signal.observeValues { _ in changes.increment() }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 { store.dispatch(.add(1)) }
        }
        #expect(try await store.dispatchAndWait(.add(0)) == 4_000)
        #expect(store.state.value == 4_000)
        #expect(changes.snapshot == 4_001)
        await system.shutdown()
    }
}
