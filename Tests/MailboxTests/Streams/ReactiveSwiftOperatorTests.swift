import Foundation
import Testing
@testable import Mailbox

/// Starts `producer` and records its events.
func record<V, E>(_ producer: SignalProducer<V, E>) -> EventRecorder<V, E> {
    let recorder = EventRecorder<V, E>()
    producer.start(recorder.observer)
    return recorder
}

extension Streams {
@Suite("Operators added for ReactiveSwift parity")
struct ReactiveSwiftOperatorTests {
    // MARK: scanMap, filterMap, flatten()

    @Test func scanMap_sendsTheOutputAndKeepsTheState() {
        let recorder = run([1, 2, 3]) { $0.scanMap(0) { sum, value in (sum + value, "sum \(sum + value)") } }
        #expect(recorder.events == [.value("sum 1"), .value("sum 3"), .value("sum 6"), .completed])
        let into = run([1, 2, 3]) { $0.scanMap(into: [Int]()) { seen, value -> Int in seen.append(value); return seen.count } }
        #expect(into.values == [1, 2, 3])
        // Each run of a producer starts from the initial state.
        let producer = SignalProducer<Int, Never>([1, 2]).scanMap(10) { ($0 + $1, $0 + $1) }
        #expect(record(producer).values == [11, 13])
        #expect(record(producer).values == [11, 13])
        let producerInto = SignalProducer<Int, Never>([1, 2]).scanMap(into: 0) { state, value -> Int in state += value; return state * 2 }
        #expect(record(producerInto).values == [2, 6])
    }

    @Test func filterMap_isCompactMap() {
        // Called through a protocol: `filterMap` is deprecated (as in ReactiveSwift), and a
        // direct call would be a warning.
        func filterMapped<S: _FilterMapping>(_ stream: S) -> S.Mapped where S.Element == String {
            stream.filterMap { Int($0) }
        }
        let (signal, input) = Signal<String, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        filterMapped(signal).observe(recorder.observer)
        input.send(value: "1")
        input.send(value: "x")
        input.send(value: "3")
        #expect(recorder.values == [1, 3])
        #expect(record(filterMapped(SignalProducer<String, Never>(["4", "y"]))).values == [4])
    }

    @Test func flattenSequences_sendsEveryElementInOrder() {
        #expect(run([[1, 2], [], [3]]) { $0.flatten() }.events == [.value(1), .value(2), .value(3), .completed])
        #expect(record(SignalProducer<[Int], TestError>(value: [4, 5]).flatten()).events == [.value(4), .value(5), .completed])
    }

    // MARK: take(untilReplacement:)

    @Test func takeUntilReplacement_switchesToTheReplacementAtItsFirstEvent() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let (replacement, replacementInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.take(untilReplacement: replacement).observe(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()     // not forwarded: the replacement may still come
        #expect(recorder.events == [.value(1)])
        replacementInput.send(value: 10)
        replacementInput.send(value: 11)
        replacementInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(10), .value(11), .completed])
    }

    @Test func takeUntilReplacement_detachesTheOriginal() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let (replacement, replacementInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.take(untilReplacement: replacement).observe(recorder.observer)
        replacementInput.send(value: 10)
        input.send(value: 1)
        input.send(error: TestError(code: 1))
        #expect(recorder.events == [.value(10)])
        let producer = SignalProducer<Int, TestError>(value: 1).concat(.never)
            .take(untilReplacement: SignalProducer<Int, TestError>(value: 2))
        // The replacement starts first (as in ReactiveSwift), so the original is never heard.
        #expect(record(producer).events == [.value(2), .completed])
        #expect(record(SignalProducer<Int, TestError>.never.take(untilReplacement: replacement)).values.isEmpty)
    }

    // MARK: Errors and time

    @Test func timeoutOnNeverStream_failsWithTheGivenErrorType() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.timeout(after: 2, raising: TestError(code: 5), on: scheduler).observe(recorder.observer)
        input.send(value: 1)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.value(1)])
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.value(1), .failed(TestError(code: 5))])
        let finished = EventRecorder<Int, TestError>()
        SignalProducer<Int, Never>(value: 3).timeout(after: 1, raising: TestError(code: 1), on: scheduler).start(finished.observer)
        scheduler.run()
        #expect(finished.events == [.value(3), .completed])
    }

    @Test func concatError_failsAfterCompletion() {
        #expect(record(SignalProducer<Int, TestError>(value: 1).concat(error: TestError(code: 2))).events == [.value(1), .failed(TestError(code: 2))])
        let failing = SignalProducer<Int, TestError>(error: TestError(code: 1)).concat(error: TestError(code: 2))
        #expect(record(failing).events == [.failed(TestError(code: 1))])
    }

    @Test func promoteIdentityOverloads_keepTheTypes() {
        let never = SignalProducer<Int, Never>(value: 1).promoteError()
        let same: SignalProducer<Int, Never> = never
        #expect(record(same).values == [1])
        let (signal, input) = Signal<Never, TestError>.pipe()
        let promoted: Signal<Never, TestError> = signal.promoteValue()
        let recorder = EventRecorder<Never, TestError>()
        promoted.observe(recorder.observer)
        input.sendCompleted()
        #expect(recorder.isCompleted)
    }

    @Test func timer_sendsTheDateEveryInterval() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Date, Never>()
        let run = SignalProducer<Date, Never>.timer(interval: .seconds(2), on: scheduler).start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        #expect(recorder.values.isEmpty)
        scheduler.advance(by: .seconds(3))
        #expect(recorder.values == [scheduler.startDate.addingTimeInterval(2), scheduler.startDate.addingTimeInterval(4)])
        run.dispose()
        scheduler.advance(by: .seconds(10))
        #expect(recorder.events.count == 3)
        #expect(recorder.isInterrupted)
    }

    @Test func interval_sendsTheSequenceThenCompletes() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<String, Never>()
        SignalProducer<String, Never>.interval(["a", "b"], interval: .seconds(1), on: scheduler).start(recorder.observer)
        scheduler.advance(by: .seconds(2))
        #expect(recorder.events == [.value("a"), .value("b")])
        scheduler.advance(by: .seconds(1))
        #expect(recorder.events == [.value("a"), .value("b"), .completed])
        let counter = EventRecorder<Int, Never>()
        let ticks = SignalProducer<Int, Never>.interval(.milliseconds(500), on: scheduler).take(first: 3).start(counter.observer)
        scheduler.advance(by: .seconds(5))
        #expect(counter.events == [.value(0), .value(1), .value(2), .completed])
        ticks.dispose()
    }

    // MARK: Producers from other streams

    @Test func genericOverloads_acceptSignalsAndProperties() {
        let property = MutableProperty(1)
        let (signal, input) = Signal<Int, Never>.pipe()
        #expect(record(SignalProducer(property).take(first: 1)).values == [1])
        let merged = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 0).merge(with: signal).start(merged.observer)
        input.send(value: 5)
        #expect(merged.values == [0, 5])
        let combined = EventRecorder<String, Never>()
        SignalProducer<Int, Never>(value: 7).combineLatest(with: property).map { "\($0)-\($1)" }.start(combined.observer)
        property.value = 2
        #expect(combined.values == ["7-1", "7-2"])
        let zipped = EventRecorder<String, Never>()
        SignalProducer<Int, Never>([1, 2]).zip(with: property).map { "\($0)\($1)" }.start(zipped.observer)
        property.value = 3
        #expect(zipped.values == ["12", "23"])
        let then = record(SignalProducer<Int, Never>(value: 0).then(property))
        #expect(then.values == [3])
        let concatenated = record(SignalProducer<Int, Never>(value: 0).concat(property.producer.take(first: 1)).prefix(SignalProducer(value: -1)))
        #expect(concatenated.events == [.value(-1), .value(0), .value(3), .completed])
        let sampled = EventRecorder<Int, Never>()
        let (trigger, fire) = Signal<(), Never>.pipe()
        SignalProducer<Int, Never>(value: 9).concat(.never).sample(on: trigger).start(sampled.observer)
        fire.send(value: ())
        #expect(sampled.values == [9])
        let latest = EventRecorder<String, Never>()
        SignalProducer<Int, Never>([1, 2]).withLatest(from: property).map { "\($0):\($1)" }.start(latest.observer)
        #expect(latest.values == ["1:3", "2:3"])
        let untilTriggered = EventRecorder<Int, Never>()
        let (stop, stopInput) = Signal<(), Never>.pipe()
        property.producer.take(until: stop).start(untilTriggered.observer)
        stopInput.send(value: ())
        #expect(untilTriggered.events == [.value(3), .completed])
        let recovered = record(SignalProducer<Int, TestError>(error: TestError(code: 1)).flatMapError { _ in property })
        #expect(recovered.values == [3])
    }

    @Test func thenOverloads_typeCheckLikeReactiveSwift() {
        // A replacement of the same type given as an implicit member.
        #expect(record(SignalProducer<Int, TestError>(value: 1).then(.init(value: 2))).values == [2])
        // A producer that cannot fail, then one that can.
        let thenFailing: SignalProducer<String, TestError> = SignalProducer<Int, Never>(value: 1).then(SignalProducer<String, TestError>(error: TestError(code: 3)))
        #expect(record(thenFailing).error == TestError(code: 3))
        // One that can fail, then one that cannot.
        let thenNever: SignalProducer<String, TestError> = SignalProducer<Int, TestError>(value: 1).then(SignalProducer<String, Never>(value: "x"))
        #expect(record(thenNever).values == ["x"])
        #expect(record(SignalProducer<Int, TestError>(error: TestError(code: 4)).then(.init(value: 2))).events == [.failed(TestError(code: 4))])
    }

    @Test func flatMapConcreteOverloads_acceptImplicitMemberProducers() {
        let empty: SignalProducer<Int, Never> = SignalProducer<Int, Never>([1, 2]).flatMap(.merge) { _ in .empty }
        #expect(record(empty).events == [.completed])
        let values = SignalProducer<Int, Never>([1, 2]).flatMap(.concat) { .init(value: $0 * 2) }
        #expect(record(values).values == [2, 4])
        let failing = SignalProducer<Int, Never>(value: 1).flatMap(.latest) { _ in SignalProducer<Int, TestError>(error: TestError(code: 1)) }
        #expect(record(failing).error == TestError(code: 1))
        let (signal, input) = Signal<Int, Never>.pipe()
        let fromSignal = EventRecorder<Int, Never>()
        signal.flatMap(.merge) { value in SignalProducer<Int, Never>(value: value + 1) }.observe(fromSignal.observer)
        input.send(value: 1)
        #expect(fromSignal.values == [2])
        let bothNever = record(SignalProducer<SignalProducer<Int, Never>, Never>(value: .init(value: 3)).flatten(.latest))
        #expect(bothNever.events == [.value(3), .completed])
    }

    // MARK: Start order and arities

    @Test func binaryProducerOperators_startInReactiveSwiftsOrder() {
        let order = Box<[String]>([])
        func producer(_ name: String, _ values: [Int]) -> SignalProducer<Int, Never> {
            SignalProducer(values).on(starting: { order.modify { $0.append(name) } })
        }
        let combined = record(producer("a", [1, 2]).combineLatest(with: producer("b", [10, 20])).map { $0 + $1 })
        // ReactiveSwift starts `self` first: `a` sends 1, 2, then `b` pairs with 2.
        #expect(order.value == ["a", "b"])
        #expect(combined.values == [12, 22])
        order.value = []
        let sampled = record(producer("a", [1]).sample(with: producer("s", [5])).map { $0 + $1 })
        #expect(order.value == ["a", "s"])
        #expect(sampled.values == [6])
        order.value = []
        _ = record(producer("a", [1]).withLatest(from: producer("w", [5])))
        // `withLatest(from:)`, `take(until:)`: the argument starts first.
        #expect(order.value == ["w", "a"])
        order.value = []
        _ = record(SignalProducer.combineLatest(producer("1", [1]), producer("2", [2]), producer("3", [3])))
        #expect(order.value == ["1", "2", "3"])
        order.value = []
        _ = record(SignalProducer<Int, Never>.zip([producer("x", [1]), producer("y", [2])]))
        #expect(order.value == ["x", "y"])
    }

    @Test func nAryStatics_upToTenInputs() {
        let p = { (value: Int) in SignalProducer<Int, Never>(value: value) }
        let ten = record(SignalProducer.combineLatest(p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), p(9), p(10)).map { $0 + $9 })
        #expect(ten.events == [.value(11), .completed])
        let zipped = record(SignalProducer.zip(p(1), p(2), p(3), p(4), p(5), p(6), p(7)).map { $0 * $6 })
        #expect(zipped.values == [7])
        let merged = record(SignalProducer.merge(p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8)))
        #expect(merged.values == [1, 2, 3, 4, 5, 6, 7, 8])
        let (a, inputA) = Signal<Int, Never>.pipe()
        let signals = EventRecorder<Int, Never>()
        Signal.zip(a, a, a, a, a, a, a, a, a).map { $0 + $8 }.observe(signals.observer)
        inputA.send(value: 4)
        inputA.sendCompleted()
        #expect(signals.events == [.value(8), .completed])
    }

    @Test func sequenceStatics_emptySentinelAndEmptyInput() {
        #expect(record(SignalProducer<Int, Never>.combineLatest([SignalProducer<Int, Never>]())).events == [.completed])
        #expect(record(SignalProducer<Int, Never>.combineLatest([SignalProducer<Int, Never>](), emptySentinel: [0])).events == [.value([0]), .completed])
        #expect(record(SignalProducer<Int, Never>.zip([SignalProducer<Int, Never>](), emptySentinel: [])).events == [.value([]), .completed])
        let property = MutableProperty(5)
        let fromProperties = record(SignalProducer<Int, Never>.combineLatest([property, property], emptySentinel: [0]))
        #expect(fromProperties.values == [[5, 5]])
    }

    // MARK: Smaller pieces

    @Test func observerReceiveAndTerminate_sendEvents() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)
        input.receive(1)
        input.terminate(.failed(TestError(code: 2)))
        #expect(recorder.events == [.value(1), .failed(TestError(code: 2))])
        for (termination, expected) in [(Termination<TestError>.completed, Event<Int, TestError>.completed), (.interrupted, .interrupted)] {
            let (other, otherInput) = Signal<Int, TestError>.pipe()
            let otherRecorder = EventRecorder<Int, TestError>()
            other.observe(otherRecorder.observer)
            otherInput.terminate(termination)
            #expect(otherRecorder.events == [expected])
        }
    }

    @Test func signalAndProducerProtocols_letExtensionsConstrainValues() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.doubled().observe(recorder.observer)
        input.send(value: 2)
        #expect(recorder.values == [4])
        #expect(record(SignalProducer<Int, Never>(value: 3).doubled()).values == [6])
        let produced: SignalProducer<Int, Never>.ProducedSignal = signal
        #expect(produced === signal)
    }

    @Test func resultProducer_sendsTheSuccessOrFails() {
        #expect(record(Result<Int, TestError>.success(1).producer).events == [.value(1), .completed])
        #expect(record(Result<Int, TestError>.failure(TestError(code: 2)).producer).events == [.failed(TestError(code: 2))])
        #expect(record(SignalProducer<Int, TestError>(value: 0).flatMap(.concat) { _ in Result<Int, TestError>.success(5) }).values == [5])
    }

    @Test func throwingProducerInit_failsWithTheThrownError() {
        let producer = SignalProducer<Int, any Swift.Error> { () throws -> Int in throw TestError(code: 8) }
        #expect(record(producer).error as? TestError == TestError(code: 8))
        #expect(record(SignalProducer<Int, any Swift.Error> { () throws -> Int in 3 }).values == [3])
    }

    @Test func optionalReconstructing_andEquatableEvents() {
        #expect(Int?(reconstructing: 3) == 3)
        #expect(Event<Int, TestError>.value(1) == .value(1))
        #expect(Event<Int, TestError>.value(1) != .completed)
        #expect(Event<Int, TestError>.failed(TestError(code: 1)) != .failed(TestError(code: 2)))
        #expect(ActionError<TestError>.disabled == .disabled)
        #expect(ActionError<TestError>.producerFailed(TestError(code: 1)) != .disabled)
    }

    @Test func scopedSerialDisposable_innerReplacesAndDisposes() {
        let first = AnyDisposable()
        let second = AnyDisposable()
        let scoped = ScopedDisposable(SerialDisposable())
        scoped.inner = first
        scoped.inner = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        let current: (any Disposable)? = scoped.inner
        #expect(current === second)
        scoped.dispose()
        #expect(second.isDisposed)
    }
}
}

extension SignalProtocol where Value == Int {
    /// An operator written the ReactiveSwift way, on the protocol.
    func doubled() -> Signal<Int, Error> { signal.map { $0 * 2 } }
}

extension SignalProducerProtocol where Value == Int {
    /// An operator written the ReactiveSwift way, on the protocol.
    func doubled() -> SignalProducer<Int, Error> { producer.map { $0 * 2 } }
}

/// `filterMap` without a deprecation warning at the call site (see `filterMap_isCompactMap`).
protocol _FilterMapping {
    associatedtype Element
    associatedtype Mapped
    func filterMap(_ transform: @escaping @Sendable (Element) -> Int?) -> Mapped
}

extension Signal: _FilterMapping where Value == String, Error == Never {
    typealias Element = String
    typealias Mapped = Signal<Int, Never>
}

extension SignalProducer: _FilterMapping where Value == String, Error == Never {
    typealias Element = String
    typealias Mapped = SignalProducer<Int, Never>
}

extension Streams {
@Suite("Reactive extensions")
struct ReactiveExtensionTests {
    @Test func notifications_areSentWhileObserved() {
        let center = NotificationCenter()
        let name = Notification.Name("mailbox.test")
        let received = Box<[Int]>([])
        let observation = center.reactive.notifications(forName: name).observeValues { notification in
            received.modify { $0.append(notification.userInfo?["n"] as? Int ?? -1) }
        }
        center.post(name: name, object: nil, userInfo: ["n": 1])
        center.post(name: Notification.Name("other"), object: nil, userInfo: ["n": 9])
        #expect(received.value == [1])
        // Detaching the only observer of the released signal tears it down, removing the
        // notification observer.
        observation?.dispose()
        center.post(name: name, object: nil, userInfo: ["n": 2])
        #expect(received.value == [1])
        #expect(NotificationCenter.reactive == Reactive<NotificationCenter>.self)
    }
}
}
