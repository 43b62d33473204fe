import Dispatch
import Testing
@testable import Mailbox

@Suite("Lifetime")
struct LifetimeTests {
    @Test func disposingTheToken_endsTheLifetimeAndRunsObservers() {
        let token = Lifetime.Token()
        let lifetime = Lifetime(token)
        let runs = Locked(0)
        lifetime.observeEnded { runs.increment() }
        #expect(!lifetime.hasEnded)
        #expect(runs.snapshot == 0)

        token.dispose()
        #expect(lifetime.hasEnded)
        #expect(runs.snapshot == 1)
    }

    @Test func deinitialisingTheToken_endsTheLifetimeThatLivesOn() {
        let runs = Locked(0)
        let lifetime: Lifetime
        do {
            let token = Lifetime.Token()
            lifetime = Lifetime(token)
            lifetime.observeEnded { runs.increment() }
            #expect(!lifetime.hasEnded)
        }
        #expect(lifetime.hasEnded)
        #expect(runs.snapshot == 1)
    }

    @Test func lifetime_doesNotKeepItsTokenAlive() {
        let lifetime: Lifetime
        weak var weakToken: Lifetime.Token?
        do {
            let made = Lifetime.make()
            lifetime = made.lifetime
            weakToken = made.token
        }
        #expect(weakToken == nil)
        #expect(lifetime.hasEnded)
    }

    @Test func observeEnded_runsOnceEvenIfTheTokenIsDisposedAgain() {
        let runs = Locked(0)
        let lifetime: Lifetime
        do {
            let token = Lifetime.Token()
            lifetime = Lifetime(token)
            lifetime.observeEnded { runs.increment() }
            token.dispose()
            token.dispose()
            #expect(runs.snapshot == 1)
        }
        // The token's deinit ends the lifetime again, which must do nothing.
        #expect(runs.snapshot == 1)
        #expect(lifetime.hasEnded)
    }

    @Test func observeEndedAfterEnd_runsAtOnceAndReturnsNil() {
        let (lifetime, token) = Lifetime.make()
        token.dispose()
        let runs = Locked(0)
        let handle = lifetime.observeEnded { runs.increment() }
        #expect(handle == nil)
        #expect(runs.snapshot == 1)
    }

    @Test func observeEndedHandle_cancelsTheObservation() {
        let (lifetime, token) = Lifetime.make()
        let runs = Locked(0)
        let handle = lifetime.observeEnded { runs.increment() }
        handle?.dispose()
        token.dispose()
        #expect(runs.snapshot == 0)
    }

    @Test func endingActions_runInTheOrderAdded() {
        let (lifetime, token) = Lifetime.make()
        let log = Locked([String]())
        lifetime.observeEnded { log.append("first") }
        lifetime += DisposalProbe("second", log: log)
        lifetime.add(DisposalProbe("third", log: log))
        lifetime.observeEnded { log.append("fourth") }
        token.dispose()
        #expect(log.snapshot == ["first", "second", "third", "fourth"])
    }

    @Test func plusEquals_disposesWhenEndedAndAtOnceIfEnded() {
        let (lifetime, token) = Lifetime.make()
        let before = DisposalProbe()
        #expect((lifetime += before) != nil)
        #expect(before.disposeCount == 0)
        token.dispose()
        #expect(before.disposeCount == 1)

        let after = DisposalProbe()
        #expect((lifetime += after) == nil)
        #expect(after.disposeCount == 1)
    }

    @Test func endingActions_areReleasedWhenTheLifetimeEnds() {
        let tracker = LifetimeTracker()
        let (lifetime, token) = Lifetime.make()
        let captured = tracker.instance()
        lifetime.observeEnded { _ = captured }
        lifetime += DisposalProbe(payload: tracker.instance())
        #expect(tracker.liveCount == 2)
        token.dispose()
        #expect(tracker.liveCount == 1, "only the test's own reference should remain")
        _ = captured
    }

    @Test func make_returnsALiveLifetimeEndedByItsToken() {
        let (lifetime, token) = Lifetime.make()
        #expect(!lifetime.hasEnded)
        token.dispose()
        #expect(lifetime.hasEnded)
    }

    @Test func empty_hasEndedAndRunsObserversAtOnce() {
        #expect(Lifetime.empty.hasEnded)
        let runs = Locked(0)
        #expect(Lifetime.empty.observeEnded { runs.increment() } == nil)
        #expect(runs.snapshot == 1)
    }

    @Test func concurrentObserversAndEnd_eachObserverRunsExactlyOnce() {
        for _ in 0..<20 {
            let (lifetime, token) = Lifetime.make()
            let runs = (0..<128).map { _ in Locked(0) }
            DispatchQueue.concurrentPerform(iterations: runs.count + 1) { index in
                if index == runs.count {
                    token.dispose()
                } else {
                    let counter = runs[index]
                    lifetime.observeEnded { counter.increment() }
                }
            }
            #expect(runs.allSatisfy { $0.snapshot == 1 })
        }
    }
}
