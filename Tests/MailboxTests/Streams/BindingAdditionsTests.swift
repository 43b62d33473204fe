import Testing
@testable import Mailbox

/// A mutable property of its own, relying on `MutablePropertyProtocol`'s default binding target.
final class CustomMutableProperty: MutablePropertyProtocol, @unchecked Sendable {
    // `@unchecked`: `storage` is only touched on the test's thread.
    private let storage: MutableProperty<Int>
    let lifetime: Lifetime
    init(_ value: Int) {
        storage = MutableProperty(value)
        lifetime = storage.lifetime
    }
    var value: Int {
        get { storage.value }
        set { storage.value = newValue }
    }
    var producer: SignalProducer<Int, Never> { storage.producer }
    var signal: Signal<Int, Never> { storage.signal }
}

extension Streams {
@Suite("Bindings added for ReactiveSwift parity")
struct BindingAdditionsTests {
    @Test func optionalTarget_bindsWhenPresent_andIgnoresNil() {
        let present: MutableProperty<Int>? = MutableProperty(0)
        let (signal, input) = Signal<Int, Never>.pipe()
        let binding = present <~ signal
        input.send(value: 3)
        #expect(present?.value == 3)
        #expect(binding != nil)
        let absent: MutableProperty<Int>? = nil
        #expect((absent <~ signal)?.isDisposed == true)
        input.send(value: 4)
        #expect(present?.value == 4)
        // An optional target of optional values takes non-optional sources too.
        let optionalValues: MutableProperty<Int?>? = MutableProperty(nil)
        optionalValues <~ SignalProducer<Int, Never>(value: 9)
        #expect(optionalValues?.value == 9)
    }

    @Test func observerTarget_forwardsValuesButNotTheTerminalEvent() {
        let (output, target) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        output.observe(recorder.observer)
        let binding = target <~ SignalProducer<Int, Never>([1, 2])
        #expect(recorder.events == [.value(1), .value(2)])
        #expect(binding.isDisposed)
        let (source, sourceInput) = Signal<Int, Never>.pipe()
        let live = target <~ source
        sourceInput.send(value: 3)
        live.dispose()
        sourceInput.send(value: 4)
        #expect(recorder.values == [1, 2, 3])
    }

    @Test func observerTarget_doesNotKeepTheObserverAlive() {
        let interrupted = Box(false)
        let (source, sourceInput) = Signal<Int, Never>.pipe()
        do {
            let (output, target) = Signal<Int, Never>.pipe()
            output.observeInterrupted { interrupted.value = true }
            target <~ source
        }
        // The binding held the input weakly: releasing it interrupted the signal.
        #expect(interrupted.value)
        sourceInput.send(value: 1)
    }

    @Test func defaultBindingTarget_setsTheValue_untilThePropertyGoesAway() {
        let (signal, input) = Signal<Int, Never>.pipe()
        var property: CustomMutableProperty? = CustomMutableProperty(1)
        property! <~ signal
        input.send(value: 2)
        #expect(property?.value == 2)
        weak let weakProperty = property
        property = nil
        #expect(weakProperty == nil)
        input.send(value: 3)
    }

    @Test func bindingIntoATargetFromItsOwnObserver_chainsWithoutDeadlock() {
        // A binding whose source is another property observed by the target's observer.
        let a = MutableProperty(0)
        let b = MutableProperty(0)
        let incremented = a.map { $0 + 1 }
        b <~ incremented
        let seen = Box<[Int]>([])
        b.signal.observeValues { _ in seen.modify { $0.append(a.value) } }
        a.value = 5
        #expect(b.value == 6)
        #expect(seen.value == [5])
        withExtendedLifetime(incremented) {}
    }
}
}
