import Testing
@testable import Mailbox

extension Streams {
@Suite("Boolean operators")
struct BooleanOperatorTests {
    @Test func signalNegate_invertsEveryValue() {
        #expect(run([true, false, false]) { $0.negate() }.events == [.value(false), .value(true), .value(true), .completed])
    }

    @Test func signalAndOr_combineTheLatestValuesOnceBothSent() {
        let (a, inputA) = Signal<Bool, Never>.pipe()
        let (b, inputB) = Signal<Bool, Never>.pipe()
        let and = EventRecorder<Bool, Never>()
        let or = EventRecorder<Bool, Never>()
        a.and(b).observe(and.observer)
        a.or(b).observe(or.observer)
        inputA.send(value: true)
        #expect(and.values.isEmpty)
        inputB.send(value: false)
        inputB.send(value: true)
        inputA.send(value: false)
        inputA.sendCompleted()
        inputB.sendCompleted()
        #expect(and.events == [.value(false), .value(true), .value(false), .completed])
        #expect(or.events == [.value(true), .value(true), .value(true), .completed])
    }

    @Test func signalAllAny_overCollectionsAndVariadics() {
        let (a, inputA) = Signal<Bool, TestError>.pipe()
        let (b, inputB) = Signal<Bool, TestError>.pipe()
        let (c, inputC) = Signal<Bool, TestError>.pipe()
        let all = EventRecorder<Bool, TestError>()
        let any = EventRecorder<Bool, TestError>()
        Signal.all([a, b, c]).observe(all.observer)
        Signal.any(a, b, c).observe(any.observer)
        inputA.send(value: false)
        inputB.send(value: false)
        inputC.send(value: false)
        inputB.send(value: true)
        inputA.send(value: true)
        inputC.send(value: true)
        inputB.send(error: TestError(code: 1))
        #expect(all.events == [.value(false), .value(false), .value(false), .value(true), .failed(TestError(code: 1))])
        #expect(any.events == [.value(false), .value(true), .value(true), .value(true), .failed(TestError(code: 1))])
        let empty = EventRecorder<Bool, Never>()
        Signal<Bool, Never>.all([Signal<Bool, Never>]()).observe(empty.observer)
        #expect(empty.events == [.interrupted])
    }

    @Test func producerAllAny_emptyCollectionsSendTheNeutralValue() {
        let all = EventRecorder<Bool, Never>()
        let any = EventRecorder<Bool, Never>()
        SignalProducer<Bool, Never>.all([SignalProducer<Bool, Never>]()).start(all.observer)
        SignalProducer<Bool, Never>.any([SignalProducer<Bool, Never>]()).start(any.observer)
        #expect(all.events == [.value(true), .completed])
        #expect(any.events == [.value(false), .completed])
    }

    @Test func producerOperators_acceptProducersSignalsAndProperties() {
        let flag = MutableProperty(true)
        let (signal, input) = Signal<Bool, Never>.pipe()
        let and = EventRecorder<Bool, Never>()
        SignalProducer<Bool, Never>(value: true).and(flag).start(and.observer)
        #expect(and.values == [true])
        let or = EventRecorder<Bool, Never>()
        SignalProducer<Bool, Never>(value: false).or(signal).start(or.observer)
        input.send(value: true)
        #expect(or.values == [true])
        let negated = EventRecorder<Bool, Never>()
        flag.producer.negate().start(negated.observer)
        flag.value = false
        #expect(negated.values == [false, true])
        let allOfProperties = EventRecorder<Bool, Never>()
        SignalProducer<Bool, Never>.all([flag, MutableProperty(true)]).start(allOfProperties.observer)
        #expect(allOfProperties.values == [false])
        let anyOfVariadic = EventRecorder<Bool, Never>()
        SignalProducer<Bool, Never>.any(SignalProducer(value: false), SignalProducer(value: true)).start(anyOfVariadic.observer)
        #expect(anyOfVariadic.events == [.value(true), .completed])
    }

    @Test func propertyBooleans_followTheirSources() {
        let a = MutableProperty(true)
        let b = MutableProperty(false)
        let c = MutableProperty(true)
        let not = a.negate()
        let and = a.and(b)
        let or = a.or(b)
        let all = Property.all([a, b, c])
        let any = Property.any(a, b, c)
        #expect(not.value == false)
        #expect(and.value == false)
        #expect(or.value == true)
        #expect(all.value == false)
        #expect(any.value == true)
        b.value = true
        #expect(and.value == true)
        #expect(all.value == true)
        a.value = false
        c.value = false
        b.value = false
        #expect(not.value == true)
        #expect(or.value == false)
        #expect(any.value == false)
        #expect(Property.all([MutableProperty<Bool>]()).value == true)
        #expect(Property.any([MutableProperty<Bool>]()).value == false)
    }

    @Test func propertyAnd_observerReadingTheSources_doesNotDeadlock() {
        let a = MutableProperty(true)
        let b = MutableProperty(true)
        let both = a.and(b)
        let seen = Box<[String]>([])
        both.signal.observeValues { value in
            seen.modify { $0.append("\(value) a=\(a.value) b=\(b.value) both=\(both.value)") }
        }
        b.value = false
        #expect(seen.value == ["false a=true b=false both=false"])
    }
}
}
