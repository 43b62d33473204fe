import Dispatch
import Testing
@testable import Mailbox

extension Streams {
@Suite("Time, side effects and sequencing")
struct TimeAndSequencingTests {
    @Test func observeOn_deliversOnScheduler() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.observe(on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()
        #expect(recorder.events.isEmpty)
        scheduler.advance()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func startOn_runsStartHandlerOnScheduler() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).start(on: scheduler).start(recorder.observer)
        #expect(recorder.events.isEmpty)
        scheduler.advance()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func delay_shiftsValuesAndCompletion() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.delay(2, on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        scheduler.advance(by: .seconds(1))
        input.sendCompleted()
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.value(1)])
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func throttle_sendsFirstThenLatestPerInterval() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.throttle(1, on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        scheduler.advance()
        input.send(value: 2)
        input.send(value: 3)
        scheduler.advance()
        #expect(recorder.values == [1])
        scheduler.advance(by: .seconds(1))
        #expect(recorder.values == [1, 3])
        scheduler.advance(by: .seconds(5))
        input.send(value: 4)
        scheduler.advance()
        #expect(recorder.values == [1, 3, 4])
    }

    @Test func debounce_sendsAfterQuietPeriod() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.debounce(1, on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        scheduler.advance(by: .milliseconds(500))
        input.send(value: 2)
        scheduler.advance(by: .milliseconds(900))
        #expect(recorder.values.isEmpty)
        scheduler.advance(by: .milliseconds(100))
        #expect(recorder.values == [2])
        input.send(value: 3)
        input.sendCompleted()
        scheduler.run()
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test func debounce_keepsPendingWhenAsked() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.debounce(1, on: scheduler, discardWhenCompleted: false).observe(recorder.observer)
        input.send(value: 3)
        input.sendCompleted()
        scheduler.run()
        #expect(recorder.events == [.value(3), .completed])
    }

    @Test func timeout_failsAfterInterval() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>.never.timeout(after: 2, raising: TestError(code: 5), on: scheduler).start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events.isEmpty)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.failed(TestError(code: 5))])
    }

    @Test func lazyMap_transformsOnlyLatest() {
        let scheduler = TestScheduler()
        let calls = Box(0)
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.lazyMap(on: scheduler) { value -> Int in calls.value += 1; return value * 10 }.observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        scheduler.advance()
        #expect(recorder.values == [20])
        #expect(calls.value == 1)
    }

    @Test func on_runsSideEffectsInOrder_startedAfterSynchronousEvents() {
        let log = Box<[String]>([])
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).on(
            starting: { log.modify { $0.append("starting") } },
            started: { log.modify { $0.append("started") } },
            event: { e in log.modify { $0.append("event \(e)") } },
            completed: { log.modify { $0.append("completed") } },
            terminated: { log.modify { $0.append("terminated") } },
            disposed: { log.modify { $0.append("disposed") } },
            value: { v in log.modify { $0.append("value \(v)") } }
        ).start(recorder.observer)
        #expect(log.value == ["starting", "event VALUE 1", "value 1", "event COMPLETED", "completed", "terminated", "disposed", "started"])
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func logEvents_usesLogger() {
        let lines = Box<[String]>([])
        SignalProducer<Int, Never>(value: 1).logEvents(identifier: "x", events: [.value, .completed]) { id, event, _, _, _ in
            lines.modify { $0.append("\(id) \(event)") }
        }.start()
        #expect(lines.value == ["x value 1", "x completed"])
    }

    @Test func then_concat_prefix_repeat() {
        let then = EventRecorder<String, Never>()
        SignalProducer<Int, Never>([1, 2]).then(SignalProducer<String, Never>(value: "done")).start(then.observer)
        #expect(then.events == [.value("done"), .completed])
        let concat = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).concat(value: 2).prefix(value: 0).start(concat.observer)
        #expect(concat.events == [.value(0), .value(1), .value(2), .completed])
        let repeated = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>([1, 2]).repeat(2).start(repeated.observer)
        #expect(repeated.values == [1, 2, 1, 2])
        #expect(repeated.isCompleted)
        let (signal, input) = Signal<Int, Never>.pipe()
        let signalThen = EventRecorder<Int, Never>()
        signal.then(SignalProducer<Int, Never>(value: 9)).observe(signalThen.observer)
        input.send(value: 1)
        input.sendCompleted()
        #expect(signalThen.events == [.value(9), .completed])
    }

    @Test func retry_restartsOnFailure() {
        let attempts = Box(0)
        let producer = SignalProducer<Int, TestError> { observer, _ in
            let attempt = attempts.modify { $0 += 1; return $0 }
            if attempt < 3 { observer.send(error: TestError(code: attempt)) } else { observer.send(value: attempt); observer.sendCompleted() }
        }
        let recorder = EventRecorder<Int, TestError>()
        producer.retry(upTo: 2).start(recorder.observer)
        #expect(recorder.events == [.value(3), .completed])
        attempts.value = 0
        let failing = EventRecorder<Int, TestError>()
        producer.retry(upTo: 1).start(failing.observer)
        #expect(failing.events == [.failed(TestError(code: 2))])
    }

    @Test func retryWithInterval_waitsOnScheduler() {
        let scheduler = TestScheduler()
        let attempts = Box(0)
        let producer = SignalProducer<Int, TestError> { observer, _ in
            attempts.value += 1
            observer.send(error: TestError())
        }
        let recorder = EventRecorder<Int, TestError>()
        producer.retry(upTo: 1, interval: 5, on: scheduler).start(recorder.observer)
        #expect(attempts.value == 1)
        scheduler.advance(by: .seconds(5))
        #expect(attempts.value == 2)
        #expect(recorder.events == [.failed(TestError())])
    }

    @Test func replayLazily_startsOnceAndReplays() {
        let starts = Box(0)
        let inputBox = Box<Signal<Int, Never>.Observer?>(nil)
        let replayed = SignalProducer<Int, Never> { observer, _ in
            starts.value += 1
            inputBox.value = observer
        }.replayLazily(upTo: 1)
        #expect(starts.value == 0)
        let first = EventRecorder<Int, Never>()
        replayed.start(first.observer)
        inputBox.value?.send(value: 1)
        inputBox.value?.send(value: 2)
        let second = EventRecorder<Int, Never>()
        replayed.start(second.observer)
        inputBox.value?.send(value: 3)
        inputBox.value?.sendCompleted()
        let third = EventRecorder<Int, Never>()
        replayed.start(third.observer)
        #expect(starts.value == 1)
        #expect(first.values == [1, 2, 3])
        #expect(second.values == [2, 3])
        #expect(third.events == [.value(3), .completed])
    }

    @Test func replayLazily_startingAgainFromInsideADeliveryDoesNotDeadlock() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let replayed = SignalProducer(signal).replayLazily(upTo: 2)
        let nested = EventRecorder<Int, Never>()
        let outer = EventRecorder<Int, Never>()
        replayed.startWithValues { value in
            outer.record(.value(value))
            if value == 2 { replayed.start(nested.observer) }
        }
        input.send(value: 1)
        input.send(value: 2)
        input.send(value: 3)
        #expect(outer.values == [1, 2, 3])
        #expect(nested.values == [1, 2, 3])
    }

    @Test func blockingOperators() throws {
        #expect(try SignalProducer<Int, TestError>([1, 2]).first()?.get() == 1)
        #expect(try SignalProducer<Int, TestError>([1, 2]).last()?.get() == 2)
        #expect(try SignalProducer<Int, TestError>(value: 5).single()?.get() == 5)
        #expect(SignalProducer<Int, TestError>([1, 2]).single() == nil)
        #expect(throws: TestError()) { try SignalProducer<Int, TestError>(error: TestError()).wait().get() }
        let queue = QueueScheduler(name: "blocking")
        #expect(try SignalProducer<Int, TestError>(value: 8).start(on: queue).first()?.get() == 8)
    }
}
}

extension Streams {
@Suite("Throttle while, collect every")
struct ThrottleWhileCollectEveryTests {
    @Test func throttleWhile_holdsLatestWhileTrue() {
        let scheduler = TestScheduler()
        let shouldThrottle = MutableProperty(false)
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.throttle(while: shouldThrottle, on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        shouldThrottle.value = true
        input.send(value: 2)
        input.send(value: 3)
        scheduler.advance()
        #expect(recorder.values == [1])
        shouldThrottle.value = false
        scheduler.advance()
        #expect(recorder.values == [1, 3])
    }

    @Test func collectEvery_sendsPerInterval() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<[Int], Never>()
        signal.collect(every: .seconds(1), on: scheduler, skipEmpty: true, discardWhenCompleted: false).observe(recorder.observer)
        input.send(value: 1)
        input.send(value: 2)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.values == [[1, 2]])
        scheduler.advance(by: .seconds(1))
        input.send(value: 3)
        input.sendCompleted()
        scheduler.advance()
        #expect(recorder.events == [.value([1, 2]), .value([3]), .completed])
    }
}
}
