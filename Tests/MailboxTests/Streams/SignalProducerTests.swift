import Testing
@testable import Mailbox

extension Streams {
@Suite("SignalProducer")
struct SignalProducerTests {
    @Test func initialisers_sendTheirValues() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(value: 1).start(recorder.observer)
        #expect(recorder.events == [.value(1), .completed])

        let failed = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(error: TestError(code: 2)).start(failed.observer)
        #expect(failed.events == [.failed(TestError(code: 2))])

        let result = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(result: .success(4)).start(result.observer)
        #expect(result.events == [.value(4), .completed])

        let sequence = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>([1, 2, 3]).start(sequence.observer)
        #expect(sequence.events == [.value(1), .value(2), .value(3), .completed])

        let variadic = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2).start(variadic.observer)
        #expect(variadic.values == [1, 2])
    }

    @Test func lazyAction_runsOnEachStart() {
        let calls = Box(0)
        let producer = SignalProducer<Int, Never> { () -> Int in calls.modify { $0 += 1; return $0 } }
        #expect(calls.value == 0)
        let values = Box<[Int]>([])
        producer.startWithValues { v in values.modify { $0.append(v) } }
        producer.startWithValues { v in values.modify { $0.append(v) } }
        #expect(values.value == [1, 2])
    }

    @Test func fromSignal_forwardsFromStart() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let producer = SignalProducer(signal)
        input.send(value: 0)
        let recorder = EventRecorder<Int, Never>()
        producer.start(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func emptyAndNever() {
        let empty = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>.empty.start(empty.observer)
        #expect(empty.events == [.completed])
        let never = EventRecorder<Int, Never>()
        let disposable = SignalProducer<Int, Never>.never.start(never.observer)
        #expect(never.events.isEmpty)
        disposable.dispose()
        #expect(never.events == [.interrupted])
    }

    @Test func startWithVariants() {
        let completed = Box(false), failed = Box<TestError?>(nil), interrupted = Box(false), result = Box<[Result<Int, TestError>]>([])
        SignalProducer<Int, TestError>(value: 1).startWithCompleted { completed.value = true }
        SignalProducer<Int, TestError>(error: TestError()).startWithFailed { failed.value = $0 }
        SignalProducer<Int, TestError>(value: 3).startWithResult { r in result.modify { $0.append(r) } }
        SignalProducer<Int, TestError>.never.startWithInterrupted { interrupted.value = true }.dispose()
        #expect(completed.value)
        #expect(failed.value == TestError())
        #expect(interrupted.value)
        #expect(result.value == [.success(3)])
    }

    @Test func startWithSignal_observersAttachBeforeStart() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 5).startWithSignal { signal, _ in
            signal.observe(recorder.observer)
        }
        #expect(recorder.events == [.value(5), .completed])
    }

    @Test func interrupt_endsTheRunsLifetime() {
        let ended = Box(false)
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { ended.value = true; _ = observer }
        }
        let disposable = producer.start()
        #expect(!ended.value)
        disposable.dispose()
        #expect(ended.value)
        #expect(disposable.isDisposed)
    }

    @Test func lift_appliesSignalOperatorPerRun() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>([1, 2, 3]).lift { $0.map { $0 * 10 } }.start(recorder.observer)
        #expect(recorder.values == [10, 20, 30])
        #expect(recorder.isCompleted)
    }
}
}
