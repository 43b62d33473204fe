import Dispatch
import Synchronization
import Testing
@testable import Mailbox

/// One test per contract of `docs/StreamContracts.md`; test names start with the contract
/// number.
extension Streams {
@Suite("Stream contracts")
struct StreamContractsTests {
    @Test func c01_grammar_nothingFollowsATerminalEvent() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)
        input.send(value: 1)
        input.send(error: TestError())
        input.send(value: 2)
        input.sendCompleted()
        input.sendInterrupted()
        #expect(recorder.events == [.value(1), .failed(TestError())])
    }

    @Test func c02_serialDelivery_concurrentSendersNeverOverlap() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let inFlight = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let received = Atomic<Int>(0)
        signal.observeValues { _ in
            if inFlight.add(1, ordering: .sequentiallyConsistent).newValue != 1 {
                overlaps.add(1, ordering: .relaxed)
            }
            received.add(1, ordering: .relaxed)
            inFlight.subtract(1, ordering: .sequentiallyConsistent)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for value in 0..<2_000 { input.send(value: value) }
        }
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(received.load(ordering: .relaxed) == 8_000)
    }

    @Test func c02_serialDelivery_terminalEventWaitsForValueInFlightOnAnotherThread() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        signal.observe { event in
            recorder.record(event)
            if case .value = event {
                inside.signal()
                release.wait()
            }
        }
        DispatchQueue.global().async {
            input.send(value: 1)
            done.signal()
        }
        inside.wait()
        input.sendCompleted()   // returns at once: delivery is deferred to the sending thread
        #expect(recorder.events == [.value(1)])
        release.signal()
        done.wait()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func c03_signalsAreHot_lateObserversMissEarlierEvents() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let early = EventRecorder<Int, Never>()
        signal.observe(early.observer)
        input.send(value: 1)
        let late = EventRecorder<Int, Never>()
        signal.observe(late.observer)
        input.send(value: 2)
        #expect(early.values == [1, 2])
        #expect(late.values == [2])
    }

    @Test func c04_observingATerminatedSignal_deliversOneInterrupted() {
        let (signal, input) = Signal<Int, Never>.pipe()
        input.sendCompleted()
        let recorder = EventRecorder<Int, Never>()
        let disposable = signal.observe(recorder.observer)
        #expect(disposable == nil)
        input.send(value: 1)
        #expect(recorder.events == [.interrupted])
    }

    @Test func c05_detachingIsSilent() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        let disposable = signal.observe(recorder.observer)
        input.send(value: 1)
        disposable?.dispose()
        input.send(value: 2)
        input.sendCompleted()
        #expect(recorder.events == [.value(1)])
    }

    @Test func c06_disposingAStartedProducer_deliversExactlyOneInterrupted() {
        let recorder = EventRecorder<Int, Never>()
        let disposable = SignalProducer<Int, Never>.never.start(recorder.observer)
        disposable.dispose()
        disposable.dispose()
        #expect(recorder.events == [.interrupted])
        let finished = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(value: 1).start(finished.observer).dispose()
        #expect(finished.events == [.value(1), .completed])
    }

    @Test func c06_aRunThroughASchedulerOperator_isInterruptedOnTheScheduler() {
        let scheduler = TestScheduler()
        let upstreamEnded = Locked(false)
        let upstream = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { upstreamEnded.withLock { $0 = true } }
            observer.send(value: 1)
        }
        for (name, producer) in [
            ("observe(on:)", upstream.observe(on: scheduler)),
            ("delay", upstream.delay(1, on: scheduler)),
            ("debounce", upstream.debounce(1, on: scheduler)),
            ("throttle", upstream.throttle(1, on: scheduler)),
        ] {
            upstreamEnded.withLock { $0 = false }
            let recorder = EventRecorder<Int, Never>()
            let disposable = producer.start(recorder.observer)
            disposable.dispose()
            #expect(upstreamEnded.snapshot, "\(name): the upstream is interrupted at once")
            #expect(recorder.events.isEmpty, "\(name): nothing is delivered inside dispose()")
            scheduler.run()
            #expect(recorder.events == [.interrupted], "\(name)")
        }
    }

    @Test func c07_aSignalLivesWhileReferencedOrObserved() {
        var input: Signal<Int, Never>.Observer?
        let recorder = EventRecorder<Int, Never>()
        do {
            let (signal, pipeInput) = Signal<Int, Never>.pipe()
            input = pipeInput
            signal.map { $0 + 1 }.observe(recorder.observer)
        }
        // Neither `signal` nor the mapped signal is referenced: observed, they live.
        input?.send(value: 1)
        #expect(recorder.values == [2])
        input = nil
        #expect(recorder.events == [.value(2), .interrupted])
    }

    @Test func c07_anUnobservedOperatorChainDoesNoWork() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let calls = Box(0)
        do {
            let chain = signal.map { value -> Int in calls.value += 1; return value }.filter { _ in true }
            input.send(value: 1)
            withExtendedLifetime(chain) {}
        }
        #expect(calls.value == 1)
        input.send(value: 2)
        input.send(value: 3)
        #expect(calls.value == 1)
        #expect(signal.core.observers.isEmpty)
    }

    @Test func c08_producersAreColdAndStartSynchronously() {
        let starts = Box(0)
        let producer = SignalProducer<Int, Never> { observer, _ in
            starts.value += 1
            observer.send(value: starts.value)
            observer.sendCompleted()
        }
        #expect(starts.value == 0)
        let first = EventRecorder<Int, Never>()
        producer.start(first.observer)
        #expect(first.events == [.value(1), .completed])
        let second = EventRecorder<Int, Never>()
        producer.start(second.observer)
        #expect(second.events == [.value(2), .completed])
    }

    @Test func c09_startedFiresAfterSynchronousEvents() {
        let log = Box<[String]>([])
        SignalProducer<Int, Never>([1, 2])
            .on(started: { log.modify { $0.append("started") } }, value: { v in log.modify { $0.append("\(v)") } })
            .start()
        #expect(log.value == ["1", "2", "started"])
    }

    @Test(arguments: [FlattenStrategy.merge, .concat, .concurrent(limit: 2), .latest, .race, .throttle])
    func c10_flatten_innerInterruptionCountsAsCompletion(strategy: FlattenStrategy) {
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<SignalProducer<Int, Never>, Never>(value: SignalProducer { observer, _ in
            observer.send(value: 1)
            observer.sendInterrupted()
        }).flatten(strategy).start(recorder.observer)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test func c10_flattenLatest_disposesThePreviousInnerAtOnce() {
        let log = Box<[String]>([])
        let (outer, input) = Signal<Int, Never>.pipe()
        outer.flatMap(.latest) { index in
            SignalProducer<Int, Never> { observer, lifetime in
                log.modify { $0.append("start \(index)") }
                lifetime.observeEnded { log.modify { $0.append("end \(index)") }; _ = observer }
            }
        }.observe { _ in }
        input.send(value: 1)
        input.send(value: 2)
        #expect(log.value == ["start 1", "end 1", "start 2"])
    }

    @Test func c11_combineLatest_completesOnlyWhenEveryInputCompletes() {
        let (a, inputA) = Signal<Int, Never>.pipe()
        let (b, inputB) = Signal<Int, Never>.pipe()
        let (c, inputC) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<[Int], Never>()
        Signal.combineLatest([a, b, c]).observe(recorder.observer)
        inputA.sendCompleted()
        inputB.sendCompleted()
        #expect(!recorder.isCompleted)
        inputC.sendCompleted()
        #expect(recorder.isCompleted)
    }

    @Test func c12_mutablePropertyNeverDeduplicates() {
        let property = MutableProperty(1)
        let recorder = EventRecorder<Int, Never>()
        property.signal.observe(recorder.observer)
        property.value = 1
        property.value = 1
        #expect(recorder.values == [1, 1])
    }

    @Test func c13_actionRefusesOverlappingRuns() {
        let action = Action<Void, Int, Never> { SignalProducer.never }
        let first = action.apply(()).start()
        let second = EventRecorder<Int, ActionError<Never>>()
        action.apply(()).start(second.observer)
        #expect(second.events == [.failed(.disabled)])
        first.dispose()
        let third = EventRecorder<Int, ActionError<Never>>()
        let run = action.apply(()).start(third.observer)
        #expect(third.events.isEmpty)
        run.dispose()
    }

    @Test func c14_recursiveTerminalEventIsDeferredUntilTheValueReachedEveryObserver() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        signal.observe { event in
            first.record(event)
            if case .value = event { input.sendCompleted() }
        }
        signal.observe(second.observer)
        input.send(value: 1)
        #expect(first.events == [.value(1), .completed])
        #expect(second.events == [.value(1), .completed])
    }

    @Test func c15_observersAreReleasedOnTermination() {
        let tracker = LifetimeTracker()
        let (signal, input) = Signal<Int, Never>.pipe()
        do {
            let tracked = tracker.instance()
            signal.map { $0 * 2 }.filter { _ in true }.observeValues { _ in _ = tracked }
            let producerTracked = tracker.instance()
            SignalProducer<Int, Never>.never.map { $0 }.start { _ in _ = producerTracked }.dispose()
            let flattenTracked = tracker.instance()
            SignalProducer<Int, Never>(value: 1).flatMap(.latest) { SignalProducer(value: $0) }.startWithValues { _ in _ = flattenTracked }
        }
        #expect(tracker.liveCount == 1)
        input.send(value: 1)
        input.sendCompleted()
        #expect(tracker.liveCount == 0)
        #expect(tracker.instanceCount == 3)
    }

    @Test func c15_droppedInputReleasesObservers() {
        let tracker = LifetimeTracker()
        do {
            let (signal, input) = Signal<Int, Never>.pipe()
            let tracked = tracker.instance()
            signal.observeValues { _ in _ = tracked }
            input.send(value: 1)
        }
        #expect(tracker.liveCount == 0)
    }

    @Test func c17_operatorsDoNotDeadlockOnReentrantEvents() {
        let a = SignalProducer<Int, Never>(value: 1).concat(.never)
        let b = SignalProducer<Int, Never>(value: 2).concat(.never)
        let recorder = EventRecorder<Int, Never>()
        // `take(first: 1)` completes while combineLatest is delivering; that interrupts both
        // inputs, whose `interrupted` re-enters combineLatest on the same thread.
        a.combineLatest(with: b).map { $0 + $1 }.take(first: 1).start(recorder.observer)
        #expect(recorder.events == [.value(3), .completed])
    }

    @Test func c18_composedPropertiesFollowTheirRootsLifetime() {
        let recorder = EventRecorder<Int, Never>()
        var root: MutableProperty<Int>? = MutableProperty(1)
        weak let weakRoot = root
        var composed: Property<Int>? = root!.map { $0 + 1 }.map { $0 * 2 }
        composed!.signal.observe(recorder.observer)
        let kept = composed!.combineLatest(with: Property(value: 0)).map { $0.0 }
        composed = nil
        root!.value = 2
        root = nil
        #expect(weakRoot == nil)
        #expect(recorder.events == [.value(6), .completed])
        #expect(kept.value == 6)
    }

    @Test func c16_recursiveValueSendIsQueuedUntilTheCurrentValueHasReachedEveryObserver() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal.observeValues { value in
                log.append("first \(value)")
                if value == 0 { input.send(value: 1) }
            }
            signal.observeValues { log.append("second \($0)") }
            input.send(value: 0)
        }
        #expect(finished)
        #expect(log.snapshot == ["first 0", "second 0", "first 1", "second 1"])
    }

    @Test func c16_recursiveSetOfAPropertyIsDeliveredDepthFirst() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let property = MutableProperty(0)
            property.signal.observeValues { value in
                log.append("first \(value)")
                if value == 1 { property.value = 2 }
            }
            property.signal.observeValues { log.append("second \($0)") }
            property.value = 1
        }
        #expect(finished)
        #expect(log.snapshot == ["first 1", "first 2", "second 2", "second 1"])
    }
}
}
