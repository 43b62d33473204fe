import Testing
@testable import Mailbox

extension Streams {
@Suite("attempt and attemptMap")
struct AttemptTests {
    @Test func attempt_forwardsValuesUntilTheActionFails() {
        let calls = Box<[Int]>([])
        let recorder = run([1, 2, 3, 4]) { signal in
            signal.attempt { value in
                calls.modify { $0.append(value) }
                return value == 3 ? .failure(TestError(code: 3)) : .success(())
            }
        }
        #expect(recorder.events == [.value(1), .value(2), .failed(TestError(code: 3))])
        // Detached at the failure: the action does not run for 4.
        #expect(calls.value == [1, 2, 3])
    }

    @Test func attemptMap_sendsSuccessesAndFailsWithTheFirstFailure() {
        let recorder = run(["1", "2", "x", "4"]) { signal in
            signal.attemptMap { text in Int(text).map(Result.success) ?? .failure(TestError(code: 9)) }
        }
        #expect(recorder.events == [.value(1), .value(2), .failed(TestError(code: 9))])
    }

    @Test func attempt_passesTerminalEventsThrough() {
        #expect(run([1], completing: true) { $0.attempt { _ in .success(()) } }.events == [.value(1), .completed])
        let (signal, input) = Signal<Int, TestError>.pipe()
        let failed = EventRecorder<Int, TestError>()
        signal.attemptMap { .success($0 * 2) }.observe(failed.observer)
        input.send(error: TestError(code: 1))
        #expect(failed.events == [.failed(TestError(code: 1))])
        let (other, otherInput) = Signal<Int, TestError>.pipe()
        let interrupted = EventRecorder<Int, TestError>()
        other.attempt { _ in .success(()) }.observe(interrupted.observer)
        otherInput.sendInterrupted()
        #expect(interrupted.events == [.interrupted])
    }

    @Test func throwingAttempt_onNeverSignal_failsWithTheThrownError() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, any Swift.Error>()
        signal.attempt { value in if value > 1 { throw TestError(code: value) } }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.send(value: 3)
        #expect(recorder.values == [1])
        #expect(recorder.error as? TestError == TestError(code: 2))
    }

    @Test func throwingAttemptMap_onAnyErrorSignal_keepsTheErrorType() {
        let (signal, input) = Signal<String, any Swift.Error>.pipe()
        let recorder = EventRecorder<Int, any Swift.Error>()
        signal.attemptMap { text -> Int in
            guard let number = Int(text) else { throw TestError(code: 7) }
            return number
        }.observe(recorder.observer)
        input.send(value: "5")
        input.send(value: "five")
        #expect(recorder.values == [5])
        #expect(recorder.error as? TestError == TestError(code: 7))
        let throwing = EventRecorder<Int, any Swift.Error>()
        SignalProducer<Int, any Swift.Error>(value: 1).attempt { _ in throw TestError(code: 1) }.start(throwing.observer)
        #expect(throwing.error as? TestError == TestError(code: 1))
    }

    @Test func producerAttemptMap_appliesToEveryRun() {
        let producer = SignalProducer<Int, Never>([1, 2, 3]).attemptMap { value -> Int in
            if value == 3 { throw TestError(code: 3) }
            return value * 10
        }
        for _ in 0..<2 {
            let recorder = EventRecorder<Int, any Swift.Error>()
            producer.start(recorder.observer)
            #expect(recorder.values == [10, 20])
            #expect(recorder.error as? TestError == TestError(code: 3))
        }
        let result = SignalProducer<Int, TestError>(value: 4).attemptMap { .success("\($0)") }
        #expect(result.single().map { try? $0.get() } == "4")
    }

    @Test func attemptAction_thatTerminatesItsOwnSignal_doesNotDeadlock() {
        // The action calls back into the signal it observes: a recursive terminal event,
        // delivered after the current value.
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.attempt { value in
            if value == 2 { input.sendCompleted() }
            return .success(())
        }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        input.send(value: 3)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func attemptAction_readingAPropertyItFeeds_doesNotDeadlock() {
        let property = MutableProperty(0)
        let recorder = EventRecorder<Int, TestError>()
        property.producer.promoteError(TestError.self)
            .attemptMap { value in .success(value + property.value) }
            .start(recorder.observer)
        property.value = 2
        #expect(recorder.values == [0, 4])
    }
}
}

extension Streams {
@Suite("Operators and their upstream signal")
struct OperatorUpstreamTests {
    @Test func operatorOnAnUnreferencedSignal_terminatingEarly_survivesLaterValues() {
        // The intermediate signals are referenced only by the operators observing them; when
        // an operator terminates early its observer is dropped, and must not take the last
        // reference to the signal it observes with it (that re-entered the signal's lock).
        let (signal, input) = Signal<Int, Never>.pipe()
        let taken = EventRecorder<Int, Never>()
        signal.map { $0 }.take(first: 1).observe(taken.observer)
        let attempted = EventRecorder<Int, any Swift.Error>()
        signal.map { $0 }.attempt { if $0 == 1 { throw TestError(code: 1) } }.observe(attempted.observer)
        let scanned = EventRecorder<Int, Never>()
        signal.map { $0 }.scanMap(0) { ($0 + $1, $0 + $1) }.take(while: { $0 < 3 }).observe(scanned.observer)
        for value in 1...4 { input.send(value: value) }
        #expect(taken.events == [.value(1), .completed])
        #expect(attempted.error as? TestError == TestError(code: 1))
        #expect(scanned.events == [.value(1), .completed])
    }
}
}
