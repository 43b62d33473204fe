import Testing
@testable import Mailbox

// Issue #11, semantic 4: releasing a signal's input observer. The outcomes are what
// ReactiveSwift 7.2.1 prints for the same programs.

extension Streams {
@Suite("Releasing a signal's input")
struct SignalInputReleaseTests {
    @Test func releasingTheLastReferenceToTheInput_interruptsThenEndsTheLifetime() {
        let log = Locked<[String]>([])
        let input = Locked<Signal<Int, Never>.Observer?>(nil)
        var lifetime: Lifetime?
        let signal = Signal<Int, Never> { observer, signalLifetime in
            input.withLock { $0 = observer }
            lifetime = signalLifetime
        }
        lifetime?.observeEnded { log.append("lifetime ended") }
        signal.observe { event in log.append("observer: \(event)") }
        #expect(lifetime?.hasEnded == false)
        #expect(log.snapshot.isEmpty)
        input.withLock { $0 = nil }
        #expect(log.snapshot == ["observer: INTERRUPTED", "lifetime ended"])
        #expect(lifetime?.hasEnded == true)
    }

    @Test func theLifetime_hasNotEndedWhileObserversReceiveTheInterruption() {
        let seen = Locked<[Bool]>([])
        let input = Locked<Signal<Int, Never>.Observer?>(nil)
        var lifetime: Lifetime?
        let signal = Signal<Int, Never> { observer, signalLifetime in
            input.withLock { $0 = observer }
            lifetime = signalLifetime
        }
        let captured = _Carried(lifetime!)
        signal.observeInterrupted { seen.append(captured.value.hasEnded) }
        input.withLock { $0 = nil }
        #expect(seen.snapshot == [false])
        #expect(lifetime?.hasEnded == true)
    }

    @Test func theLifetime_doesNotEndWhileTheInputIsHeldElsewhere() {
        var input: Signal<Int, Never>.Observer?
        var lifetime: Lifetime?
        let recorder = EventRecorder<Int, Never>()
        let signal = Signal<Int, Never> { observer, signalLifetime in
            input = observer
            lifetime = signalLifetime
        }
        signal.observe(recorder.observer)
        let copy = input
        input = nil
        #expect(lifetime?.hasEnded == false)
        #expect(recorder.events.isEmpty)
        copy?.send(value: 1)
        #expect(recorder.values == [1])
        withExtendedLifetime(copy) {}
    }

    @Test func aPipesInput_released_interruptsThenDisposesThePipesDisposable() {
        let log = Locked<[String]>([])
        var pipe: (output: Signal<Int, Never>, input: Signal<Int, Never>.Observer)? =
            Signal<Int, Never>.pipe(disposable: AnyDisposable { log.append("disposed") })
        let signal = pipe!.output
        signal.observe { event in log.append("observer: \(event)") }
        pipe = nil
        #expect(log.snapshot == ["observer: INTERRUPTED", "disposed"])
        withExtendedLifetime(signal) {}
    }

    @Test func aGeneratorThatDropsTheInput_interruptsAtOnce() {
        let log = Locked<[String]>([])
        var lifetime: Lifetime?
        let signal = Signal<Int, Never> { _, signalLifetime in
            lifetime = signalLifetime
            signalLifetime.observeEnded { log.append("lifetime ended") }
        }
        signal.observe { event in log.append("observer: \(event)") }
        // ReactiveSwift 7.2.1 interrupts when the generator returns (before `observe`):
        // the late observer gets `interrupted`.
        #expect(log.snapshot == ["lifetime ended", "observer: INTERRUPTED"])
        #expect(lifetime?.hasEnded == true)
    }

    @Test func aProducersRun_whoseInputIsKeptByItsWork_livesUntilTheInputIsReleased() {
        let log = Locked<[String]>([])
        let kept = Locked<Signal<Int, Never>.Observer?>(nil)
        let lifetime = Locked<Lifetime?>(nil)
        SignalProducer<Int, Never> { observer, runLifetime in
            kept.withLock { $0 = observer }
            lifetime.withLock { $0 = runLifetime }
        }.start { event in log.append("run: \(event)") }
        #expect(lifetime.snapshot?.hasEnded == false)
        kept.withLock { $0 = nil }
        #expect(log.snapshot == ["run: INTERRUPTED"])
        #expect(lifetime.snapshot?.hasEnded == true)
    }

    // Ports of ReactiveSwift 7.2.1's SignalLifetimeSpec cases about the input observer.

    @Test func theInputNotRetained_interruptsEvenWithObservers() {
        let disposable = AnyDisposable()
        let interrupted = Locked(false)
        var outer: Signal<Never, Never>?
        do {
            let (signal, input) = Signal<Never, Never>.pipe(disposable: disposable)
            withExtendedLifetime(input) {
                outer = signal
                signal.observeInterrupted { interrupted.withLock { $0 = true } }
                #expect(!interrupted.snapshot)
                #expect(!disposable.isDisposed)
            }
        }
        #expect(interrupted.snapshot)
        #expect(disposable.isDisposed)
        withExtendedLifetime(outer) {}
    }

    @Test func anObservedSignalWhoseShellIsGone_endsWhenItsInputIsReleased() {
        let ended = Locked(false)
        let input = Locked<Signal<Int, Never>.Observer?>(nil)
        var observation: (any Disposable)?
        weak var weakSignal: Signal<Int, Never>?
        do {
            let signal = Signal<Int, Never> { observer, lifetime in
                input.withLock { $0 = observer }
                lifetime.observeEnded { ended.withLock { $0 = true } }
            }
            weakSignal = signal
            observation = signal.map { $0 }.observe(Signal.Observer { _ in })
        }
        #expect(weakSignal == nil)
        #expect(!ended.snapshot)
        input.withLock { $0 = nil }
        #expect(ended.snapshot)
        withExtendedLifetime(observation) {}
    }

    @Test func aShellReleasedWithNoObserver_endsTheLifetimeWhileTheInputIsHeld() {
        // ReactiveSwift 7.2.1 ends it too: nobody can observe the signal any more.
        let ended = Locked(false)
        let input = Locked<Signal<Int, Never>.Observer?>(nil)
        do {
            let signal = Signal<Int, Never> { observer, lifetime in
                input.withLock { $0 = observer }
                lifetime.observeEnded { ended.withLock { $0 = true } }
            }
            withExtendedLifetime(signal) {}
        }
        #expect(ended.snapshot)
        #expect(input.snapshot != nil)
    }
}
}
