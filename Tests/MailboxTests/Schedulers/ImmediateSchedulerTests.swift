import Foundation
import Testing
@testable import Mailbox

@Suite("ImmediateScheduler")
struct ImmediateSchedulerTests {
    @Test func schedule_runsTheActionBeforeReturningAndReturnsNil() {
        let scheduler = ImmediateScheduler()
        let runs = Locked(0)
        let disposable = scheduler.schedule { runs.increment() }
        #expect(runs.snapshot == 1)
        #expect(disposable == nil)
    }

    @Test func schedule_runsOnTheCallingThread() {
        let scheduler = ImmediateScheduler()
        let caller = Thread.current
        let sameThread = Locked(false)
        // `Thread` is not Sendable; compare identities instead of capturing it.
        let callerID = ObjectIdentifier(caller)
        scheduler.schedule { sameThread.withLock { $0 = ObjectIdentifier(Thread.current) == callerID } }
        #expect(sameThread.snapshot)
    }

    @Test func nestedScheduling_runsNestedLikeAFunctionCall() {
        let scheduler = ImmediateScheduler()
        let log = Locked([String]())
        scheduler.schedule {
            log.append("outer begins")
            scheduler.schedule { log.append("inner") }
            log.append("outer ends")
        }
        #expect(log.snapshot == ["outer begins", "inner", "outer ends"])
    }
}
