import Testing
@testable import Mailbox

extension Streams {
@Suite("Action initialisers added for ReactiveSwift parity")
struct ActionInitializerTests {
    @Test func stateExecute_passesTheStateAtTheAttempt_andIsAlwaysEnabled() {
        let multiplier = MutableProperty(2)
        let action = Action<Int, Int, Never>(state: multiplier) { factor, input in SignalProducer(value: factor * input) }
        #expect(action.isEnabled.value)
        #expect(action.apply(3).single().map { try? $0.get() } == 6)
        multiplier.value = 5
        #expect(action.apply(3).single().map { try? $0.get() } == 15)
        let noInput = Action<Void, String, Never>(state: multiplier) { factor in SignalProducer(value: "x\(factor)") }
        #expect(noInput.apply().single().map { try? $0.get() } == "x5")
    }

    @Test func unwrapping_isEnabledWhileTheStateHasAValue() {
        let user = MutableProperty<String?>(nil)
        let action = Action<Int, String, Never>(unwrapping: user) { name, count in
            SignalProducer(value: String(repeating: name, count: count))
        }
        #expect(!action.isEnabled.value)
        let disabled = EventRecorder<String, ActionError<Never>>()
        action.apply(2).start(disabled.observer)
        #expect(disabled.events == [.failed(.disabled)])
        user.value = "ab"
        #expect(action.isEnabled.value)
        #expect(action.apply(2).single().map { try? $0.get() } == "abab")
        let noInput = Action<Void, Int, Never>(unwrapping: user) { name in SignalProducer(value: name.count) }
        #expect(noInput.apply().single().map { try? $0.get() } == 2)
        user.value = nil
        #expect(!noInput.isEnabled.value)
    }

    @Test func applyWithoutInput_runsTheAction() {
        let action = Action<Void, Int, TestError> { SignalProducer(value: 42) }
        let values = EventRecorder<Int, Never>()
        action.values.observe(values.observer)
        #expect(action.apply().single().map { try? $0.get() } == 42)
        #expect(values.values == [42])
    }

    @Test func unwrappingExecute_readingTheState_doesNotDeadlock() {
        let user = MutableProperty<String?>("a")
        let action = Action<Void, String, Never>(unwrapping: user) { name in
            // The unit of work reads the state it was enabled by.
            SignalProducer(value: name + (user.value ?? "-"))
        }
        #expect(action.apply().single().map { try? $0.get() } == "aa")
    }
}
}
