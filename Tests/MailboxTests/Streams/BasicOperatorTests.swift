import Testing
@testable import Mailbox

/// Sends `values` then completes through a fresh pipe transformed by `operator`, recording.
func run<V: Sendable, U>(
    _ values: [V], completing: Bool = true,
    _ transform: (Signal<V, TestError>) -> Signal<U, TestError>
) -> EventRecorder<U, TestError> {
    let (signal, input) = Signal<V, TestError>.pipe()
    let recorder = EventRecorder<U, TestError>()
    transform(signal).observe(recorder.observer)
    for value in values { input.send(value: value) }
    if completing { input.sendCompleted() }
    return recorder
}

extension Streams {
@Suite("Basic operators")
struct BasicOperatorTests {
    struct Person: Sendable { var name: String }

    @Test func map_filter_compactMap_skipNil() {
        #expect(run([1, 2, 3]) { $0.map { $0 * 2 } }.values == [2, 4, 6])
        #expect(run([Person(name: "a")]) { $0.map(\.name) }.values == ["a"])
        #expect(run([1, 2]) { $0.map(value: "x") }.values == ["x", "x"])
        #expect(run([1, 2, 3, 4]) { $0.filter { $0 % 2 == 0 } }.values == [2, 4])
        #expect(run(["1", "x", "3"]) { $0.compactMap { Int($0) } }.values == [1, 3])
        #expect(run([1, nil, 3] as [Int?]) { $0.skipNil() }.values == [1, 3])
    }

    @Test func mapError_transformsFailure() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.mapError { TestError(code: $0.code + 1) }.observe(recorder.observer)
        input.send(error: TestError(code: 1))
        #expect(recorder.events == [.failed(TestError(code: 2))])
    }

    @Test func takeFirst_completesAfterCount() {
        let recorder = run([1, 2, 3], completing: false) { $0.take(first: 2) }
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(run([1]) { $0.take(first: 0) }.events == [.interrupted])
    }

    @Test func takeLast_sendsLastOnCompletion() {
        #expect(run([1, 2, 3, 4]) { $0.take(last: 2) }.events == [.value(3), .value(4), .completed])
    }

    @Test func takeWhile_and_takeUntilPredicate() {
        #expect(run([1, 2, 3, 1], completing: false) { $0.take(while: { $0 < 3 }) }.events == [.value(1), .value(2), .completed])
        #expect(run([1, 2, 3, 1], completing: false) { $0.take(until: { $0 < 2 }) }.events == [.value(1), .value(2), .completed])
    }

    @Test func takeUntilTrigger_completesOnTriggerValue() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let (trigger, fire) = Signal<(), Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.take(until: trigger).observe(recorder.observer)
        input.send(value: 1)
        fire.send(value: ())
        input.send(value: 2)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func takeDuring_completesWhenLifetimeEnds() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let (lifetime, token) = Lifetime.make()
        let recorder = EventRecorder<Int, Never>()
        signal.take(during: lifetime).observe(recorder.observer)
        input.send(value: 1)
        token.dispose()
        input.send(value: 2)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func skipFirst_skipWhile_skipUntil() {
        #expect(run([1, 2, 3]) { $0.skip(first: 2) }.values == [3])
        #expect(run([1, 2, 3, 1]) { $0.skip(while: { $0 < 2 }) }.values == [2, 3, 1])
        let (signal, input) = Signal<Int, Never>.pipe()
        let (trigger, fire) = Signal<(), Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.skip(until: trigger).observe(recorder.observer)
        input.send(value: 1)
        fire.send(value: ())
        input.send(value: 2)
        #expect(recorder.values == [2])
    }

    @Test func scan_reduce() {
        #expect(run([1, 2, 3]) { $0.scan(0, +) }.values == [1, 3, 6])
        #expect(run([1, 2, 3]) { $0.scan(into: [Int]()) { $0.append($1) } }.values == [[1], [1, 2], [1, 2, 3]])
        #expect(run([1, 2, 3]) { $0.reduce(10, +) }.events == [.value(16), .completed])
        #expect(run([Int]()) { $0.reduce(10, +) }.values == [10])
        #expect(run([1, 2]) { $0.reduce(into: 0) { $0 += $1 } }.values == [3])
    }

    @Test func collect_variants() {
        #expect(run([1, 2, 3]) { $0.collect() }.values == [[1, 2, 3]])
        #expect(run([Int]()) { $0.collect() }.values == [[]])
        #expect(run([1, 2, 3, 4, 5]) { $0.collect(count: 2) }.values == [[1, 2], [3, 4], [5]])
        #expect(run([1, 2, 3, 4]) { $0.collect { $0.reduce(0, +) >= 3 } }.values == [[1, 2], [3], [4]])
        #expect(run([1, 2, 5, 6]) { $0.collect { collected, next in next - collected.last! > 1 } }.values == [[1, 2], [5, 6]])
    }

    @Test func combinePrevious_pairsValues() {
        let pairs = run([1, 2, 3]) { $0.combinePrevious() }.values
        #expect(pairs.map { [$0.0, $0.1] } == [[1, 2], [2, 3]])
        let withInitial = run([1, 2]) { $0.combinePrevious(0) }.values
        #expect(withInitial.map { [$0.0, $0.1] } == [[0, 1], [1, 2]])
    }

    @Test func skipRepeats_uniqueValues() {
        #expect(run([1, 1, 2, 2, 1]) { $0.skipRepeats() }.values == [1, 2, 1])
        #expect(run([1, 3, 2, 4]) { $0.skipRepeats { $0 % 2 == $1 % 2 } }.values == [1, 2])
        #expect(run([1, 2, 1, 3, 2]) { $0.uniqueValues() }.values == [1, 2, 3])
        #expect(run(["a", "bb", "c"]) { $0.uniqueValues { $0.count } }.values == ["a", "bb"])
    }

    @Test func materialize_dematerialize() {
        let events = run([1]) { $0.materialize().promoteError(TestError.self) }.values
        #expect(events == [.value(1), .completed])
        let (signal, input) = Signal<Event<Int, TestError>, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.dematerialize().observe(recorder.observer)
        input.send(value: .value(1))
        input.send(value: .failed(TestError(code: 4)))
        #expect(recorder.events == [.value(1), .failed(TestError(code: 4))])
    }

    @Test func materializeResults_dematerializeResults() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let results = EventRecorder<Result<Int, TestError>, Never>()
        signal.materializeResults().observe(results.observer)
        input.send(value: 1)
        input.send(error: TestError())
        #expect(results.values == [.success(1), .failure(TestError())])
        #expect(results.isCompleted)
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Result<Int, TestError>, Never>([.success(2), .failure(TestError(code: 1))])
            .dematerializeResults().start(recorder.observer)
        #expect(recorder.events == [.value(2), .failed(TestError(code: 1))])
    }

    @Test func promoteValue_changesValueType() {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Never, Never>.empty.promoteValue(Int.self).start(recorder.observer)
        #expect(recorder.events == [.completed])
    }

    @Test func producerOperators_applyPerRun() {
        let producer = SignalProducer<Int, Never>([1, 2, 3, 4])
        let recorder = EventRecorder<[Int], Never>()
        producer.map { $0 + 1 }.filter { $0 % 2 == 0 }.skip(first: 1).take(first: 5).scan(0, +)
            .skipRepeats().collect().start(recorder.observer)
        #expect(recorder.events == [.value([4]), .completed])
        let second = EventRecorder<Int, Never>()
        producer.take(last: 1).start(second.observer)
        #expect(second.values == [4])
    }
}
}
