import Testing
@testable import Mailbox

@Suite("PendingAction")
struct PendingActionTests {
    @Test func take_handsOutTheActionOnceAndReleasesIt() {
        let tracker = LifetimeTracker()
        let pending = Self.pendingCapturing(tracker.instance())
        let action = pending.take()
        #expect(action != nil)
        #expect(pending.take() == nil, "taken twice")
        #expect(!pending.isDisposed)
        _ = consume action
        #expect(tracker.liveCount == 0)
    }

    @Test func disposeBeforeTake_releasesTheActionAndTakeYieldsNil() {
        let tracker = LifetimeTracker()
        let pending = Self.pendingCapturing(tracker.instance())
        pending.dispose()
        #expect(pending.isDisposed)
        #expect(tracker.liveCount == 0)
        #expect(pending.take() == nil)
    }

    @Test func disposeAfterTake_onlyMarksDisposed() {
        let runs = Locked(0)
        let pending = PendingAction { runs.increment() }
        let action = pending.take()
        pending.dispose()
        action?()
        #expect(runs.snapshot == 1)
        #expect(pending.isDisposed)
    }

    static func pendingCapturing(_ tracked: Tracked) -> PendingAction {
        PendingAction { _ = tracked }
    }
}
