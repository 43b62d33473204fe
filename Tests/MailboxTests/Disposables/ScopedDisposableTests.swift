import Testing
@testable import Mailbox

@Suite("ScopedDisposable")
struct ScopedDisposableTests {
    @Test func deinit_disposesTheInnerDisposable() {
        let probe = DisposalProbe()
        do {
            let scoped = ScopedDisposable(probe)
            #expect(!scoped.isDisposed)
            #expect(probe.disposeCount == 0)
        }
        #expect(probe.disposeCount == 1)
    }

    @Test func dispose_disposesTheInnerAndIsReflectedInIsDisposed() {
        let probe = DisposalProbe()
        let scoped = ScopedDisposable(probe)
        scoped.dispose()
        #expect(scoped.isDisposed)
        #expect(probe.disposeCount == 1)
        #expect(scoped.inner === probe)
    }

    @Test func existentialInit_wrapsInAnAnyDisposableThatDisposesOnce() {
        let probe = DisposalProbe()
        do {
            let scoped: ScopedDisposable<AnyDisposable> = ScopedDisposable(probe as any Disposable)
            scoped.dispose()
        }
        // Disposed explicitly, then again by deinit: the AnyDisposable passes on only the first.
        #expect(probe.disposeCount == 1)
    }

    @Test func plusEqualsOnScopedComposite_addsDisposablesAndActionsDisposedOnDeinit() {
        let log = Locked([String]())
        let removed = DisposalProbe("removed", log: log)
        do {
            let scoped = ScopedDisposable(CompositeDisposable())
            scoped += DisposalProbe("probe", log: log)
            scoped += { log.append("action") }
            let handle = scoped += removed
            handle?.dispose()
            #expect(log.snapshot.isEmpty)
        }
        #expect(log.snapshot == ["probe", "action"])
        #expect(removed.disposeCount == 0)
    }

    @Test func plusEqualsOnDisposedScopedComposite_disposesTheAdditionAtOnce() {
        let scoped = ScopedDisposable(CompositeDisposable())
        scoped.dispose()
        let probe = DisposalProbe()
        #expect((scoped += probe) == nil)
        #expect(probe.disposeCount == 1)
        let runs = Locked(0)
        #expect((scoped += { runs.increment() }) == nil)
        #expect(runs.snapshot == 1)
    }
}
