import Testing
@testable import Mailbox

// Issue #11, semantic 5: a composed property does not own its sources' lifetime. Its signal and
// producer follow the *root* properties: they complete when the roots go away, whether or not
// the composed property is still held, and a composed property still held keeps its last
// value. The outcomes are what ReactiveSwift 7.2.1 prints for the same programs.

extension Streams {
@Suite("Composed properties and their sources' lifetimes")
struct PropertyCompositionLifetimeTests {
    @Test func aComposedProperty_doesNotKeepItsRootAlive() {
        weak var weakRoot: MutableProperty<Int>?
        var mapped: Property<Int>?
        var chained: Property<Int>?
        do {
            let root = MutableProperty(1)
            weakRoot = root
            mapped = root.map { $0 * 10 }
            chained = mapped?.map { $0 + 1 }
            root.value = 2
        }
        #expect(weakRoot == nil)
        #expect(mapped?.value == 20)
        #expect(chained?.value == 21)
    }

    @Test func releasingTheRoot_completesEveryComposedSignalAndProducer_evenOfReleasedProperties() {
        let log = Locked<[String]>([])
        var root: MutableProperty<Int>? = MutableProperty(1)
        var mapped: Property<Int>? = root!.map { $0 * 10 }
        let chained = mapped!.map { $0 + 1 }
        mapped!.signal.observe { log.append("mapped.signal \($0)") }
        mapped!.producer.start { log.append("mapped.producer \($0)") }
        chained.signal.observe { log.append("chained.signal \($0)") }
        chained.producer.start { log.append("chained.producer \($0)") }
        root!.value = 2
        mapped = nil
        root!.value = 3
        #expect(chained.value == 31)
        log.withLock { $0 = [] }

        root = nil
        // ReactiveSwift 7.2.1 prints these four lines, in this order.
        #expect(log.snapshot == [
            "chained.signal COMPLETED",
            "chained.producer COMPLETED",
            "mapped.signal COMPLETED",
            "mapped.producer COMPLETED",
        ])
        #expect(chained.value == 31)
    }

    @Test func aComposedProperty_deliversItsRootsChanges_untilTheRootGoesAway() {
        let log = Locked<[String]>([])
        var root: MutableProperty<Int>? = MutableProperty(1)
        var mapped: Property<Int>? = root!.map { $0 * 10 }
        mapped!.producer.start { log.append("producer \($0)") }
        mapped!.signal.observe { log.append("signal \($0)") }
        root!.value = 2
        #expect(log.snapshot == ["producer VALUE 10", "producer VALUE 20", "signal VALUE 20"])
        log.withLock { $0 = [] }
        // Releasing the composed property itself changes nothing for its observers.
        mapped = nil
        root!.value = 3
        #expect(log.snapshot == ["producer VALUE 30", "signal VALUE 30"])
        log.withLock { $0 = [] }
        root = nil
        #expect(log.snapshot == ["producer COMPLETED", "signal COMPLETED"])
    }

    @Test func aProducerOfAReleasedComposedProperty_startsWithItsLatestValue() {
        let log = Locked<[String]>([])
        let root = MutableProperty(1)
        var mapped: Property<Int>? = root.map { $0 * 10 }
        let producer = mapped!.producer
        mapped = nil
        root.value = 2
        producer.start { log.append("late producer \($0)") }
        root.value = 3
        #expect(log.snapshot == ["late producer VALUE 20", "late producer VALUE 30"])
    }

    @Test func combineLatest_completesOnceBothSourcesAreGone() {
        let recorder = EventRecorder<[Int], Never>()
        var a: MutableProperty<Int>? = MutableProperty(1)
        var b: MutableProperty<Int>? = MutableProperty(2)
        let combined = Property<Int>.combineLatest(a!, b!).map { [$0, $1] }
        combined.signal.observe(recorder.observer)
        a!.value = 3
        a = nil
        #expect(!recorder.isCompleted)
        b!.value = 4
        #expect(combined.value == [3, 4])
        b = nil
        #expect(recorder.events == [.value([3, 2]), .value([3, 4]), .completed])
        #expect(combined.value == [3, 4])
    }

    @Test func combineLatestOfASequence_completesOnceEverySourceIsGone() throws {
        let recorder = EventRecorder<[Int], Never>()
        var sources: [MutableProperty<Int>]? = [MutableProperty(1), MutableProperty(2), MutableProperty(3)]
        let combined = try #require(Property<Int>.combineLatest(sources!))
        combined.signal.observe(recorder.observer)
        sources![1].value = 20
        sources = nil
        #expect(recorder.events == [.value([1, 20, 3]), .completed])
        #expect(combined.value == [1, 20, 3])
    }

    @Test func zip_completesWhenASourceIsGoneWithNothingLeftToPair() {
        let recorder = EventRecorder<[Int], Never>()
        var a: MutableProperty<Int>? = MutableProperty(1)
        let b: MutableProperty<Int>? = MutableProperty(2)
        let zipped = a!.zip(with: b!).map { [$0, $1] }
        zipped.signal.observe(recorder.observer)
        a!.value = 3
        b!.value = 4
        a = nil
        #expect(recorder.events == [.value([3, 4]), .completed])
        #expect(zipped.value == [3, 4])
        withExtendedLifetime(b) {}
    }

    @Test func viewsFiltersSkipRepeatsAndFlatMaps_completeWithTheirRoot() {
        let log = Locked<[String]>([])
        var root: MutableProperty<Int>? = MutableProperty(1)
        let view = Property(root!)
        let deduplicated = root!.skipRepeats()
        let filtered = root!.filter(initial: 0) { $0 > 1 }
        let flattened = root!.flatMap(.latest) { Property(value: $0 * 2) }
        view.signal.observe { log.append("view \($0)") }
        deduplicated.signal.observe { log.append("skipRepeats \($0)") }
        filtered.signal.observe { log.append("filter \($0)") }
        flattened.signal.observe { log.append("flatMap \($0)") }
        root!.value = 2
        root = nil
        #expect(log.snapshot == [
            "view VALUE 2", "skipRepeats VALUE 2", "filter VALUE 2", "flatMap VALUE 4",
            "view COMPLETED", "skipRepeats COMPLETED", "filter COMPLETED", "flatMap COMPLETED",
        ])
        #expect([view.value, deduplicated.value, filtered.value, flattened.value] == [2, 2, 2, 4])
    }

    @Test func anUnobservedReleasedComposedProperty_stopsFollowingItsRoot() {
        // Nobody can observe it any more: its run of the root's producer is interrupted, so the
        // transform stops running (and the root's observer list shrinks back).
        let calls = Locked(0)
        let root = MutableProperty(1)
        var mapped: Property<Int>? = root.map { value -> Int in
            calls.increment()
            return value * 10
        }
        root.value = 2
        #expect(calls.snapshot == 2)
        mapped = nil
        root.value = 3
        #expect(calls.snapshot == 2)
        withExtendedLifetime(mapped) {}
    }

    @Test func aComposedPropertyAndItsStreams_leakNothingOnceTheRootIsGone() {
        let tracker = LifetimeTracker()
        weak var weakComposed: Property<Int>?
        do {
            let root = MutableProperty(1)
            let tracked = tracker.instance()
            let composed = root.map { value -> Int in
                _ = tracked
                return value + 1
            }
            weakComposed = composed
            composed.signal.observeValues { _ in _ = tracked }
            composed.producer.startWithValues { _ in _ = tracked }
            root.value = 2
        }
        #expect(weakComposed == nil)
        #expect(tracker.liveCount == 0)
    }
}
}
