import Dispatch
import Testing
@testable import Mailbox

/// The paths of `Lifetime`'s lazily-allocated ending-action list: a lifetime allocates the list
/// only when first observed, and "end" and "install the list" race through one atomic word.
@Suite("Lifetime: lazy state")
struct LifetimeLazyStateTests {
    @Test func endedBeforeAnythingObservedIt_observersRunAtOnce() {
        let (lifetime, token) = Lifetime.make()
        token.dispose()
        #expect(lifetime.hasEnded)

        let runs = Locked(0)
        #expect(lifetime.observeEnded { runs.increment() } == nil)
        #expect(runs.snapshot == 1)

        let probe = DisposalProbe()
        #expect((lifetime += probe) == nil)
        #expect(probe.disposeCount == 1)

        // Ending again (dispose, then deinit) runs nothing more.
        token.dispose()
        #expect(runs.snapshot == 1)
        #expect(probe.disposeCount == 1)
    }

    @Test func addingNil_allocatesNothingAndReturnsNil() {
        let (lifetime, token) = Lifetime.make()
        #expect(lifetime.add(nil) == nil)
        token.dispose()
        #expect(lifetime.hasEnded)
    }

    @Test func lifetimeMadeFromAToken_sharesTheTokensState() {
        let token = Lifetime.Token()
        let first = Lifetime(token)
        let second = Lifetime(token)
        let log = Locked([String]())
        first.observeEnded { log.append("first") }
        second.observeEnded { log.append("second") }
        first.observeEnded { log.append("third") }
        #expect(!first.hasEnded && !second.hasEnded)
        token.dispose()
        #expect(first.hasEnded && second.hasEnded)
        #expect(log.snapshot == ["first", "second", "third"])
    }

    @Test func lifetimeMadeFromAToken_outlivesItAndEndsWithIt() {
        let runs = Locked(0)
        let lifetime: Lifetime
        do {
            let token = Lifetime.Token()
            lifetime = Lifetime(token)
            lifetime.observeEnded { runs.increment() }
        }
        #expect(lifetime.hasEnded)
        #expect(runs.snapshot == 1)
        #expect(lifetime.observeEnded { runs.increment() } == nil)
        #expect(runs.snapshot == 2)
    }

    @Test func releasingAViewLifetime_doesNotEndTheTokensLifetime() {
        let (lifetime, token) = Lifetime.make()
        let runs = Locked(0)
        do {
            let view = Lifetime(token)
            view.observeEnded { runs.increment() }
        }
        #expect(!lifetime.hasEnded)
        #expect(runs.snapshot == 0)
        token.dispose()
        #expect(runs.snapshot == 1)
    }

    @Test func observationHandle_removesOnlyItsOwnActionAndIsIdempotent() throws {
        let (lifetime, token) = Lifetime.make()
        let log = Locked([String]())
        lifetime.observeEnded { log.append("a") }
        let handle = try #require(lifetime.observeEnded { log.append("b") })
        lifetime.observeEnded { log.append("c") }
        #expect(!handle.isDisposed)
        handle.dispose()
        handle.dispose()
        #expect(handle.isDisposed)
        token.dispose()
        #expect(log.snapshot == ["a", "c"])
    }

    @Test func observationHandleDisposedAfterTheEnd_doesNothing() throws {
        let (lifetime, token) = Lifetime.make()
        let runs = Locked(0)
        let handle = try #require(lifetime.observeEnded { runs.increment() })
        token.dispose()
        handle.dispose()
        #expect(runs.snapshot == 1)
    }

    @Test func endingActionThatObservesOrEndsTheSameLifetime_runsAtOnceWithoutDeadlock() {
        let (lifetime, token) = Lifetime.make()
        let log = Locked([String]())
        lifetime.observeEnded {
            log.append("outer")
            token.dispose()
            let handle = lifetime.observeEnded { log.append("nested") }
            log.append(handle == nil ? "nested returned nil" : "nested returned a handle")
        }
        lifetime.observeEnded { log.append("second") }
        token.dispose()
        #expect(log.snapshot == ["outer", "nested", "nested returned nil", "second"])
    }

    @Test func tokenlessLifetime_endsOnceByEndAndNotAgainOnDeinit() {
        let runs = Locked(0)
        do {
            let lifetime = Lifetime()
            lifetime.observeEnded { runs.increment() }
            lifetime._end()
            lifetime._end()
            #expect(lifetime.hasEnded)
            #expect(runs.snapshot == 1)
        }
        #expect(runs.snapshot == 1)
    }

    @Test func tokenlessLifetime_endsOnDeinitIfNeverEnded() {
        let runs = Locked(0)
        let probe = DisposalProbe()
        do {
            let lifetime = Lifetime()
            lifetime.observeEnded { runs.increment() }
            lifetime += probe
        }
        #expect(runs.snapshot == 1)
        #expect(probe.disposeCount == 1)
    }

    @Test func tokenlessLifetimeNeverObserved_deinitialisesQuietly() {
        do {
            let lifetime = Lifetime()
            #expect(!lifetime.hasEnded)
        }
        do {
            let lifetime = Lifetime()
            lifetime._end()
            #expect(lifetime.hasEnded)
        }
    }

    @Test func endingActions_areReleasedWhenObservationHandlesOutliveTheEnd() {
        let tracker = LifetimeTracker()
        let (lifetime, token) = Lifetime.make()
        let handle: (any Disposable)?
        do {
            let captured = tracker.instance()
            handle = lifetime.observeEnded { _ = captured }
        }
        #expect(tracker.liveCount == 1)
        token.dispose()
        #expect(tracker.liveCount == 0, "the handle must not keep the ran action alive")
        _ = handle
    }

    /// The first observation (which installs the action list) racing the end, from two
    /// threads, on a fresh lifetime each time: the action runs exactly once, and `observeEnded`
    /// returns `nil` exactly when the action ran before it returned on the observing thread.
    @Test func firstObservationRacingTheEnd_runsTheActionExactlyOnce() {
        for _ in 0..<2_000 {
            let (lifetime, token) = Lifetime.make()
            let runs = Locked(0)
            let returnedNil = Locked(false)
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                if index == 0 {
                    token.dispose()
                } else {
                    let handle = lifetime.observeEnded { runs.increment() }
                    if handle == nil {
                        returnedNil.withLock { $0 = true }
                        #expect(runs.snapshot == 1, "nil means the action has run")
                    }
                }
            }
            #expect(lifetime.hasEnded)
            #expect(runs.snapshot == 1)
        }
    }

    /// Two first observations racing to install the action list while a third thread ends the
    /// lifetime: every action runs exactly once.
    @Test func twoFirstObservationsRacingEachOtherAndTheEnd_eachRunsExactlyOnce() {
        for _ in 0..<1_000 {
            let (lifetime, token) = Lifetime.make()
            let runs = [Locked(0), Locked(0)]
            let probe = DisposalProbe()
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                switch index {
                case 0, 1:
                    let counter = runs[index]
                    lifetime.observeEnded { counter.increment() }
                case 2:
                    lifetime += probe
                default:
                    token.dispose()
                }
            }
            #expect(runs.allSatisfy { $0.snapshot == 1 })
            #expect(probe.disposeCount == 1)
        }
    }

    /// A producer run's lifetime has no token: the run's termination ends it, and a run that
    /// never looked at it allocates no action list.
    @Test func producerRunLifetime_endsWhenTheRunTerminatesOrIsInterrupted() {
        let ended = Locked(0)
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { ended.increment() }
            observer.send(value: 1)
        }
        let disposable = producer.start()
        #expect(ended.snapshot == 0)
        disposable.dispose()
        #expect(ended.snapshot == 1)

        let completing = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { ended.increment() }
            observer.sendCompleted()
            #expect(lifetime.hasEnded)
        }
        completing.start()
        #expect(ended.snapshot == 2)
    }

    @Test func generatorSignalLifetime_endsWhenTheSignalTerminatesOrIsTornDown() {
        let ended = Locked(0)
        let input = Locked<Signal<Int, Never>.Observer?>(nil)
        let signal = Signal<Int, Never> { observer, lifetime in
            input.withLock { $0 = observer }
            lifetime.observeEnded { ended.increment() }
        }
        #expect(ended.snapshot == 0)
        input.snapshot?.sendCompleted()
        #expect(ended.snapshot == 1)
        withExtendedLifetime(signal) {}

        do {
            // Unreferenced and unobserved: torn down, which ends its lifetime.
            _ = Signal<Int, Never> { observer, lifetime in
                input.withLock { $0 = observer }
                lifetime.observeEnded { ended.increment() }
            }
        }
        #expect(ended.snapshot == 2)
        input.withLock { $0 = nil }
    }
}
