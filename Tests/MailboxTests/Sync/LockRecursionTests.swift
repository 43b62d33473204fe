import Dispatch
import Foundation
import Testing
@testable import Mailbox

/// `lockUnlessHeldByCurrentThread()`: the building block of re-entrant properties and queued
/// recursive sends (issue #11).
@Suite("Lock: telling a relock from contention")
struct LockRecursionTests {
    @Test func onTheHoldingThread_itReturnsFalseInsteadOfDeadlocking() {
        let finished = finishesWithoutDeadlock {
            let lock = Lock(detectingRecursion: ())
            #expect(lock.lockUnlessHeldByCurrentThread())
            #expect(!lock.lockUnlessHeldByCurrentThread())
            #expect(!lock.lockUnlessHeldByCurrentThread())
            lock.unlock()
            #expect(lock.lockUnlessHeldByCurrentThread())
            lock.unlock()
        }
        #expect(finished)
    }

    @Test func aSignalCoresSendLock_detectsItsHolderToo() {
        let finished = finishesWithoutDeadlock {
            let pair = MutexPair()
            #expect(pair.first.lockUnlessHeldByCurrentThread())
            #expect(!pair.first.lockUnlessHeldByCurrentThread())
            pair.first.unlock()
            pair.deallocate()
        }
        #expect(finished)
    }

    @Test func onAnotherThread_itWaitsForTheHolderThenTakesTheLock() {
        let lock = Lock(detectingRecursion: ())
        let taken = DispatchSemaphore(value: 0)
        let acquired = Locked<Bool?>(nil)
        #expect(lock.lockUnlessHeldByCurrentThread())
        Thread {
            let result = lock.lockUnlessHeldByCurrentThread()
            acquired.withLock { $0 = result }
            if result { lock.unlock() }
            taken.signal()
        }.start()
        // The other thread must not report "held by me": it waits. (A wrong answer would come
        // back at once; a correct one only after the unlock below.)
        #expect(taken.wait(timeout: .now() + .milliseconds(50)) == .timedOut)
        #expect(acquired.snapshot == nil)
        lock.unlock()
        #expect(taken.waitBounded())
        #expect(acquired.snapshot == true)
    }

    @Test func manyThreads_eachSeeTheLockAsTheirsOnlyWhileTheyHoldIt() {
        let lock = Lock(detectingRecursion: ())
        let counter = Locked(0)
        let wrongAnswers = Locked(0)
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                for _ in 0..<2_000 {
                    if lock.lockUnlessHeldByCurrentThread() {
                        if lock.lockUnlessHeldByCurrentThread() { wrongAnswers.increment() }
                        counter.increment()
                        lock.unlock()
                    } else {
                        wrongAnswers.increment()
                    }
                }
                group.leave()
            }.start()
        }
        #expect(group.waitBounded())
        #expect(wrongAnswers.snapshot == 0)
        #expect(counter.snapshot == 8_000)
    }
}
