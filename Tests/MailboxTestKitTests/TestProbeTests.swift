import Foundation
import Mailbox
import MailboxTestKit
import Testing

@Suite struct TestProbeVirtualTimeTests {
    let scheduler = TestScheduler()
    let system: ActorSystem

    init() {
        system = makeSystem(scheduler)
    }

    @Test func expectMessage_stepsToTheArrival_notToTheDeadline() throws {
        let probe = try TestProbe<String>(system: system, name: "probe")
        #expect(probe.virtualClock === scheduler)
        let echoRef = try system.spawn(echo(), name: "echo")
        echoRef.tell(.echoLater("hi", delay: .seconds(2), replyTo: probe.ref))
        scheduler.schedule(after: .seconds(10)) {}       // something later, which must not run
        #expect(try probe.expectMessage(within: .seconds(3)) == "hi")
        #expect(scheduler.elapsed == .seconds(2))
    }

    @Test func expectMessage_timesOutAtExactlyTheDeadline_andSaysSo() throws {
        let probe = try TestProbe<String>(system: system, name: "lonely")
        let late = Recorded(false)
        scheduler.schedule(after: .seconds(1) + .nanoseconds(1)) { late.withLock { $0 = true } }
        let error = try #require(throws: ProbeError.self) { try probe.expectMessage(within: .seconds(1)) }
        #expect(error.code == .timedOut)
        #expect(error.waited == .seconds(1))
        #expect(error.isVirtualTime)
        #expect(scheduler.elapsed == .seconds(1))
        #expect(!late.snapshot, "an action after the deadline must not run")
        #expect("\(error)" == "probe /user/lonely timed out after 1.0 seconds of virtual time waiting for a message; nothing arrived")
    }

    @Test func expectMessage_dueExactlyAtTheDeadline_isInTime_andOneAfterIsNot() throws {
        let probe = try TestProbe<String>(system: system)
        let ref = probe.ref
        scheduler.schedule(after: .seconds(1)) { ref.tell("on time") }
        scheduler.schedule(after: .seconds(3) + .nanoseconds(1)) { ref.tell("late") }
        #expect(try probe.expectMessage(within: .seconds(1)) == "on time")
        #expect(throws: ProbeError.self) { try probe.expectMessage(within: .seconds(2)) }
        #expect(scheduler.elapsed == .seconds(3))
        #expect(try probe.expectMessage(within: .nanoseconds(1)) == "late")
    }

    @Test func expectNoMessage_advancesExactlyByTheDuration() throws {
        let probe = try TestProbe<String>(system: system)
        let ran = Recorded([Duration]())
        let clock = scheduler
        for seconds in [1, 2, 5] {
            scheduler.schedule(after: .seconds(seconds)) { ran.append(clock.elapsed) }
        }
        try probe.expectNoMessage(for: .milliseconds(2_500))
        #expect(scheduler.elapsed == .milliseconds(2_500))
        #expect(ran.snapshot == [.seconds(1), .seconds(2)])
    }

    @Test func expectNoMessage_failsWhenOneArrives_namingItAndWhen() throws {
        let probe = try TestProbe<String>(system: system, name: "quiet")
        let ref = probe.ref
        scheduler.schedule(after: .seconds(1)) { ref.tell("noise") }
        let error = try #require(throws: ProbeError.self) { try probe.expectNoMessage(for: .seconds(2)) }
        #expect(error.code == .unexpectedMessage)
        #expect(error.received == ["noise"])
        #expect(scheduler.elapsed == .seconds(1), "the probe stops where the message arrived")
        #expect("\(error)" == "probe /user/quiet expected no message for 2.0 seconds, but received noise after 1.0 seconds of virtual time")
    }

    @Test func expectMessageEqual_mismatch_namesBothMessages() throws {
        let probe = try TestProbe<String>(system: system, name: "picky")
        probe.ref.tell("pong")
        let error = try #require(throws: ProbeError.self) { try probe.expectMessage("ping") }
        #expect(error.code == .mismatch)
        #expect("\(error)".contains("expected ping, but received pong"))
        probe.ref.tell("ping")
        #expect(try probe.expectMessage("ping") == "ping")
    }

    @Test func expectMessageWhere_checksTheNextMessageOnly() throws {
        let probe = try TestProbe<Int>(system: system)
        probe.ref.tell(1)
        probe.ref.tell(2)
        #expect(throws: ProbeError.self) { try probe.expectMessage("an even number") { $0 % 2 == 0 } }
        #expect(try probe.expectMessage { $0 % 2 == 0 } == 2)
    }

    @Test func fishForMessage_skipsUntilAMatch_andListsSkippedOnTimeout() throws {
        let probe = try TestProbe<Int>(system: system)
        for n in [1, 3, 4, 5] { probe.ref.tell(n) }
        #expect(try probe.fishForMessage { $0 % 2 == 0 } == 4)
        #expect(probe.queuedMessages == [5])
        let error = try #require(throws: ProbeError.self) { try probe.fishForMessage(within: .seconds(1), "a 9") { $0 == 9 } }
        #expect(error.received == ["5"])
        #expect(probe.queuedMessages.isEmpty)
    }

    @Test func receiveMessages_collectsInArrivalOrderAcrossTime() throws {
        let probe = try TestProbe<Int>(system: system)
        let ref = probe.ref
        for n in 1 ... 3 {
            scheduler.schedule(after: .seconds(n)) { ref.tell(n) }
        }
        #expect(try probe.receiveMessages(3, within: .seconds(5)) == [1, 2, 3])
        #expect(scheduler.elapsed == .seconds(3))
        ref.tell(4)
        let error = try #require(throws: ProbeError.self) { try probe.receiveMessages(2, within: .seconds(1)) }
        #expect(error.received == ["4"])
        #expect("\(error)".contains("waiting for 2 messages; received 4"))
    }

    @Test func expectTerminated_seesAnActorStopItself_onceAndOnlyOnce() throws {
        let probe = try TestProbe<String>(system: system)
        let echoRef = try system.spawn(echo(), name: "echo")
        probe.ref.tell("unrelated")                     // messages do not satisfy a termination
        scheduler.schedule(after: .seconds(2)) { echoRef.tell(.stop) }
        try probe.expectTerminated(echoRef, within: .seconds(3))
        #expect(scheduler.elapsed == .seconds(2))
        #expect(echoRef.tell(.stop) == .dropped(.recipientTerminated))
        #expect(try probe.expectMessage() == "unrelated")
    }

    @Test func expectTerminated_timesOutForALiveActor() throws {
        let probe = try TestProbe<String>(system: system, name: "watcher")
        let echoRef = try system.spawn(echo(), name: "alive")
        let error = try #require(throws: ProbeError.self) { try probe.expectTerminated(echoRef, within: .seconds(1)) }
        #expect(error.code == .timedOut)
        #expect("\(error)".contains("waiting for /user/alive to terminate"))
        // The watch stays: a later stop is still seen.
        echoRef.tell(.stop)
        try probe.expectTerminated(echoRef, within: .zero)
    }

    @Test func expectTerminated_ofAnActorAlreadyTerminated_isAnsweredAtOnce() throws {
        let probe = try TestProbe<String>(system: system)
        let echoRef = try system.spawn(echo(), name: "gone")
        echoRef.tell(.stop)
        scheduler.advance(by: .nanoseconds(0))
        try probe.expectTerminated(echoRef, within: .zero)
    }

    @Test func stop_terminatesTheProbeActor() throws {
        let probe = try TestProbe<String>(system: system)
        let other = try TestProbe<String>(system: system)
        probe.stop()
        try other.expectTerminated(probe.ref, within: .zero)
        #expect(probe.ref.tell("after") == .dropped(.recipientTerminated))
    }

    @Test func stopUnexpectedly_stopsAChild_andItsParentIsTold() throws {
        let probe = try TestProbe<String>(system: system)
        let childRef = Recorded<ActorRef<EchoMessage>?>(nil)
        let report = probe.ref
        _ = try system.spawn(Behavior<String>.setup { context in
            let child = try context.spawn(echo(), name: "child")
            childRef.withLock { $0 = child }
            context.watch(child)
            return Behavior<String>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
                guard case let .terminated(ref) = event else { return .unhandled }
                report.tell("parent saw \(ref.path) terminate")
                return .same
            }
        }, name: "parent")
        scheduler.advance(by: .nanoseconds(0))
        let child = try #require(childRef.snapshot)
        stopUnexpectedly(child)
        #expect(try probe.expectMessage() == "parent saw /user/parent/child terminate")
        try probe.expectTerminated(child, within: .zero)
    }
}

/// Probes on the real pool: waits on the wall clock (short, generous time-outs; never a sleep).
@Suite(.serialized) struct TestProbeRealTimeTests {
    @Test func expectMessage_onThePool_waitsForTheReply() async throws {
        let system = ActorSystem(name: "real", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let probe = try TestProbe<String>(system: system)
        #expect(probe.virtualClock == nil)
        let echoRef = try system.spawn(echo(), name: "echo")
        for n in 0 ..< 100 { echoRef.tell(.echo("\(n)", replyTo: probe.ref)) }
        #expect(try probe.receiveMessages(100, within: .seconds(10)) == (0 ..< 100).map { "\($0)" })
        echoRef.tell(.stop)
        try probe.expectTerminated(echoRef, within: .seconds(10))
        try probe.expectNoMessage(for: .milliseconds(20))
        let error = try #require(throws: ProbeError.self) { try probe.expectMessage(within: .milliseconds(20)) }
        #expect(!error.isVirtualTime)
        #expect(error.waited >= .milliseconds(20))
        #expect("\(error)".contains("of wall-clock time"))
        let shutdown = await system.shutdown()
        #expect(shutdown.isClean)
    }

    @Test func expectNoMessage_onThePool_failsWhenOneArrives() async throws {
        let system = ActorSystem(name: "real2", configuration: .init(poolWorkerCount: 2, logHandler: nil))
        let probe = try TestProbe<String>(system: system)
        probe.ref.tell("noise")
        let error = try #require(throws: ProbeError.self) { try probe.expectNoMessage(for: .seconds(10)) }
        #expect(error.code == .unexpectedMessage)
        #expect(error.waited < .seconds(10))
        await system.shutdown()
    }
}
