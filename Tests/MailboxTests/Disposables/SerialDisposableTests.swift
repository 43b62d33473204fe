import Dispatch
import Testing
@testable import Mailbox

@Suite("SerialDisposable")
struct SerialDisposableTests {
    @Test func init_holdsTheGivenDisposableWithoutDisposingIt() {
        let probe = DisposalProbe()
        let serial = SerialDisposable(probe)
        #expect(serial.inner === probe)
        #expect(probe.disposeCount == 0)
        #expect(!serial.isDisposed)
    }

    @Test func assigningInner_disposesThePreviousOneOnly() {
        let first = DisposalProbe()
        let second = DisposalProbe()
        let serial = SerialDisposable(first)
        serial.inner = second
        #expect(first.disposeCount == 1)
        #expect(second.disposeCount == 0)
        #expect(serial.inner === second)
    }

    @Test func assigningNil_disposesThePreviousOne() {
        let probe = DisposalProbe()
        let serial = SerialDisposable()
        serial.inner = probe
        serial.inner = nil
        #expect(probe.disposeCount == 1)
        #expect(serial.inner == nil)
        #expect(!serial.isDisposed)
    }

    @Test func dispose_disposesTheCurrentInnerOnce() {
        let probe = DisposalProbe()
        let serial = SerialDisposable(probe)
        serial.dispose()
        serial.dispose()
        #expect(serial.isDisposed)
        #expect(probe.disposeCount == 1)
        #expect(serial.inner == nil)
    }

    @Test func assigningAfterDisposal_disposesTheAssignedAtOnce() {
        let serial = SerialDisposable()
        serial.dispose()
        let probe = DisposalProbe()
        serial.inner = probe
        #expect(probe.disposeCount == 1)
        #expect(serial.inner == nil)
    }

    @Test func replacingDisposal_canAssignToTheSameSerialWithoutDeadlock() {
        // The previous inner is disposed outside the lock, so its disposal may touch the serial.
        let serial = SerialDisposable()
        let reentrant = DisposalProbe()
        serial.inner = AnyDisposable { serial.inner = reentrant }
        serial.inner = DisposalProbe()
        #expect(serial.inner === reentrant)
    }

    @Test func concurrentAssignmentsThenDispose_disposeEveryAssignedExactlyOnce() {
        let serial = SerialDisposable()
        let probes = (0..<512).map { DisposalProbe("\($0)") }
        DispatchQueue.concurrentPerform(iterations: probes.count) { index in
            serial.inner = probes[index]
        }
        #expect(probes.filter { $0.disposeCount == 0 }.count == 1, "exactly the last assigned is still held")
        serial.dispose()
        #expect(probes.allSatisfy { $0.disposeCount == 1 })
    }
}
