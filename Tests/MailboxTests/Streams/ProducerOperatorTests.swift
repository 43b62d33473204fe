import Testing
@testable import Mailbox

extension Streams {
@Suite("Producer forms of multi-input operators")
struct ProducerOperatorTests {
    final class Target {
        var text = ""
    }

    @Test func takeUntilAndSkipUntil_withProducerTriggers() {
        let (trigger, fire) = Signal<(), Never>.pipe()
        let (values, input) = Signal<Int, Never>.pipe()
        let taken = EventRecorder<Int, Never>()
        SignalProducer(values).take(until: SignalProducer(trigger)).start(taken.observer)
        let skipped = EventRecorder<Int, Never>()
        SignalProducer(values).skip(until: SignalProducer(trigger)).start(skipped.observer)
        input.send(value: 1)
        fire.send(value: ())
        input.send(value: 2)
        #expect(taken.events == [.value(1), .completed])
        #expect(skipped.values == [2])
    }

    @Test func sampleAndWithLatest_producers() {
        let (values, input) = Signal<Int, Never>.pipe()
        let (ticks, tick) = Signal<String, Never>.pipe()
        let sampled = EventRecorder<String, Never>()
        SignalProducer(values).sample(with: SignalProducer(ticks)).map { "\($0)\($1)" }.start(sampled.observer)
        let latest = EventRecorder<String, Never>()
        SignalProducer(ticks).withLatest(from: SignalProducer(values)).map { "\($0)\($1)" }.start(latest.observer)
        input.send(value: 1)
        tick.send(value: "a")
        #expect(sampled.values == ["1a"])
        #expect(latest.values == ["a1"])
        let onUnit = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 4).sample(on: SignalProducer<(), Never>(value: ())).start(onUnit.observer)
        // As in ReactiveSwift, this producer's run starts first, so the sampler finds 4.
        #expect(onUnit.events == [.value(4), .completed])
    }

    @Test func multiInputOperators_reentrantInterruptionDoesNotDeadlock() {
        let a = SignalProducer<Int, Never>(value: 1).concat(.never)
        let b = SignalProducer<Int, Never>(value: 2).concat(.never)
        let combined = EventRecorder<Int, Never>()
        a.combineLatest(with: b).map { $0 + $1 }.take(first: 1).start(combined.observer)
        #expect(combined.events == [.value(3), .completed])
        let zipped = EventRecorder<Int, Never>()
        a.zip(with: b).map { $0 * $1 }.take(first: 1).start(zipped.observer)
        #expect(zipped.events == [.value(2), .completed])
        let many = EventRecorder<[Int], Never>()
        SignalProducer.combineLatest([a, b]).take(first: 1).start(many.observer)
        #expect(many.events == [.value([1, 2]), .completed])
    }

    @Test func signalMergeWithAndStaticArities() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<Int, Never>.pipe()
        let merged = EventRecorder<Int, Never>()
        a.merge(with: b).observe(merged.observer)
        inputB.send(value: 2)
        inputA.send(value: 1)
        #expect(merged.values == [2, 1])
        let four = EventRecorder<Int, Never>()
        SignalProducer.combineLatest(
            SignalProducer<Int, Never>(value: 1), SignalProducer<Int, Never>(value: 2),
            SignalProducer<Int, Never>(value: 3), SignalProducer<Int, Never>(value: 4)
        ).map { $0 + $1 + $2 + $3 }.start(four.observer)
        #expect(four.events == [.value(10), .completed])
        let six = EventRecorder<Int, Never>()
        SignalProducer.zip(
            SignalProducer<Int, Never>([1, 2]), SignalProducer<Int, Never>([1, 2]), SignalProducer<Int, Never>([1, 2]),
            SignalProducer<Int, Never>([1, 2]), SignalProducer<Int, Never>([1, 2]), SignalProducer<Int, Never>([1, 2])
        ).map { $0 + $1 + $2 + $3 + $4 + $5 }.start(six.observer)
        #expect(six.events == [.value(6), .value(12), .completed])
    }

    @Test func startOn_disposedBeforeStartNeverRuns() {
        let scheduler = TestScheduler()
        let runs = Box(0)
        let disposable = SignalProducer<Int, Never> { _, _ in runs.value += 1 }.start(on: scheduler).start()
        disposable.dispose()
        scheduler.run()
        #expect(runs.value == 0)
    }

    @Test func observeOn_producer() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>([1, 2]).observe(on: scheduler).start(recorder.observer)
        #expect(recorder.events.isEmpty)
        scheduler.advance()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func propertyStaticCombinators() {
        let a = MutableProperty(1)
        let b = MutableProperty(2)
        let c = MutableProperty(3)
        let sum = Property.combineLatest(a, b, c).map { $0 + $1 + $2 }
        let pairs = Property<Int>.zip(a, b).map { $0 * $1 }
        a.value = 10
        #expect(sum.value == 15)
        #expect(pairs.value == 2)
        b.value = 5
        #expect(pairs.value == 50)
    }

    @Test func bindingTarget_keyPath() {
        let target = Target()
        let (lifetime, token) = Lifetime.make()
        let (signal, input) = Signal<String, Never>.pipe()
        BindingTarget(lifetime: lifetime, object: target, keyPath: \.text) <~ signal
        input.send(value: "hi")
        #expect(target.text == "hi")
        token.dispose()
        input.send(value: "bye")
        #expect(target.text == "hi")
    }

    @Test func flatten_signalOfSignals_andPropertyFlatten() {
        let (outer, outerInput) = Signal<Signal<Int, Never>, Never>.pipe()
        let (inner, innerInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        outer.flatten(.merge).observe(recorder.observer)
        outerInput.send(value: inner)
        innerInput.send(value: 5)
        #expect(recorder.values == [5])
        let holder = MutableProperty(MutableProperty(1))
        let flattened = holder.flatten(.latest)
        #expect(flattened.value == 1)
        holder.value = MutableProperty(2)
        #expect(flattened.value == 2)
    }
}
}

// Written only through the binding under test, on the test's thread.
extension Streams.ProducerOperatorTests.Target: @unchecked Sendable {}
