import Mailbox
import Testing

/// Regressions found while diffing the API against ReactiveSwift: an operator chain that
/// terminates itself while delivering, a property flat-mapped onto itself, and a binding from a
/// composed property that nobody else holds.
@Suite struct OperatorReleaseRegressionTests {
    @Test func takeFirstAfterMap_onAPipe_deliversOnceAndCompletes() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.map { $0 * 10 }.take(first: 1).observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        #expect(recorder.events == [.value(10), .completed])
    }

    @Test func takeFirstAfterMap_onAProducer_deliversOnceAndCompletes() {
        let property = MutableProperty(1)
        let recorder = EventRecorder<Int, Never>()
        property.producer.map { $0 * 10 }.take(first: 1).start(recorder.observer)
        property.value = 2
        #expect(recorder.events == [.value(10), .completed])
    }

    @Test func propertyFlatMappedOntoItself_followsItsValue() {
        let a = MutableProperty(1)
        let b = a.flatMap(.latest) { _ in a }
        #expect(b.value == 1)
        a.value = 2
        #expect(b.value == 2)
        a.value = 3
        #expect(b.value == 3)
    }

    @Test func bindingFromAReleasedComposedProperty_keepsFollowingTheSource() {
        let a = MutableProperty(1)
        let b = MutableProperty(0)
        b <~ a.map { $0 * 2 }
        #expect(b.value == 2)
        a.value = 5
        #expect(b.value == 10)
        a.value = 6
        #expect(b.value == 12)
    }
}
