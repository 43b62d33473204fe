import Foundation
import Mailbox
import MailboxTestKit
import Testing

@Suite struct FaultySchedulerTests {
    let base = TestScheduler()

    /// Schedules `names` in order on `scheduler`, each recording its name and the virtual time.
    func scheduleAll(_ names: [String], on scheduler: FaultyScheduler, into log: Recorded<[String]>) {
        let clock = base
        for name in names {
            scheduler.schedule { log.append("\(name)@\(clock.elapsed)") }
        }
    }

    @Test func delayEveryNthAction_runsThoseLate_andTheRestInOrder() {
        let faulty = FaultyScheduler(wrapping: base, plan: FaultPlan().delaying(by: .seconds(1), .everyNthHit(2)))
        let log = Recorded([String]())
        scheduleAll(["a", "b", "c", "d", "e"], on: faulty, into: log)
        base.advance(by: .nanoseconds(0))
        #expect(log.snapshot == ["a@0.0 seconds", "c@0.0 seconds", "e@0.0 seconds"])
        base.advance(by: .seconds(1))
        #expect(log.snapshot.suffix(2) == ["b@1.0 seconds", "d@1.0 seconds"])
        #expect(faulty.delayedCount == 2)
        #expect(faulty.forwardedCount == 3)
        #expect(faulty.injector.hits(FaultPlan.scheduler) == 5)
    }

    @Test func stall_holdsBackActionsUntilItEnds_inOrder_beforeLaterOnes() {
        let faulty = FaultyScheduler(wrapping: base)
        let log = Recorded([String]())
        let clock = base
        faulty.stall(for: .seconds(1))
        #expect(faulty.isStalled)
        scheduleAll(["a", "b"], on: faulty, into: log)
        faulty.schedule(after: .milliseconds(500)) { log.append("timed@\(clock.elapsed)") }
        faulty.schedule(after: .seconds(2)) { log.append("after-stall@\(clock.elapsed)") }
        base.advance(by: .milliseconds(999))
        #expect(log.snapshot.isEmpty)
        // Scheduled at the stall's end from inside the run: not held, and after the held ones.
        base.schedule(after: .milliseconds(1)) { faulty.schedule { log.append("c@\(clock.elapsed)") } }
        base.advance(by: .milliseconds(1))
        #expect(log.snapshot == ["a@1.0 seconds", "b@1.0 seconds", "timed@1.0 seconds", "c@1.0 seconds"])
        #expect(!faulty.isStalled)
        base.advance(by: .seconds(1))
        #expect(log.snapshot.last == "after-stall@2.0 seconds")
        #expect(faulty.heldBackCount == 3)
    }

    @Test func stallRule_startsAtTheTriggeringHit() {
        let faulty = FaultyScheduler(wrapping: base, plan: FaultPlan(seed: 1).stalling(for: .seconds(3), .atHit(2)))
        let log = Recorded([String]())
        scheduleAll(["a", "b", "c"], on: faulty, into: log)
        base.advance(by: .seconds(2))
        #expect(log.snapshot == ["a@0.0 seconds"])
        base.advance(by: .seconds(1))
        #expect(log.snapshot == ["a@0.0 seconds", "b@3.0 seconds", "c@3.0 seconds"])
        #expect(faulty.injector.injected == [InjectedFault(point: "scheduler", hit: 2, seed: 1)])
    }

    @Test func cancellingAHeldBackAction_keepsItFromRunning() {
        let faulty = FaultyScheduler(wrapping: base)
        let ran = Recorded(false)
        faulty.stall(for: .seconds(1))
        faulty.schedule { ran.withLock { $0 = true } }?.dispose()
        base.advance(by: .seconds(2))
        #expect(!ran.snapshot)
    }

    @Test func anActorSystemOnAStalledScheduler_repliesOnlyAfterTheStall_andProbesDriveThrough() throws {
        let faulty = FaultyScheduler(wrapping: base)
        let system = makeSystem(faulty)
        let probe = try TestProbe<String>(system: system)
        #expect(probe.virtualClock === base)
        let echoRef = try system.spawn(echo(), name: "echo")
        echoRef.tell(.echo("warm", replyTo: probe.ref))
        #expect(try probe.expectMessage() == "warm")
        faulty.stall(for: .seconds(2))
        echoRef.tell(.echo("late", replyTo: probe.ref))
        #expect(throws: ProbeError.self) { try probe.expectMessage(within: .seconds(1)) }
        #expect(try probe.expectMessage(within: .seconds(1)) == "late")
        #expect(base.elapsed == .seconds(2))
    }

    @Test func probabilisticDelays_replayFromTheSeed() {
        func trace(seed: UInt64) -> [String] {
            let base = TestScheduler()
            let faulty = FaultyScheduler(wrapping: base, plan: FaultPlan(seed: seed).delaying(by: .milliseconds(10), .withProbability(0.5)))
            let log = Recorded([String]())
            for n in 0 ..< 32 { faulty.schedule { log.append("\(n)") } }
            base.advance(by: .seconds(1))
            return log.snapshot
        }
        #expect(trace(seed: 11) == trace(seed: 11))
        #expect(trace(seed: 11) != trace(seed: 12))
        #expect(Set(trace(seed: 11)).count == 32, "every action runs once")
    }
}
