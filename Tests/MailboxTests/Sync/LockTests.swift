import Dispatch
import Testing
@testable import Mailbox

@Suite("Lock")
struct LockTests {
    @Test func withLockedValue_excludesConcurrentIncrements() {
        let box = LockedValueBox(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<5_000 {
                box.withLockedValue { $0 += 1 }
            }
        }
        #expect(box.withLockedValue { $0 } == 40_000)
    }

    @Test func withLock_releasesTheLockWhenTheBodyThrows() {
        struct Failure: Error {}
        let lock = Lock()
        #expect(throws: Failure.self) {
            try lock.withLock { throw Failure() }
        }
        // With the error-checking mutex of debug builds a leaked lock would deadlock or fail here.
        #expect(lock.withLock { 42 } == 42)
    }
}
