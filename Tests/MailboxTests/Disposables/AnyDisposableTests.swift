import Dispatch
import Foundation
import Testing
@testable import Mailbox

@Suite("AnyDisposable")
struct AnyDisposableTests {
    @Test func dispose_runsTheActionAndMarksDisposed() {
        let runs = Locked(0)
        let disposable = AnyDisposable { runs.increment() }
        #expect(!disposable.isDisposed)
        #expect(runs.snapshot == 0)
        disposable.dispose()
        #expect(disposable.isDisposed)
        #expect(runs.snapshot == 1)
    }

    @Test func disposeRepeatedly_runsTheActionOnce() {
        let runs = Locked(0)
        let disposable = AnyDisposable { runs.increment() }
        for _ in 0..<5 { disposable.dispose() }
        #expect(runs.snapshot == 1)
    }

    @Test func manyConcurrentDisposes_runTheActionExactlyOnce() {
        for _ in 0..<200 {
            let runs = Locked(0)
            let disposable = AnyDisposable { runs.increment() }
            DispatchQueue.concurrentPerform(iterations: 16) { _ in
                disposable.dispose()
                #expect(disposable.isDisposed)
            }
            #expect(runs.snapshot == 1)
        }
    }

    @Test func twoThreadsDisposingInLockstep_runTheActionExactlyOnceEachTime() {
        let rounds = 5_000  // Two spinning threads in lockstep: more rounds starve the parallel suite under TSan.
        let runs = (0..<rounds).map { _ in Locked(0) }
        let disposables = runs.map { counter in AnyDisposable { counter.increment() } }
        let barrier = SpinBarrier(parties: 2)
        let finished = DispatchGroup()
        for _ in 0..<2 {
            finished.enter()
            Thread {
                for (round, disposable) in disposables.enumerated() {
                    barrier.arriveAndWait(round: round)
                    disposable.dispose()
                }
                finished.leave()
            }.start()
        }
        #expect(finished.waitBounded())
        let twice = runs.filter { $0.snapshot != 1 }.count
        #expect(twice == 0, "\(twice) of \(rounds) actions did not run exactly once")
    }

    @Test func isDisposed_isTrueOnceAnyDisposeHasReturned() {
        // A second disposer that loses the race must still see `isDisposed` afterwards.
        let disposable = AnyDisposable {}
        let group = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                disposable.dispose()
                #expect(disposable.isDisposed)
            }
        }
        #expect(group.waitBounded())
    }

    @Test func actionIsReleasedAfterRunning() {
        let tracker = LifetimeTracker()
        let disposable = Self.disposableCapturing(tracker.instance())
        #expect(tracker.liveCount == 1)
        disposable.dispose()
        #expect(tracker.liveCount == 0, "a disposed AnyDisposable still holds its action's captures")
        withExtendedLifetime(disposable) {}
    }

    private static func disposableCapturing(_ captured: Tracked) -> AnyDisposable {
        AnyDisposable { _ = captured }
    }

    @Test func deallocatedUndisposed_neverRunsTheActionAndReleasesIt() {
        let tracker = LifetimeTracker()
        let runs = Locked(0)
        do {
            let captured = tracker.instance()
            let disposable = AnyDisposable {
                _ = captured
                runs.increment()
            }
            #expect(!disposable.isDisposed)
        }
        #expect(runs.snapshot == 0)
        #expect(tracker.liveCount == 0)
    }

    @Test func initWithoutAction_recordsDisposal() {
        let disposable = AnyDisposable()
        #expect(!disposable.isDisposed)
        disposable.dispose()
        #expect(disposable.isDisposed)
    }

    @Test func initWrappingADisposable_disposesItOnce() {
        let probe = DisposalProbe()
        let disposable = AnyDisposable(probe)
        #expect(probe.disposeCount == 0)
        disposable.dispose()
        disposable.dispose()
        #expect(probe.disposeCount == 1)
    }
}
