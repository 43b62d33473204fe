import Testing
@testable import Mailbox

extension Streams {
@Suite("Combining and flattening")
struct CombineFlattenTests {
    @Test func combineLatest_waitsForAllAndCompletesWhenAllComplete() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<String, Never>()
        a.combineLatest(with: b).map { "\($0)\($1)" }.observe(recorder.observer)
        inputA.send(value: 1)
        inputB.send(value: "a")
        inputA.send(value: 2)
        inputA.sendCompleted()
        #expect(!recorder.isCompleted)
        inputB.send(value: "b")
        inputB.sendCompleted()
        #expect(recorder.events == [.value("1a"), .value("2a"), .value("2b"), .completed])
    }

    @Test func staticCombineLatest_andSequences() {
        let recorder = EventRecorder<[Int], Never>()
        SignalProducer.combineLatest([SignalProducer<Int, Never>(value: 1), SignalProducer(value: 2)]).start(recorder.observer)
        #expect(recorder.events == [.value([1, 2]), .completed])
        let triple = EventRecorder<String, Never>()
        SignalProducer.combineLatest(SignalProducer<Int, Never>(value: 1), SignalProducer<String, Never>(value: "x"), SignalProducer<Bool, Never>(value: true))
            .map { "\($0)\($1)\($2)" }.start(triple.observer)
        #expect(triple.values == ["1xtrue"])
    }

    @Test func zip_pairsInOrder() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<[Int], Never>()
        a.zip(with: b).map { [$0, $1] }.observe(recorder.observer)
        inputA.send(value: 1)
        inputA.send(value: 2)
        inputB.send(value: 10)
        inputA.sendCompleted()
        #expect(!recorder.isCompleted)
        inputB.send(value: 20)
        #expect(recorder.events == [.value([1, 10]), .value([2, 20]), .completed])
        let many = EventRecorder<[Int], Never>()
        SignalProducer.zip([SignalProducer<Int, Never>([1, 2]), SignalProducer([3, 4, 5])]).start(many.observer)
        #expect(many.events == [.value([1, 3]), .value([2, 4]), .completed])
        let three = EventRecorder<Int, Never>()
        Signal.zip(Signal<Int, Never>.never, Signal<Int, Never>.never, Signal<Int, Never>.never).map { $0 + $1 + $2 }.observe(three.observer)
        #expect(three.events.isEmpty)
    }

    @Test func merge_forwardsAllAndCompletesWhenAllComplete() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        Signal.merge(a, b).observe(recorder.observer)
        inputA.send(value: 1)
        inputB.send(value: 2)
        inputA.sendCompleted()
        inputB.send(value: 3)
        inputB.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
        let producers = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).merge(with: SignalProducer(value: 2)).start(producers.observer)
        #expect(producers.events == [.value(1), .value(2), .completed])
    }

    @Test func withLatest_and_sample() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<String, Never>.pipe()
        let latest = EventRecorder<String, Never>()
        a.withLatest(from: b).map { "\($0)\($1)" }.observe(latest.observer)
        inputA.send(value: 0)
        inputB.send(value: "x")
        inputA.send(value: 1)
        #expect(latest.values == ["1x"])

        let (values, sendValue) = Signal<Int, Never>.pipe()
        let (sampler, tick) = Signal<(), Never>.pipe()
        let sampled = EventRecorder<Int, Never>()
        values.sample(on: sampler).observe(sampled.observer)
        tick.send(value: ())
        sendValue.send(value: 5)
        tick.send(value: ())
        tick.send(value: ())
        sendValue.sendCompleted()
        tick.sendCompleted()
        #expect(sampled.events == [.value(5), .value(5), .completed])
    }

    @Test func flattenMerge_runsInnersConcurrently() {
        let (outer, outerInput) = Signal<SignalProducer<Int, Never>, Never>.pipe()
        let (inner1, input1) = Signal<Int, Never>.pipe()
        let (inner2, input2) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        outer.flatten(.merge).observe(recorder.observer)
        outerInput.send(value: SignalProducer(inner1))
        outerInput.send(value: SignalProducer(inner2))
        input1.send(value: 1)
        input2.send(value: 2)
        outerInput.sendCompleted()
        input1.sendCompleted()
        #expect(!recorder.isCompleted)
        input2.sendInterrupted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func flattenConcat_queuesInners() {
        let (inner1, input1) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<SignalProducer<Int, Never>, Never>([SignalProducer(inner1), SignalProducer([2, 3])])
            .flatten(.concat).start(recorder.observer)
        input1.send(value: 1)
        #expect(recorder.values == [1])
        input1.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test func flattenConcurrent_limitsRunningInners() {
        let started = Box(0)
        let inputs = Box<[Signal<Int, Never>.Observer]>([])
        let inner = SignalProducer<Int, Never> { observer, _ in
            started.value += 1
            inputs.modify { $0.append(observer) }
        }
        let disposable = SignalProducer<SignalProducer<Int, Never>, Never>([inner, inner, inner]).flatten(.concurrent(limit: 2)).start()
        #expect(started.value == 2)
        inputs.value[0].sendCompleted()
        #expect(started.value == 3)
        disposable.dispose()
    }

    @Test func flattenLatest_disposesPreviousInnerAtOnce() {
        let interrupted = Box<[Int]>([])
        let (outer, outerInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let inputs = Box<[Int: Signal<Int, Never>.Observer]>([:])
        outer.flatMap(.latest) { index in
            SignalProducer<Int, Never> { observer, lifetime in
                inputs.modify { $0[index] = observer }
                lifetime.observeEnded { interrupted.modify { $0.append(index) } }
            }
        }.observe(recorder.observer)
        outerInput.send(value: 1)
        inputs.value[1]?.send(value: 10)
        outerInput.send(value: 2)
        #expect(interrupted.value == [1])
        inputs.value[1]?.send(value: 11)
        inputs.value[2]?.send(value: 20)
        outerInput.sendCompleted()
        #expect(!recorder.isCompleted)
        inputs.value[2]?.sendCompleted()
        #expect(recorder.events == [.value(10), .value(20), .completed])
    }

    @Test func flattenLatest_disposingTheRunInterruptsTheCurrentInnerOnce() {
        let ended = Box(0)
        let (outer, outerInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let disposable = SignalProducer(outer).flatMap(.latest) { _ in
            SignalProducer<Int, Never> { _, lifetime in
                lifetime.observeEnded { ended.modify { $0 += 1 } }
            }
        }.start(recorder.observer)
        outerInput.send(value: 1)
        outerInput.send(value: 2)
        #expect(ended.value == 1)
        disposable.dispose()
        #expect(ended.value == 2)
        #expect(recorder.events == [.interrupted])
        disposable.dispose()
        outerInput.send(value: 3)
        #expect(ended.value == 2)
    }

    @Test func flattenLatest_innerMadeAfterTheResultTerminatedNeverStarts() {
        let started = Box<[Int]>([])
        let ended = Box<[Int]>([])
        let inputs = Box<[Int: Signal<Int, TestError>.Observer]>([:])
        let (outer, outerInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        outer.flatMap(.latest) { value in
            // Fails the current inner run while this outer value is being delivered: the result
            // fails and is torn down before the next inner run is made, which must then be
            // interrupted at once instead of starting.
            if value == 2 { inputs.value[1]?.send(error: TestError(code: 1)) }
            return SignalProducer<Int, TestError> { observer, lifetime in
                started.modify { $0.append(value) }
                inputs.modify { $0[value] = observer }
                lifetime.observeEnded { ended.modify { $0.append(value) } }
            }
        }.observe(recorder.observer)
        outerInput.send(value: 1)
        outerInput.send(value: 2)
        #expect(started.value == [1])
        #expect(ended.value == [1])
        #expect(recorder.events == [.failed(TestError(code: 1))])
        inputs.modify { $0 = [:] }
    }

    @Test func flattenLatest_releasesACompletedInnerRunWithoutWaitingForTheNext() {
        final class WeakInput: @unchecked Sendable {  // written once, on the test's thread
            weak var observer: Signal<Int, Never>.Observer?
        }
        let weakInput = WeakInput()
        let (outer, outerInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        outer.flatMap(.latest) { value in
            SignalProducer<Int, Never> { observer, _ in
                weakInput.observer = observer
                observer.send(value: value)
                observer.sendCompleted()
            }
        }.observe(recorder.observer)
        outerInput.send(value: 1)
        #expect(weakInput.observer == nil)
        #expect(recorder.events == [.value(1)])
        outerInput.sendCompleted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func flattenRace_firstValueWins() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Signal<Int, Never>, Never>([a, b]).flatten(.race).start(recorder.observer)
        inputB.send(value: 2)
        inputA.send(value: 1)
        inputB.sendCompleted()
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test func flattenThrottle_dropsInnersWhileOneRuns() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<SignalProducer<Int, Never>, Never>([SignalProducer(a), SignalProducer(value: 9)])
            .flatten(.throttle).start(recorder.observer)
        inputA.send(value: 1)
        inputA.sendCompleted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func flatten_innerFailureFailsResult_errorVariants() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, Never>([1, 2]).flatMap(.merge) { value in
            value == 2 ? SignalProducer<Int, TestError>(error: TestError(code: value)) : SignalProducer(value: value)
        }.start(recorder.observer)
        #expect(recorder.events == [.value(1), .failed(TestError(code: 2))])
        let promoted = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(value: 1).flatMap(.concat) { SignalProducer<Int, Never>(value: $0 + 1) }.start(promoted.observer)
        #expect(promoted.events == [.value(2), .completed])
        let never = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).flatMap(.latest) { SignalProducer<Int, Never>(value: $0 * 3) }.start(never.observer)
        #expect(never.values == [3])
    }

    @Test func flatMapError_recovers() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, TestError>(error: TestError(code: 7)).flatMapError { SignalProducer<Int, Never>(value: $0.code) }.start(recorder.observer)
        #expect(recorder.events == [.value(7), .completed])
    }
}
}
