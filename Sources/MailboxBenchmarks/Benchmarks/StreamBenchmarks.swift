import Mailbox
import Synchronization

// Stream benchmarks (Signal, SignalProducer, operators, Property). Each is measured against a
// plain-closure baseline doing the same work by direct calls through opaque closures, in the
// same process, alternating rounds (see `interleavedMedians`). What ReactiveSwift 7.2.1 costs
// for the same shapes on this machine class is in docs/Performance.md (Streams).

extension BenchmarkRegistry {
    static let streams: [Benchmark] = [
        Benchmark(
            "stream-pipe",
            summary: "N values through Signal.pipe() -> map -> filter -> one observer; baseline: the same closures called directly",
            parameters: [.init("N", default: 10_000_000)]
        ) { sizes in
            compareStream(count: sizes[0], ours: streamPipe, baseline: closurePipe)
        },
        Benchmark(
            "property-set",
            summary: "N sets of a MutableProperty<Int> with one observer of its signal; baseline: store and call the observer closure",
            parameters: [.init("N", default: 10_000_000)]
        ) { sizes in
            compareStream(count: sizes[0], ours: propertySet, baseline: closureSet)
        },
        Benchmark(
            "producer-start",
            summary: "N starts of SignalProducer { observer, _ in send one value; complete }; baseline: calling the same start closure directly",
            parameters: [.init("N", default: 1_000_000)]
        ) { sizes in
            compareStream(count: sizes[0], ours: producerStart, baseline: closureStart)
        },
        Benchmark(
            "flatmap-latest",
            summary: "N outer values through flatMap(.latest) into a one-value inner producer each; baseline: calling the inner closure directly",
            parameters: [.init("N", default: 1_000_000)]
        ) { sizes in
            compareStream(count: sizes[0], ours: flatMapLatest, baseline: closureFlatMap)
        },
    ]
}

/// Keeps a value observable to the optimiser.
@inline(never)
func blackHole<T>(_ value: T) {}

/// Hides a value from the optimiser, so closures are called, not inlined away.
@inline(never)
func opaque<T>(_ value: T) -> T { value }

/// A sum the observers add to; read once at the end.
// Touched by one thread at a time: the benchmarks send synchronously from the calling thread.
final class Sink: @unchecked Sendable {
    var total = 0
    func add(_ value: Int) { total &+= value }
}

/// Runs `ours` and `baseline` (each timing `count` operations, after an untimed warm-up)
/// alternately and reports the medians.
func compareStream(count: Int, ours: (Int) -> Int, baseline: (Int) -> Int) -> BenchmarkResult {
    _ = ours(min(count, 10_000))
    _ = baseline(min(count, 10_000))
    var oursCheck = 0
    var baselineCheck = 0
    let medians = interleavedMedians(
        rounds: comparisonRounds,
        ours: { MonotonicClock.measure { oursCheck = ours(count) }.seconds },
        baseline: { MonotonicClock.measure { baselineCheck = baseline(count) }.seconds }
    )
    return BenchmarkResult(
        seconds: medians.ours,
        msgs: count,
        baseline: .init(name: "plain-closures", seconds: medians.baseline),
        ok: oursCheck == baselineCheck
    )
}

func streamPipe(_ count: Int) -> Int {
    let (signal, input) = Signal<Int, Never>.pipe()
    let sink = Sink()
    signal.map { $0 &+ 1 }.filter { $0 & 1 == 0 }.observeValues { sink.add($0) }
    for value in 0..<count { input.send(value: value) }
    input.sendCompleted()
    return sink.total
}

func closurePipe(_ count: Int) -> Int {
    let transform: (Int) -> Int = opaque { $0 &+ 1 }
    let predicate: (Int) -> Bool = opaque { $0 & 1 == 0 }
    let sink = Sink()
    let observer: (Int) -> Void = opaque { sink.add($0) }
    for value in 0..<count {
        let mapped = transform(value)
        if predicate(mapped) { observer(mapped) }
    }
    return sink.total
}

func propertySet(_ count: Int) -> Int {
    let property = MutableProperty(0)
    let sink = Sink()
    property.signal.observeValues { sink.add($0) }
    for value in 0..<count { property.value = value }
    return sink.total
}

func closureSet(_ count: Int) -> Int {
    let sink = Sink()
    let storage = Sink()
    let observer: (Int) -> Void = opaque { sink.add($0) }
    for value in 0..<count {
        storage.total = value
        observer(value)
    }
    blackHole(storage.total)
    return sink.total
}

func producerStart(_ count: Int) -> Int {
    let sink = Sink()
    let producer = SignalProducer<Int, Never> { observer, _ in
        observer.send(value: 1)
        observer.sendCompleted()
    }
    for _ in 0..<count { producer.startWithValues { sink.add($0) } }
    return sink.total
}

func closureStart(_ count: Int) -> Int {
    let sink = Sink()
    let start: ((Int) -> Void) -> Void = opaque { send in send(1) }
    for _ in 0..<count { start { sink.add($0) } }
    return sink.total
}

func flatMapLatest(_ count: Int) -> Int {
    let sink = Sink()
    let (signal, input) = Signal<Int, Never>.pipe()
    signal
        .flatMap(.latest) { value in
            SignalProducer<Int, Never> { observer, _ in
                observer.send(value: value)
                observer.sendCompleted()
            }
        }
        .observeValues { sink.add($0) }
    for value in 0..<count { input.send(value: value) }
    input.sendCompleted()
    return sink.total
}

func closureFlatMap(_ count: Int) -> Int {
    let sink = Sink()
    let inner: (Int, (Int) -> Void) -> Void = opaque { value, send in send(value) }
    for value in 0..<count { inner(value) { sink.add($0) } }
    return sink.total
}
