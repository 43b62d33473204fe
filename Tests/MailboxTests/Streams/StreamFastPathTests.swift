import Dispatch
import Testing
@testable import Mailbox

extension Streams {
/// The paths the stream performance work introduced: a non-generic signal status (a pending
/// failure's error is boxed), delivery through the snapshot's buffer, the run's tokenless
/// lifetime, `_startWithCore`/`attach` (used by `flatten`), the specialised interrupter.
@Suite("Stream fast paths")
struct StreamFastPathTests {
    @Test func deferredFailure_carriesItsError() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let first = EventRecorder<Int, TestError>()
        let second = EventRecorder<Int, TestError>()
        signal.observe { event in
            first.record(event)
            // A recursive terminal event: deferred until the value reached every observer.
            if case .value(1) = event { input.send(error: TestError(code: 42)) }
        }
        signal.observe(second.observer)
        input.send(value: 1)
        input.send(value: 2)
        #expect(first.events == [.value(1), .failed(TestError(code: 42))])
        #expect(second.events == [.value(1), .failed(TestError(code: 42))])
    }

    @Test func failureSentFromAnotherThreadDuringDelivery_isDeliveredWithItsError() {
        for _ in 0..<200 {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Int, TestError>()
            signal.observe(recorder.observer)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    for value in 0..<20 { input.send(value: value) }
                } else {
                    input.send(error: TestError(code: 7))
                }
            }
            #expect(recorder.error == TestError(code: 7))
            #expect(recorder.events.filter(\.isTerminating).count == 1)
        }
    }

    @Test func concurrentTerminalEvents_exactlyOneIsDeliveredAndTheTeardownRunsOnce() {
        for _ in 0..<300 {
            let teardowns = Box(0)
            let (signal, input) = Signal<Int, TestError>.pipe(disposable: AnyDisposable { teardowns.modify { $0 += 1 } })
            let recorder = EventRecorder<Int, TestError>()
            signal.observe(recorder.observer)
            DispatchQueue.concurrentPerform(iterations: 3) { index in
                switch index {
                case 0: input.send(error: TestError(code: 1))
                case 1: input.sendCompleted()
                default: input.sendInterrupted()
                }
            }
            #expect(recorder.events.count == 1)
            #expect(recorder.terminal != nil)
            #expect(teardowns.value == 1)
            input.sendCompleted()
            #expect(recorder.events.count == 1)
        }
    }

    @Test func terminalEventToATerminatedSignal_doesNothing() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.observe(recorder.observer)
        input.sendCompleted()
        input.sendInterrupted()
        input.sendCompleted()
        #expect(recorder.events == [.completed])
    }

    @Test func observersAddedAndRemovedDuringDelivery_takeEffectFromTheNextValue() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let late = EventRecorder<Int, Never>()
        let early = EventRecorder<Int, Never>()
        let earlyHandle = Box<(any Disposable)?>(nil)
        earlyHandle.value = signal.observe(early.observer)
        signal.observeValues { value in
            if value == 1 {
                signal.observe(late.observer)
                earlyHandle.value?.dispose()
            }
        }
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        #expect(early.events == [.value(1)])
        #expect(late.events == [.value(2), .completed])
    }

    @Test func observerList_movesBetweenInlineAndArrayKeepingOrderAndTokens() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = Box<[String]>([])
        func observer(_ name: String) -> Signal<Int, Never>.Observer {
            Signal<Int, Never>.Observer { event in log.modify { $0.append("\(name)\(event.value.map(String.init) ?? "-")") } }
        }
        let a = signal.observe(observer("a"))           // inline
        input.send(value: 1)
        let b = signal.observe(observer("b"))           // a moves into the array
        input.send(value: 2)
        a?.dispose()
        let c = signal.observe(observer("c"))           // appended after b
        input.send(value: 3)
        b?.dispose()
        c?.dispose()
        input.send(value: 4)                            // nobody
        a?.dispose()                                    // a stale handle removes nothing
        let d = signal.observe(observer("d"))           // inline again
        input.send(value: 5)
        withExtendedLifetime(d) {}
        input.sendCompleted()
        #expect(log.value == ["a1", "a2", "b2", "b3", "c3", "d5", "d-"])
    }

    @Test func inlineObserver_isReleasedOnTerminationAndOnDetach() {
        let tracker = LifetimeTracker()
        let (signal, input) = Signal<Int, Never>.pipe()
        do {
            let captured = tracker.instance()
            signal.observe { _ in _ = captured }
        }
        #expect(tracker.liveCount == 1)
        input.sendCompleted()
        #expect(tracker.liveCount == 0)

        let (other, otherInput) = Signal<Int, Never>.pipe()
        let handle: (any Disposable)?
        do {
            let captured = tracker.instance()
            handle = other.observe { _ in _ = captured }
        }
        otherInput.send(value: 1)
        handle?.dispose()
        otherInput.send(value: 2)  // refreshes the snapshot, which held the observer
        #expect(tracker.liveCount == 0)
    }

    @Test func manyObservers_eachReceiveEveryValueInOrder() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorders = (0..<40).map { _ in EventRecorder<Int, Never>() }
        var handles: [(any Disposable)?] = []
        for recorder in recorders { handles.append(signal.observe(recorder.observer)) }
        input.send(value: 1)
        for index in stride(from: 0, to: 40, by: 2) { handles[index]?.dispose() }
        input.send(value: 2)
        input.sendCompleted()
        for (index, recorder) in recorders.enumerated() {
            let expected: [Event<Int, Never>] = index % 2 == 0 ? [.value(1)] : [.value(1), .value(2), .completed]
            #expect(recorder.events == expected)
        }
    }

    @Test func valuesOnlyObserver_runsForValuesThroughBothSendPathsAndIgnoresTerminalEvents() {
        let values = Box<[Int]>([])
        let observer = Signal<Int, TestError>.Observer._values { value in values.modify { $0.append(value) } }
        observer.send(value: 1)
        observer.send(.value(2))
        observer.send(error: TestError())
        observer.sendCompleted()
        observer.sendInterrupted()
        #expect(values.value == [1, 2])

        let (signal, input) = Signal<Int, TestError>.pipe()
        let observed = Box<[Int]>([])
        signal.observeValues { value in observed.modify { $0.append(value) } }
        input.send(value: 3)
        input.send(error: TestError())
        #expect(observed.value == [3])

        let started = Box<[Int]>([])
        SignalProducer<Int, TestError>(values: 4, 5).startWithValues { value in started.modify { $0.append(value) } }
        #expect(started.value == [4, 5])
    }

    @Test func startWithCore_skipsTheRunWhenSetupInterruptsIt() {
        let started = Box(0)
        let producer = SignalProducer<Int, Never> { _, _ in started.modify { $0 += 1 } }
        let recorder = EventRecorder<Int, Never>()
        producer._startWithCore { core, interrupter in
            core.attach(recorder.observer)
            interrupter.dispose()
            #expect(interrupter.isDisposed)
        }
        #expect(started.value == 0)
        #expect(recorder.events == [.interrupted])
    }

    @Test func attachToATerminatedCore_sendsInterrupted() {
        let core = _SignalCore<Int, Never>()
        core.sendTerminal(.completed)
        let recorder = EventRecorder<Int, Never>()
        core.attach(recorder.observer)
        #expect(recorder.events == [.interrupted])
    }

    @Test func interrupterThroughAnyDisposable_interruptsOnceAndEndsTheRunLifetime() {
        let ended = Box(0)
        let recorder = EventRecorder<Int, TestError>()
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { ended.modify { $0 += 1 } }
            observer.send(value: 1)
        }
        let disposable: any Disposable = producer.start(recorder.observer)
        #expect(!disposable.isDisposed)
        disposable.dispose()
        disposable.dispose()
        #expect(disposable.isDisposed)
        #expect(recorder.events == [.value(1), .interrupted])
        #expect(ended.value == 1)
    }

    @Test func runLifetime_endsBeforeStartReturnsWhenTheRunTerminatesSynchronously() {
        let lifetimeBox = Box<Lifetime?>(nil)
        SignalProducer<Int, Never> { observer, lifetime in
            lifetimeBox.value = lifetime
            observer.sendCompleted()
        }.start()
        #expect(lifetimeBox.value?.hasEnded == true)
        // Observing the ended run lifetime runs at once.
        let runs = Box(0)
        #expect(lifetimeBox.value?.observeEnded { runs.modify { $0 += 1 } } == nil)
        #expect(runs.value == 1)
    }

    @Test func flatMapLatest_interruptsThePreviousInnerBeforeTheNextStarts_andForwardsOnlyTheCurrent() {
        let log = Box<[String]>([])
        let inputs = Box<[Int: Signal<Int, Never>.Observer]>([:])
        let (outer, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        outer.flatMap(.latest) { index in
            SignalProducer<Int, Never> { observer, lifetime in
                log.modify { $0.append("start \(index)") }
                inputs.modify { $0[index] = observer }
                lifetime.observeEnded { log.modify { $0.append("end \(index)") } }
            }
        }.observe(recorder.observer)
        input.send(value: 1)
        inputs.value[1]?.send(value: 10)
        input.send(value: 2)
        inputs.value[1]?.send(value: 11)  // interrupted: ignored
        inputs.value[2]?.send(value: 20)
        inputs.value[2]?.sendCompleted()
        input.sendCompleted()
        #expect(log.value == ["start 1", "end 1", "start 2", "end 2"])
        #expect(recorder.events == [.value(10), .value(20), .completed])
        inputs.value = [:]
    }

    @Test(arguments: [FlattenStrategy.merge, .concat, .concurrent(limit: 2), .latest, .race, .throttle])
    func flatten_outerInterruptionInterruptsTheRunningInner(strategy: FlattenStrategy) {
        let ended = Box(0)
        let (outer, input) = Signal<Int, Never>.pipe()
        let handle = outer.flatMap(strategy) { _ in
            SignalProducer<Int, Never> { observer, lifetime in
                lifetime.observeEnded { ended.modify { $0 += 1 }; _ = observer }
            }
        }.observe { _ in }
        input.send(value: 1)
        #expect(ended.value == 0)
        withExtendedLifetime(handle) {}
        input.sendInterrupted()
        #expect(ended.value == 1)
    }
}
}
