import Testing
@testable import Mailbox

extension Streams {
@Suite("Property, Action and bindings")
struct PropertyActionBindingTests {
    @Test func mutableProperty_producerSendsCurrentThenChanges_signalSendsChanges() {
        let property = MutableProperty(1)
        let fromProducer = EventRecorder<Int, Never>()
        let fromSignal = EventRecorder<Int, Never>()
        property.producer.start(fromProducer.observer)
        property.signal.observe(fromSignal.observer)
        property.value = 2
        #expect(property.value == 2)
        #expect(fromProducer.values == [1, 2])
        #expect(fromSignal.values == [2])
    }

    @Test func mutableProperty_modifySwapWithValue() {
        let property = MutableProperty([1])
        let recorder = EventRecorder<[Int], Never>()
        property.signal.observe(recorder.observer)
        let count = property.modify { value -> Int in value.append(2); return value.count }
        let old = property.swap([9])
        #expect(count == 2)
        #expect(old == [1, 2])
        #expect(property.withValue { $0.first } == 9)
        #expect(recorder.values == [[1, 2], [9]])
    }

    @Test func mutableProperty_deinitCompletesAndEndsLifetime() {
        var property: MutableProperty<Int>? = MutableProperty(0)
        let recorder = EventRecorder<Int, Never>()
        let ended = Box(false)
        property?.producer.start(recorder.observer)
        property?.lifetime.observeEnded { ended.value = true }
        property = nil
        #expect(recorder.events == [.value(0), .completed])
        #expect(ended.value)
    }

    @Test func mutableProperty_observerMayReadValue() {
        let property = MutableProperty(0)
        let seen = Box<[Int]>([])
        property.signal.observeValues { [property] _ in seen.modify { $0.append(property.value) } }
        property.value = 5
        #expect(seen.value == [5])
    }

    @Test func property_constantCapturingAndInitialThen() {
        let constant = Property(value: 3)
        #expect(constant.value == 3)
        let source = MutableProperty(1)
        let captured = Property(capturing: source)
        let view = Property(source)
        source.value = 2
        #expect(captured.value == 2)
        #expect(view.value == 2)
        let (signal, input) = Signal<Int, Never>.pipe()
        let following = Property(initial: 0, then: signal)
        #expect(following.value == 0)
        input.send(value: 7)
        #expect(following.value == 7)
    }

    @Test func property_composition() {
        let a = MutableProperty(1)
        let b = MutableProperty("x")
        let mapped = a.map { $0 * 10 }
        let combined = a.combineLatest(with: b).map { "\($0)\($1)" }
        let filtered = a.filter(initial: 0) { $0 % 2 == 0 }
        let zipped = a.zip(with: b).map { "\($0)\($1)" }
        let deduped = a.skipRepeats()
        let changes = EventRecorder<Int, Never>()
        deduped.signal.observe(changes.observer)
        a.value = 2
        a.value = 2
        b.value = "y"
        #expect(mapped.value == 20)
        #expect(combined.value == "2y")
        #expect(filtered.value == 2)
        #expect(zipped.value == "2y")
        #expect(changes.values == [2])
        // ReactiveSwift's signature: `nil` for an empty sequence, and `Value` spelled out.
        let many = Property<Int>.combineLatest([a, a])
        #expect(many?.value == [2, 2])
    }

    @Test func property_flatMapLatest() {
        let inner1 = MutableProperty(1)
        let inner2 = MutableProperty(100)
        let selector = MutableProperty(true)
        let selected = selector.flatMap(.latest) { $0 ? inner1 : inner2 }
        #expect(selected.value == 1)
        selector.value = false
        #expect(selected.value == 100)
        inner1.value = 2
        #expect(selected.value == 100)
        inner2.value = 101
        #expect(selected.value == 101)
    }

    @Test func binding_propertyFromSignalProducerAndProperty() {
        let target = MutableProperty(0)
        let (signal, input) = Signal<Int, Never>.pipe()
        target <~ signal
        input.send(value: 4)
        #expect(target.value == 4)
        target <~ SignalProducer(value: 5)
        #expect(target.value == 5)
        let source = MutableProperty(6)
        target <~ source
        #expect(target.value == 6)
        source.value = 7
        #expect(target.value == 7)
        let optional = MutableProperty<Int?>(nil)
        optional <~ source
        #expect(optional.value == 7)
    }

    @Test func binding_endsWithTargetLifetime() {
        let (lifetime, token) = Lifetime.make()
        let received = Box<[Int]>([])
        let target = BindingTarget<Int>(lifetime: lifetime) { v in received.modify { $0.append(v) } }
        let (signal, input) = Signal<Int, Never>.pipe()
        target <~ signal
        input.send(value: 1)
        token.dispose()
        input.send(value: 2)
        #expect(received.value == [1])
        // As in ReactiveSwift: the binding ends at once; its disposable is already disposed.
        #expect((target <~ signal)?.isDisposed == true)
    }

    @Test func action_runsAndPublishesEvents() {
        let action = Action<Int, Int, TestError> { input in SignalProducer(value: input * 2) }
        let values = EventRecorder<Int, Never>()
        let completed = Box(0)
        action.values.observe(values.observer)
        action.completed.observeValues { completed.value += 1 }
        let result = EventRecorder<Int, ActionError<TestError>>()
        action.apply(3).start(result.observer)
        #expect(result.events == [.value(6), .completed])
        #expect(values.values == [6])
        #expect(completed.value == 1)
        #expect(action.isEnabled.value)
        #expect(!action.isExecuting.value)
    }

    @Test func action_refusesOverlappingRuns() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let action = Action<Void, Int, TestError> { SignalProducer(signal) }
        let disabled = Box(0)
        action.disabledErrors.observeValues { disabled.value += 1 }
        action.apply(()).start()
        #expect(action.isExecuting.value)
        #expect(!action.isEnabled.value)
        let second = EventRecorder<Int, ActionError<TestError>>()
        action.apply(()).start(second.observer)
        #expect(second.events == [.failed(.disabled)])
        #expect(disabled.value == 1)
        input.send(error: TestError(code: 1))
        #expect(!action.isExecuting.value)
        #expect(action.isEnabled.value)
    }

    @Test func action_failureIsWrappedAndPublished() {
        let action = Action<Void, Int, TestError> { SignalProducer(error: TestError(code: 2)) }
        let errors = EventRecorder<TestError, Never>()
        action.errors.observe(errors.observer)
        let result = EventRecorder<Int, ActionError<TestError>>()
        action.apply(()).start(result.observer)
        #expect(result.events == [.failed(.producerFailed(TestError(code: 2)))])
        #expect(errors.values == [TestError(code: 2)])
    }

    @Test func action_enabledIfAndState() {
        let enabled = MutableProperty(false)
        let action = Action<Int, Int, Never>(enabledIf: enabled) { SignalProducer(value: $0) }
        #expect(!action.isEnabled.value)
        let refused = EventRecorder<Int, ActionError<Never>>()
        action.apply(1).start(refused.observer)
        #expect(refused.events == [.failed(.disabled)])
        enabled.value = true
        #expect(action.isEnabled.value)
        let state = MutableProperty(10)
        let stateful = Action<Int, Int, Never>(state: state, enabledIf: { $0 > 0 }) { base, input in SignalProducer(value: base + input) }
        let result = EventRecorder<Int, ActionError<Never>>()
        stateful.apply(5).start(result.observer)
        #expect(result.values == [15])
    }

    @Test func action_bindingAppliesForEachValue() {
        let action = Action<Int, Int, Never> { SignalProducer(value: $0) }
        let values = EventRecorder<Int, Never>()
        action.values.observe(values.observer)
        let (signal, input) = Signal<Int, Never>.pipe()
        action <~ signal
        input.send(value: 1)
        input.send(value: 2)
        #expect(values.values == [1, 2])
    }
}
}
