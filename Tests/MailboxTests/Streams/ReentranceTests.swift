import Testing
@testable import Mailbox

// The re-entrance sweep of issue #11: for every family of public stream entry points that calls
// user code, a call back into the same object from that code, on the same thread. None may
// deadlock (each runs under a watchdog); the outcomes are listed in docs/StreamContracts.md,
// "Re-entrance", beside what ReactiveSwift 7.2.1 does. Properties have their own suite
// (`PropertyReentranceTests`).

extension Streams {
@Suite("Re-entrance sweep")
struct ReentranceTests {
    // MARK: Signal observers

    @Test func signalObserver_sendingAValueIntoItsOwnSignal_isDeliveredAfterTheCurrentValue() {
        // ReactiveSwift 7.2.1 deadlocks (traps in debug builds): recursive value sends are a
        // contract violation there. Mailbox queues the value instead.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal.observeValues { value in
                log.append("first \(value)")
                if value == 1 {
                    input.send(value: 2)
                    input.send(value: 3)
                    log.append("first: sends returned")
                }
            }
            signal.observeValues { log.append("second \($0)") }
            input.send(value: 1)
        }
        #expect(finished)
        #expect(log.snapshot == [
            "first 1", "first: sends returned", "second 1",
            "first 2", "second 2",
            "first 3", "second 3",
        ])
    }

    @Test func signalObserver_sendingValuesThenATerminalEvent_deliversThemInOrder() {
        let recorder = EventRecorder<Int, Never>()
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal.observe(recorder.observer)
            signal.observeValues { value in
                if value == 1 {
                    input.send(value: 2)
                    input.sendCompleted()
                    input.send(value: 3)
                }
            }
            input.send(value: 1)
        }
        #expect(finished)
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func signalObserver_sendingATerminalEvent_isDeliveredAfterTheCurrentValue() {
        // ReactiveSwift 7.2.1: the same (terminal events may be sent recursively).
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal.observe { event in
                log.append("first \(event)")
                if event.value == 1 { input.sendCompleted() }
            }
            signal.observe { log.append("second \($0)") }
            input.send(value: 1)
        }
        #expect(finished)
        #expect(log.snapshot == ["first VALUE 1", "second VALUE 1", "first COMPLETED", "second COMPLETED"])
    }

    @Test func signalObserver_observingItsOwnSignal_addsAnObserverForTheNextEvents() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            let added = Locked(false)
            signal.observe { event in
                log.append("first \(event)")
                if !added.withLock({ added in defer { added = true }; return added }) {
                    signal.observe { log.append("added \($0)") }
                }
            }
            input.send(value: 1)
            input.send(value: 2)
            input.sendCompleted()
        }
        #expect(finished)
        #expect(log.snapshot == [
            "first VALUE 1",
            "first VALUE 2", "added VALUE 2",
            "first COMPLETED", "added COMPLETED",
        ])
    }

    @Test func signalObserver_detachingItself_receivesNothingMore() {
        let recorder = EventRecorder<Int, Never>()
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            let observation = Locked<(any Disposable)?>(nil)
            let disposable = signal.observe { event in
                recorder.record(event)
                observation.withLock { $0 }?.dispose()
            }
            observation.withLock { $0 = disposable }
            input.send(value: 1)
            input.send(value: 2)
        }
        #expect(finished)
        #expect(recorder.events == [.value(1)])
    }

    // MARK: Operator closures

    @Test func operatorClosures_sendingIntoTheirOwnUpstream_areDeliveredInOrder() {
        let mapped = EventRecorder<Int, Never>()
        let scanned = EventRecorder<Int, Never>()
        let flattened = EventRecorder<Int, Never>()
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal
                .map { value -> Int in
                    if value == 1 { input.send(value: 2) }
                    return value * 10
                }
                .filter { _ in true }
                .observe(mapped.observer)
            signal
                .scan(0) { sum, value in
                    if value == 2 { input.send(value: 3) }
                    return sum + value
                }
                .observe(scanned.observer)
            signal
                .flatMap(.latest) { value -> SignalProducer<Int, Never> in
                    if value == 3 { input.sendCompleted() }
                    return SignalProducer(value: value)
                }
                .observe(flattened.observer)
            input.send(value: 1)
        }
        #expect(finished)
        #expect(mapped.events == [.value(10), .value(20), .value(30), .completed])
        #expect(scanned.events == [.value(1), .value(3), .value(6), .completed])
        #expect(flattened.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test func sideEffect_sendingIntoItsOwnUpstream_isDeliveredAfterTheCurrentValue() {
        // ReactiveSwift 7.2.1 deadlocks (traps in debug builds).
        let recorder = EventRecorder<Int, Never>()
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal
                .on(value: { value in if value == 1 { input.send(value: 2) } })
                .observe(recorder.observer)
            input.send(value: 1)
        }
        #expect(finished)
        #expect(recorder.values == [1, 2])
    }

    @Test func combineLatestObserver_sendingIntoAnInput_isDeliveredAfterTheCurrentValue() {
        // ReactiveSwift 7.2.1 deadlocks (traps in debug builds).
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (a, aInput) = Signal<Int, Never>.pipe()
            let (b, bInput) = Signal<Int, Never>.pipe()
            a.combineLatest(with: b).observeValues { pair in
                log.append("\(pair.0),\(pair.1)")
                if pair == (1, 10) { bInput.send(value: 20) }
                if pair == (1, 20) { aInput.send(value: 2) }
            }
            aInput.send(value: 1)
            bInput.send(value: 10)
        }
        #expect(finished)
        #expect(log.snapshot == ["1,10", "1,20", "2,20"])
    }

    // MARK: Producers

    @Test func startHandler_startingItsOwnProducer_runsTheNestedRunFirst() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let itself = Locked<SignalProducer<Int, Never>?>(nil)
            let depth = Locked(0)
            let producer = SignalProducer<Int, Never> { observer, _ in
                let level = depth.increment()
                if level < 3 {
                    itself.withLock { $0 }?.startWithValues { log.append("level \(level) saw \($0)") }
                }
                observer.send(value: level)
                observer.sendCompleted()
            }
            itself.withLock { $0 = producer }
            producer.startWithValues { log.append("outer \($0)") }
            itself.withLock { $0 = nil }
        }
        #expect(finished)
        #expect(log.snapshot == ["level 2 saw 3", "level 1 saw 2", "outer 1"])
    }

    @Test func producerObserver_startingTheSameProducer_runsTheNestedRunToCompletionFirst() {
        // ReactiveSwift 7.2.1 prints exactly this.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let producer = SignalProducer<Int, Never>([1, 2])
            let started = Locked(false)
            producer.startWithValues { value in
                log.append("outer \(value)")
                if !started.withLock({ started in defer { started = true }; return started }) {
                    producer.startWithValues { log.append("inner \($0)") }
                }
            }
        }
        #expect(finished)
        #expect(log.snapshot == ["outer 1", "inner 1", "inner 2", "outer 2"])
    }

    @Test func producerObserver_interruptingItsOwnRun_stopsTheRun() {
        let recorder = EventRecorder<Int, Never>()
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            let run = Locked<(any Disposable)?>(nil)
            let disposable = SignalProducer(signal).start { event in
                recorder.record(event)
                if event.value == 1 { run.withLock { $0 }?.dispose() }
            }
            run.withLock { $0 = disposable }
            input.send(value: 1)
            input.send(value: 2)
        }
        #expect(finished)
        #expect(recorder.events == [.value(1), .interrupted])
    }

    @Test func producerObserver_sendingIntoItsOwnSource_isDeliveredAfterTheCurrentValue() {
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            SignalProducer(signal).map { $0 * 2 }.startWithValues { value in
                log.append("got \(value)")
                if value == 2 { input.send(value: 5) }
                log.append("after \(value)")
            }
            input.send(value: 1)
        }
        #expect(finished)
        #expect(log.snapshot == ["got 2", "after 2", "got 10", "after 10"])
    }

    // MARK: Actions and bindings

    @Test func action_applyingItselfFromItsExecuteClosure_failsAsDisabled() {
        // ReactiveSwift 7.2.1: the nested attempt fails with `disabled`, the outer run goes on.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let holder = Locked<Action<Int, Int, Never>?>(nil)
            let action = Action<Int, Int, Never> { input in
                SignalProducer { observer, _ in
                    holder.withLock { $0 }?.apply(input + 1).start { log.append("nested \($0)") }
                    observer.send(value: input)
                    observer.sendCompleted()
                }
            }
            holder.withLock { $0 = action }
            action.apply(1).start { log.append("outer \($0)") }
            holder.withLock { $0 = nil }
        }
        #expect(finished)
        #expect(log.snapshot == ["nested FAILED disabled", "outer VALUE 1", "outer COMPLETED"])
    }

    @Test func action_applyingItselfFromAValuesObserver_failsAsDisabled() {
        // ReactiveSwift 7.2.1: values are sent while the action executes.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let action = Action<Int, Int, Never> { SignalProducer(value: $0) }
            action.values.observeValues { value in
                log.append("values \(value)")
                if value == 1 { action.apply(2).start { log.append("nested \($0)") } }
            }
            action.apply(1).start()
        }
        #expect(finished)
        #expect(log.snapshot == ["values 1", "nested FAILED disabled"])
    }

    @Test func action_applyingItselfWhenIsExecutingTurnsFalse_startsTheNextRun() {
        // Setting `isExecuting` from inside its own observer is a recursive property set.
        // ReactiveSwift 7.2.1 logs the same entries (it sends the outer run's `completed`
        // before `isExecuting` turns false; Mailbox's `Action` the other way round, so the two
        // logs are compared separately).
        let executing = Locked<[Bool]>([])
        let runs = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let action = Action<Int, Int, Never> { SignalProducer(value: $0) }
            let applied = Locked(false)
            action.isExecuting.signal.observeValues { isExecuting in
                executing.append(isExecuting)
                if !isExecuting, !applied.withLock({ applied in defer { applied = true }; return applied }) {
                    action.apply(2).start { runs.append("nested \($0)") }
                }
            }
            action.apply(1).start { runs.append("outer \($0)") }
        }
        #expect(finished)
        #expect(executing.snapshot == [true, false, true, false])
        #expect(runs.snapshot.sorted() == ["nested COMPLETED", "nested VALUE 2", "outer COMPLETED", "outer VALUE 1"])
    }

    @Test func bindingTarget_whoseActionSendsIntoTheBoundSignal_seesTheValueNext() {
        let log = Locked<[Int]>([])
        let finished = finishesWithoutDeadlock {
            let (signal, input) = Signal<Int, Never>.pipe()
            let (lifetime, token) = Lifetime.make()
            let target = BindingTarget<Int>(lifetime: lifetime) { value in
                log.append(value)
                if value < 3 { input.send(value: value + 1) }
            }
            target <~ signal
            input.send(value: 1)
            withExtendedLifetime(token) {}
        }
        #expect(finished)
        #expect(log.snapshot == [1, 2, 3])
    }

    // MARK: Lifetimes, disposables, schedulers

    @Test func lifetimeEndingAction_observingOrEndingTheSameLifetime_runsAtOnceOrDoesNothing() {
        // ReactiveSwift 7.2.1 prints the same sequence.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let (lifetime, token) = Lifetime.make()
            lifetime.observeEnded {
                log.append("first, hasEnded \(lifetime.hasEnded)")
                lifetime.observeEnded { log.append("observed from the first") }
                token.dispose()
            }
            lifetime.observeEnded { log.append("second") }
            token.dispose()
        }
        #expect(finished)
        #expect(log.snapshot == ["first, hasEnded true", "observed from the first", "second"])
    }

    @Test func disposalActions_reenteringTheirDisposable_doNotDeadlock() {
        // ReactiveSwift 7.2.1 prints the same sequence.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let holder = Locked<(any Disposable)?>(nil)
            let disposable = AnyDisposable {
                log.append("action, isDisposed \(holder.withLock { $0 }?.isDisposed ?? false)")
                holder.withLock { $0 }?.dispose()
            }
            holder.withLock { $0 = disposable }
            disposable.dispose()
            holder.withLock { $0 = nil }

            let composite = CompositeDisposable()
            composite += AnyDisposable {
                log.append("member")
                composite += AnyDisposable { log.append("added while disposing") }
            }
            composite.dispose()

            let serial = SerialDisposable()
            serial.inner = AnyDisposable {
                log.append("inner")
                serial.inner = AnyDisposable { log.append("replacement") }
            }
            serial.dispose()
        }
        #expect(finished)
        #expect(log.snapshot == [
            "action, isDisposed true",
            "member", "added while disposing",
            "inner", "replacement",
        ])
    }

    @Test func schedulerActions_schedulingOnTheirScheduler_runInOrder() {
        // ReactiveSwift 7.2.1 prints the same sequences.
        let log = Locked<[String]>([])
        let finished = finishesWithoutDeadlock {
            let immediate = ImmediateScheduler()
            immediate.schedule {
                log.append("immediate outer")
                immediate.schedule { log.append("immediate nested") }
                log.append("immediate outer end")
            }
            let test = TestScheduler()
            test.schedule {
                log.append("test first")
                test.schedule { log.append("test scheduled from first") }
            }
            test.schedule(after: .seconds(1)) { log.append("test at 1s") }
            test.advance()
            log.append("after advance()")
            test.advance(by: .seconds(1))
        }
        #expect(finished)
        #expect(log.snapshot == [
            "immediate outer", "immediate nested", "immediate outer end",
            "test first", "test scheduled from first", "after advance()", "test at 1s",
        ])
    }
}
}
