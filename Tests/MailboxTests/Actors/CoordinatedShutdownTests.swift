#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import Mailbox

/// A system whose actors run inline (so they stop at once when told) and whose timers — the
/// phase time-outs among them — run on virtual time; its log lines are kept.
private struct ShutdownFixture {
    let system: ActorSystem
    let timers = TestScheduler()
    let logLines = Inbox<String>()

    init(_ name: String = "coordinated", _ adjust: (inout CoordinatedShutdown.Configuration) -> Void = { _ in }) {
        var shutdown = CoordinatedShutdown.Configuration()
        adjust(&shutdown)
        let logLines = logLines
        system = ActorSystem(name: name, configuration: .init(
            scheduler: ImmediateScheduler(), timerScheduler: timers,
            logHandler: { logLines.record($0) }, coordinatedShutdown: shutdown))
    }

    var shutdown: CoordinatedShutdown { system.coordinatedShutdown }
}

/// A parent with one child; each records its post-stop.
private func family(log: Inbox<String>) -> Behavior<String> {
    .setup { context in
        try context.spawn(Behavior<String>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
            guard case .postStop = event else { return .unhandled }
            log.record("child stopped")
            return .same
        }, name: "child")
        return Behavior<String>.receiveMessage { _ in .same }.receiveLifecycle { _, event in
            guard case .postStop = event else { return .unhandled }
            log.record("parent stopped")
            return .same
        }
    }
}

@Suite("Coordinated shutdown")
struct CoordinatedShutdownTests {
    // MARK: Phases

    @Test func terminate_runsThePhasesInOrder_thenStopsTheTreeChildrenFirst_thenTheCallbacks() async throws {
        let fixture = ShutdownFixture()
        let log = Inbox<String>()
        // Registered last phase first: the phase, not the registration, decides the order.
        for phase in CoordinatedShutdown.Phase.defaultOrder.reversed() {
            try fixture.shutdown.addTask(phase: phase, name: "record") { log.record(phase.name) }
        }
        try fixture.system.spawn(family(log: log), name: "parent")
        fixture.system.registerOnTermination { log.record("terminated") }

        let report = await fixture.system.terminate()

        #expect(log.values == [
            "before-service-unbind", "service-unbind", "service-requests-done", "service-stop",
            "before-actor-system-terminate", "actor-system-terminate",
            "child stopped", "parent stopped", "terminated",
        ])
        #expect(report.isClean)
        #expect(report.failedTasks.isEmpty)
        #expect(report.reason == .actorSystemTerminate)
        #expect(fixture.system.isTerminated)
        #expect(fixture.system.topLevelActors.isEmpty)
    }

    @Test func tasksOfOnePhaseRunConcurrently_andTheNextPhaseWaitsForAllOfThem() async throws {
        let fixture = ShutdownFixture()
        let first = AsyncGate()
        let second = AsyncGate()
        let log = Inbox<String>()
        // Each waits for the other: they can only both finish if they run at the same time.
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "first") {
            first.open(true)
            log.record(await second.wait() ? "first done" : "first waited in vain")
        }
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "second") {
            second.open(true)
            log.record(await first.wait() ? "second done" : "second waited in vain")
        }
        try fixture.shutdown.addTask(phase: .serviceRequestsDone, name: "next") { log.record("next phase") }

        let report = await fixture.system.terminate()

        #expect(Set(log.values.prefix(2)) == ["first done", "second done"])
        #expect(log.values.last == "next phase")
        #expect(report.isClean)
    }

    @Test func slowTask_timesOutOnVirtualTime_isCancelledAndReported_andTheNextPhaseRuns() async throws {
        let fixture = ShutdownFixture { $0.phaseTimeouts[.serviceUnbind] = .seconds(30) }
        let started = AsyncGate()
        let log = Inbox<String>()
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "slow-unbind") {
            started.open(true)
            do {
                try await Task.sleep(for: .seconds(3600))   // ends only by cancellation
                log.record("slow finished")
            } catch {
                log.record("slow cancelled")
            }
        }
        try fixture.shutdown.addTask(phase: .serviceRequestsDone, name: "next") { log.record("next phase") }
        let system = fixture.system
        let termination = Task { await system.terminate() }
        #expect(await started.wait())

        fixture.timers.advance(by: .seconds(29))            // the phase's own time-out: 30 s
        #expect(!log.values.contains("next phase"))
        fixture.timers.advance(by: .seconds(1))
        let report = await termination.value

        #expect(await log.waitForCount(2))
        #expect(Set(log.values) == ["slow cancelled", "next phase"])
        #expect(report.failedTasks.map(\.description) == ["shutdown task 'slow-unbind' in phase service-unbind timed out after 30.0 seconds"])
        #expect(report.failedTasks.first?.timedOut == true)
        #expect(!report.isClean)
        #expect(report.actorsNotStopped.isEmpty)
        #expect(fixture.logLines.values.contains("[coordinated] coordinated shutdown: shutdown task 'slow-unbind' in phase service-unbind timed out after 30.0 seconds"))
    }

    @Test func failingTask_isLoggedAndSkipped_andItsPhaseAndTheNextGoOn() async throws {
        let fixture = ShutdownFixture()
        let log = Inbox<String>()
        try fixture.shutdown.addTask(phase: .serviceStop, name: "broken") { throw TestError(code: 7) }
        try fixture.shutdown.addTask(phase: .serviceStop, name: "fine") { log.record("fine") }
        try fixture.shutdown.addTask(phase: .beforeActorSystemTerminate, name: "later") { log.record("later") }

        let report = await fixture.system.terminate()

        #expect(log.values == ["fine", "later"])
        #expect(report.failedTasks.count == 1)
        #expect(report.failedTasks.first?.name == "broken")
        #expect(report.failedTasks.first?.phase == .serviceStop)
        #expect(report.failedTasks.first?.timedOut == false)
        #expect("\(report)" == "shutdown complete; 1 shutdown task failed")
        #expect(fixture.logLines.values.contains("[coordinated] coordinated shutdown: shutdown task 'broken' in phase service-stop failed: TestError(code: 7)"))
    }

    @Test func customPhases_runInTheConfiguredOrder() async throws {
        let fixture = ShutdownFixture { $0.phases = ["drain", "flush", .actorSystemTerminate] }
        let log = Inbox<String>()
        try fixture.shutdown.addTask(phase: "flush", name: "flush") { log.record("flush") }
        try fixture.shutdown.addTask(phase: "drain", name: "drain") { log.record("drain") }
        #expect(throws: CoordinatedShutdownError.self) {
            try fixture.shutdown.addTask(phase: .serviceUnbind, name: "not here") {}
        }
        await fixture.system.terminate()
        #expect(log.values == ["drain", "flush"])
    }

    // MARK: Once

    @Test func terminate_isIdempotent_concurrentCallersShareOneRun_andCallbacksRunOnce() async throws {
        let fixture = ShutdownFixture()
        let system = fixture.system
        let runs = Inbox<String>()
        let callbacks = Inbox<String>()
        let release = AsyncGate()
        let entered = AsyncGate()
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "hold") {
            runs.record("hold")
            entered.open(true)
            _ = await release.wait()
        }
        system.registerOnTermination { callbacks.record("callback") }
        let first = Task { await system.terminate() }
        #expect(await entered.wait())
        // The run is held in service-unbind: these must wait for the same run, not start one.
        let second = Task { await system.terminate() }
        let custom = Task { await system.coordinatedShutdown.run(reason: .custom("deploy")) }
        let waiter = Task { await system.whenTerminated }
        release.open(true)

        let reports = [await first.value, await second.value, await custom.value, await waiter.value]
        #expect(runs.values == ["hold"])
        #expect(callbacks.values == ["callback"])
        #expect(reports.allSatisfy { $0.reason == .actorSystemTerminate })
        #expect(system.coordinatedShutdown.reason == .actorSystemTerminate)
        // And after the end: at once, the same report, nothing runs again.
        let again = await system.terminate()
        #expect(again.reason == .actorSystemTerminate && again.isClean)
        #expect(runs.values == ["hold"] && callbacks.values == ["callback"])
    }

    @Test func plainShutdown_runsNoPhase_butTerminates_callbacksRunOnce_andTerminateReturnsItsReport() async throws {
        let fixture = ShutdownFixture()
        let system = fixture.system
        let log = Inbox<String>()
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "unbind") { log.record("task") }
        system.registerOnTermination { log.record("callback") }
        try system.spawn(family(log: log), name: "parent")

        let report = await system.shutdown()
        #expect(log.values == ["child stopped", "parent stopped", "callback"])
        #expect(report.reason == nil && report.failedTasks.isEmpty)
        #expect(system.isTerminated)
        #expect(await system.whenTerminated.isClean)

        _ = await system.shutdown()                        // idempotent: no second callback
        let late = await system.terminate()                 // no phase runs after a plain shutdown
        #expect(late.reason == nil)
        #expect(log.values == ["child stopped", "parent stopped", "callback"])
        #expect(system.coordinatedShutdown.reason == nil)
    }

    @Test func plainShutdown_duringARun_skipsTheRemainingPhases() async throws {
        let fixture = ShutdownFixture()
        let system = fixture.system
        let log = Inbox<String>()
        let entered = AsyncGate()
        let release = AsyncGate()
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "hold") {
            entered.open(true)
            _ = await release.wait()
        }
        try fixture.shutdown.addTask(phase: .serviceStop, name: "skipped") { log.record("skipped ran") }
        let run = Task { await system.terminate() }
        #expect(await entered.wait())
        _ = await system.shutdown()
        #expect(system.isTerminated)
        release.open(true)
        _ = await run.value
        #expect(log.values.isEmpty)
    }

    @Test func registerOnTermination_callbacksRunNewestFirst_andOneRegisteredAfterwardsRunsAtOnce() async throws {
        let fixture = ShutdownFixture()
        let log = Inbox<String>()
        fixture.system.registerOnTermination { log.record("first registered") }
        fixture.system.registerOnTermination { log.record("second registered") }
        await fixture.system.terminate()
        #expect(log.values == ["second registered", "first registered"])
        fixture.system.registerOnTermination { log.record("after termination") }
        #expect(log.values.last == "after termination")
    }

    @Test func terminatedProducer_sendsTheReportAndCompletes_beforeAndAfterTheTermination() async throws {
        let fixture = ShutdownFixture()
        let early = Inbox<String>()
        fixture.system.terminated.start { event in early.record("\(event)") }
        let cancelled = Inbox<String>()
        fixture.system.terminated.start { event in cancelled.record("\(event)") }.dispose()
        await fixture.system.terminate()
        let late = Inbox<String>()
        fixture.system.terminated.start { event in late.record("\(event)") }
        #expect(early.values.count == 2 && early.values.last == "COMPLETED")
        #expect(late.values == early.values)
        #expect(cancelled.values == ["INTERRUPTED"])
    }

    // MARK: Registration

    @Test func addTask_toAPhaseThatHasStarted_isRejected_aLaterPhaseStillAccepts() async throws {
        let fixture = ShutdownFixture()
        let shutdown = fixture.shutdown
        let log = Inbox<String>()
        let errors = Inbox<String>()
        try shutdown.addTask(phase: .serviceUnbind, name: "adder") {
            for phase in [CoordinatedShutdown.Phase.beforeServiceUnbind, .serviceUnbind] {
                do {
                    try shutdown.addTask(phase: phase, name: "too-late") { log.record("too late ran") }
                } catch let error as CoordinatedShutdownError {
                    errors.record("\(error.code): \(error)")
                } catch {
                    errors.record("unexpected: \(error)")
                }
            }
            try shutdown.addTask(phase: .serviceStop, name: "added-in-time") { log.record("added in time") }
        }
        await fixture.system.terminate()

        #expect(log.values == ["added in time"])
        #expect(errors.values == [
            "phaseAlreadyStarted: cannot add shutdown task 'too-late' to phase 'before-service-unbind' of actor system 'coordinated': "
                + "the shutdown is already in phase 'service-unbind'; it would never run",
            "phaseAlreadyStarted: cannot add shutdown task 'too-late' to phase 'service-unbind' of actor system 'coordinated': "
                + "that phase is running; it would never run",
        ])
        #expect {
            try shutdown.addTask(phase: .actorSystemTerminate, name: "after") {}
        } throws: { error in
            (error as? CoordinatedShutdownError)?.description
                == "cannot add shutdown task 'after' to phase 'actor-system-terminate' of actor system 'coordinated': the system has terminated; it would never run"
        }
    }

    @Test func addTask_toAnUnknownPhase_throwsNamingThePhases() throws {
        let fixture = ShutdownFixture { $0.phases = ["only", .actorSystemTerminate] }
        #expect {
            try fixture.shutdown.addTask(phase: "typo", name: "t") {}
        } throws: { error in
            let error = error as? CoordinatedShutdownError
            return error?.code == .unknownPhase
                && error?.description == "cannot add shutdown task 't' to actor system 'coordinated': no phase 'typo' (its phases: only, actor-system-terminate)"
        }
    }

    @Test func cancelledTask_doesNotRun_andCancelSaysWhetherItRemovedTheTask() async throws {
        let fixture = ShutdownFixture()
        let log = Inbox<String>()
        let removed = try fixture.shutdown.addTask(phase: .serviceStop, name: "removed") { log.record("removed ran") }
        let kept = try fixture.shutdown.addTask(phase: .serviceUnbind, name: "kept") { log.record("kept ran") }
        #expect(removed.cancel())
        #expect(!removed.cancel())
        #expect(removed.isCancelled && removed.isDisposed)
        await fixture.system.terminate()
        #expect(log.values == ["kept ran"])
        #expect(!kept.cancel())                               // it has run
    }

    // MARK: After termination

    @Test func tellsAfterTermination_areDeadLettersOrDropped_neverACrash() async throws {
        // On the default pool: after termination its threads are gone.
        // Generous phase time-outs: a task's Swift `Task` can wait seconds for a thread of a
        // starved cooperative pool (the whole suite under ThreadSanitizer on two cores).
        let system = ActorSystem(name: "late", configuration: .init(
            poolWorkerCount: 2, logHandler: nil,
            coordinatedShutdown: .init(defaultPhaseTimeout: .seconds(120), phaseTimeouts: [:])))
        let echo = try system.spawn(Behavior<String>.receiveMessage { _ in .same }, name: "echo")
        let deadLetters = Inbox<String>()
        system.deadLetters.observeValues { deadLetters.record("\($0.message)") }
        system.registerOnTermination {
            // From a termination callback too: the event stream is closed by now.
            _ = echo.tell("from a callback")
        }
        try system.coordinatedShutdown.addTask(phase: .beforeActorSystemTerminate, name: "tell") {
            _ = echo.tell("while terminating")
        }

        let report = await system.terminate()
        #expect(report.isClean, "\(report)")
        let before = system.deadLetterCount
        #expect(echo.tell("after") == .dropped(.recipientTerminated))
        #expect(system.deadLetterCount == before + 1)
        #expect(throws: ActorSystemError.self) { try system.spawn(Behavior<String>.ignore, name: "new") }
        await #expect(throws: AskError.self) {
            let _: Int = try await echo.ask(timeout: .seconds(1)) { (_: ActorRef<Int>) in "question" }
        }
        // The event stream closed at termination: later dead letters are counted, not published.
        #expect(!deadLetters.values.contains("after"))
    }

    @Test func tellToAnActorThatDidNotStopInTime_afterTermination_isNoCrash() async throws {
        let fixture = ShutdownFixture { $0.phaseTimeouts[.actorSystemTerminate] = .milliseconds(100) }
        let stalled = TestScheduler()                       // nobody advances it: this actor never stops
        let stuck = try fixture.system.spawn(Behavior<String>.ignore, name: "stuck", props: Props(scheduler: stalled))
        let report = await fixture.system.terminate()
        #expect(report.actorsNotStopped.map(\.path) == ["/user/stuck"])
        #expect(fixture.system.isTerminated)
        #expect(stuck.tell("queued on a scheduler nobody runs") == .enqueued)
    }

    // MARK: Signals

    @Test func signalHook_runsTheShutdownOnAnOptedInSignal_withTheSignalAsReason() async throws {
        // Whatever happens below, a stray SIGUSR2 must not end the test runner.
        signal(SIGUSR2, SIG_IGN)
        let fixture = ShutdownFixture()
        let ran = Inbox<String>()
        try fixture.shutdown.addTask(phase: .serviceUnbind, name: "unbind") { ran.record("unbind") }
        let hook = fixture.shutdown.installSignalHandlers([SIGUSR2])
        #expect(!hook.isDisposed)

        // Sent to the process, as `kill -USR2` does (`raise` would target this thread, and the
        // Dispatch threads Swift tasks run on block signals). The dispatch source is armed
        // asynchronously: send until the shutdown has seen one.
        var attempts = 0
        repeat {
            kill(getpid(), SIGUSR2)
            attempts += 1
        } while await !ran.waitForCount(1, timeout: 0.5) && attempts < 40
        let report = await fixture.system.whenTerminated

        #expect(ran.values == ["unbind"])
        #expect(report.reason == .signal(SIGUSR2))
        #expect(report.reason?.signalNumber == SIGUSR2)
        #expect("\(report.reason!)" == "signal SIGUSR2")
        #expect(hook.isDisposed)                              // removed at termination
    }

    // MARK: Configuration

    @Test func configuration_defaultsAreAkkas() {
        let configuration = CoordinatedShutdown.Configuration()
        #expect(configuration.phases.map(\.name) == [
            "before-service-unbind", "service-unbind", "service-requests-done", "service-stop",
            "before-actor-system-terminate", "actor-system-terminate",
        ])
        #expect(configuration.timeout(of: .serviceUnbind) == .seconds(5))
        #expect(configuration.timeout(of: .actorSystemTerminate) == .seconds(10))
        #expect(configuration.problem() == nil)
        #expect(CoordinatedShutdown.Configuration(phases: ["a", "a", .actorSystemTerminate]).problem() == "phase a is listed twice")
        #expect(CoordinatedShutdown.Configuration(phases: ["a"]).problem() == "the last phase must be actor-system-terminate, not a")
    }

    @Test func systemWithAnInvalidShutdownConfiguration_isAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            _ = ActorSystem(name: "bad", configuration: .init(
                scheduler: ImmediateScheduler(), logHandler: nil,
                coordinatedShutdown: .init(phases: [.serviceUnbind])))
        }
    }
}
