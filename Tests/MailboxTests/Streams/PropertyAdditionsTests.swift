import Testing
@testable import Mailbox

/// A model with ReactiveSwift's property wrappers.
final class WrappedModel {
    @MutableProperty var name = "Ada"
    @MutableProperty var nickname: String? = nil
    @Property(value: 3) var constant: Int
}

extension Streams {
@Suite("Property additions for ReactiveSwift parity")
struct PropertyAdditionsTests {
    @Test func mapValue_combinePrevious_uniqueValues() {
        let source = MutableProperty(1)
        let constant = source.map(value: "x")
        let pairs = source.combinePrevious(0)
        let unique = source.uniqueValues()
        let uniqueParity = source.uniqueValues { $0 % 2 }
        let changes = EventRecorder<String, Never>()
        constant.signal.observe(changes.observer)
        #expect(pairs.value == (0, 1))
        source.value = 2
        source.value = 1
        source.value = 3
        #expect(constant.value == "x")
        #expect(changes.values == ["x", "x", "x"])
        #expect(pairs.value == (1, 3))
        #expect(unique.value == 3)
        // 1 (odd) then 2 (even) were new parities; 1 and 3 were not.
        #expect(uniqueParity.value == 2)
    }

    @Test func nAryCombineLatestAndZip_ofProperties() {
        let a = MutableProperty(1)
        let b = MutableProperty("b")
        let c = MutableProperty(true)
        let d = MutableProperty(4.0)
        let combined = Property.combineLatest(a, b, c, d)
        #expect(combined.value == (1, "b", true, 4.0))
        a.value = 2
        #expect(combined.value.0 == 2)
        let ten = Property.combineLatest(a, a, a, a, a, a, a, a, a, a).map { $0 + $9 }
        #expect(ten.value == 4)
        let zipped = Property.zip(a, b, c)
        b.value = "c"
        // zip pairs the n-th values: still the first of each.
        #expect(zipped.value == (2, "b", true))
        a.value = 3
        c.value = false
        #expect(zipped.value == (3, "c", false))
    }

    @Test func sequenceCombinators_returnNilOrTheSentinelWhenEmpty() {
        let a = MutableProperty(1)
        let b = MutableProperty(2)
        let combined = Property<Int>.combineLatest([a, b])
        #expect(combined?.value == [1, 2])
        b.value = 5
        #expect(combined?.value == [1, 5])
        #expect(Property<Int>.combineLatest([MutableProperty<Int>]()) == nil)
        #expect(Property<Int>.zip([MutableProperty<Int>]()) == nil)
        #expect(Property<Int>.combineLatest([MutableProperty<Int>](), emptySentinel: [7]).value == [7])
        let zipped = Property<Int>.zip([a, b], emptySentinel: [])
        #expect(zipped.value == [1, 5])
        a.value = 8
        b.value = 9
        #expect(zipped.value == [8, 9])
    }

    @Test func initialThen_acceptsAnyStream_andOptionalValues() {
        let source = MutableProperty(1)
        let following = Property(initial: 0, then: source)
        #expect(following.value == 1)
        source.value = 2
        #expect(following.value == 2)
        let (signal, input) = Signal<Int, Never>.pipe()
        let optional = Property<Int?>(initial: nil, then: signal)
        #expect(optional.value == nil)
        input.send(value: 4)
        #expect(optional.value == 4)
        let fromProducer = Property<Int?>(initial: nil, then: SignalProducer<Int, Never>(value: 6))
        #expect(fromProducer.value == 6)
    }

    @Test func propertyWrappers_exposeTheValueAndTheProperty() {
        let model = WrappedModel()
        let names = EventRecorder<String, Never>()
        model.$name.producer.start(names.observer)
        model.name = "Grace"
        #expect(model.name == "Grace")
        #expect(names.values == ["Ada", "Grace"])
        #expect(model.nickname == nil)
        model.$nickname <~ SignalProducer<String, Never>(value: "G")
        #expect(model.nickname == "G")
        #expect(model.constant == 3)
        #expect(model.$constant.value == 3)
    }

    @Test func mapValue_observerReadingTheSource_doesNotDeadlock() {
        let source = MutableProperty(1)
        let mapped = source.map(value: "v")
        let seen = Box<[Int]>([])
        mapped.signal.observeValues { _ in seen.modify { $0.append(source.value) } }
        source.value = 5
        #expect(seen.value == [5])
    }
}
}
