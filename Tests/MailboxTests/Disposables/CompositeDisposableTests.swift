import Dispatch
import Testing
@testable import Mailbox

@Suite("CompositeDisposable")
struct CompositeDisposableTests {
    @Test func dispose_disposesEveryMemberOnceInInsertionOrder() {
        let log = Locked([String]())
        let probes = ["a", "b", "c", "d"].map { DisposalProbe($0, log: log) }
        let composite = CompositeDisposable()
        for probe in probes { composite.add(probe) }
        composite.add { log.append("action") }
        #expect(!composite.isDisposed)

        composite.dispose()
        composite.dispose()

        #expect(composite.isDisposed)
        #expect(log.snapshot == ["a", "b", "c", "d", "action"])
        #expect(probes.allSatisfy { $0.disposeCount == 1 })
    }

    @Test func dispose_releasesTheMembers() {
        let tracker = LifetimeTracker()
        let composite = CompositeDisposable()
        composite.add(DisposalProbe(payload: tracker.instance()))
        composite.add(DisposalProbe(payload: tracker.instance()))
        #expect(tracker.liveCount == 2)
        composite.dispose()
        #expect(tracker.liveCount == 0)
    }

    @Test func addingToDisposedComposite_disposesAdditionAtOnceAndReturnsNil() {
        let composite = CompositeDisposable()
        composite.dispose()

        let probe = DisposalProbe()
        #expect(composite.add(probe) == nil)
        #expect(probe.disposeCount == 1)

        let runs = Locked(0)
        #expect(composite.add { runs.increment() } == nil)
        #expect(runs.snapshot == 1)
    }

    @Test func addingNil_returnsNilAndChangesNothing() {
        let composite = CompositeDisposable()
        #expect(composite.add(nil as (any Disposable)?) == nil)
        #expect(!composite.isDisposed)
    }

    @Test func disposingTheHandle_removesWithoutDisposingTheMember() {
        let log = Locked([String]())
        let composite = CompositeDisposable()
        let first = DisposalProbe("first", log: log)
        let second = DisposalProbe("second", log: log)
        let third = DisposalProbe("third", log: log)
        composite.add(first)
        let handle = composite.add(second)
        composite.add(third)

        #expect(handle != nil)
        handle?.dispose()
        #expect(second.disposeCount == 0, "removing a member must not dispose it")
        #expect(handle?.isDisposed == true)

        composite.dispose()
        #expect(log.snapshot == ["first", "third"])
        #expect(second.disposeCount == 0)
    }

    @Test func disposingAnActionHandle_removesTheActionWithoutRunningIt() {
        let runs = Locked(0)
        let composite = CompositeDisposable()
        let handle = composite.add { runs.increment() }
        handle?.dispose()
        composite.dispose()
        #expect(runs.snapshot == 0)
    }

    @Test func handleOutlivingTheComposite_isHarmless() {
        let probe = DisposalProbe()
        var handle: (any Disposable)?
        do {
            let composite = CompositeDisposable()
            handle = composite.add(probe)
        }
        handle?.dispose()
        #expect(probe.disposeCount == 0)
    }

    @Test func plusEquals_addsDisposablesAndActions() {
        let log = Locked([String]())
        let composite = CompositeDisposable()
        let probe = DisposalProbe("probe", log: log)

        let probeHandle = composite += probe
        let actionHandle = composite += { log.append("action") }
        #expect(probeHandle != nil)
        #expect(actionHandle != nil)

        composite.dispose()
        #expect(log.snapshot == ["probe", "action"])
        #expect((composite += DisposalProbe()) == nil)
    }

    @Test func initFromSequence_holdsEveryDisposable() {
        let log = Locked([String]())
        let composite = CompositeDisposable([
            DisposalProbe("a", log: log), DisposalProbe("b", log: log),
        ] as [any Disposable])
        composite.dispose()
        #expect(log.snapshot == ["a", "b"])
    }

    @Test func initFromSequenceOfOptionals_skipsNils() {
        let log = Locked([String]())
        let members: [(any Disposable)?] = [DisposalProbe("a", log: log), nil, DisposalProbe("c", log: log), nil]
        let composite = CompositeDisposable(members)
        #expect(!composite.isDisposed)
        composite.dispose()
        #expect(log.snapshot == ["a", "c"])
    }

    @Test func memberDisposalAddingToTheSameComposite_doesNotDeadlockAndDisposesTheAddition() {
        let composite = CompositeDisposable()
        let late = DisposalProbe()
        composite.add { composite.add(late) }
        composite.dispose()
        #expect(late.disposeCount == 1)
    }

    @Test func concurrentAddsAndDispose_disposeEveryMemberExactlyOnce() {
        for _ in 0..<20 {
            let composite = CompositeDisposable()
            let probes = (0..<256).map { DisposalProbe("\($0)") }
            let half = probes.count / 2
            DispatchQueue.concurrentPerform(iterations: probes.count + 1) { index in
                switch index {
                case half: composite.dispose()
                case ..<half: composite.add(probes[index])
                default: composite.add(probes[index - 1])
                }
            }
            // Every member was disposed either by the composite's disposal or at once when added.
            let counts = probes.map(\.disposeCount)
            #expect(counts.allSatisfy { $0 == 1 }, "\(counts)")
        }
    }
}
