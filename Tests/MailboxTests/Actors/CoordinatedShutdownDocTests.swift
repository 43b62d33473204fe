import Foundation
import Testing
@testable import Mailbox

/// The snippets of docs/Actors.md, section "Coordinated shutdown", as tests: keep them in step.
/// (The signal snippet ends the process; `CoordinatedShutdownTests` tests its hook with SIGUSR2.)
@Suite("Docs: coordinated shutdown")
struct CoordinatedShutdownDocTests {
    @Test func phasesSnippet() async throws {
        let system = ActorSystem(name: "svc", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil))
        let log = Recorder()

        let shutdown = system.coordinatedShutdown
        try shutdown.addTask(phase: .serviceRequestsDone, name: "drain") { log.record("drain") }
        try shutdown.addTask(phase: .serviceUnbind, name: "unbind") { log.record("unbind") }
        system.registerOnTermination { log.record("terminated") }
        let report = await system.terminate()

        #expect(log.all == ["unbind", "drain", "terminated"])
        #expect(report.isClean && report.reason == .actorSystemTerminate)
    }

    @Test func virtualTimeSnippet() async throws {
        let started = AsyncGate()

        let timers = TestScheduler()
        let system = ActorSystem(name: "svc", configuration: .init(
            scheduler: ImmediateScheduler(), timerScheduler: timers, logHandler: nil))
        try system.coordinatedShutdown.addTask(phase: .serviceUnbind, name: "stuck") {
            started.open(true)
            try await Task.sleep(for: .seconds(3600))        // ends only when cancelled
        }
        let termination = Task { await system.terminate() }
        #expect(await started.wait())                        // "… once the task runs:"
        timers.advance(by: .seconds(5))                      // service-unbind times out; the rest runs
        let report = await termination.value

        #expect(report.failedTasks.map(\.description)
            == ["shutdown task 'stuck' in phase service-unbind timed out after 5.0 seconds"])
    }

    @Test func configurationSnippet() {
        var shutdown = CoordinatedShutdown.Configuration()
        shutdown.phaseTimeouts[.serviceRequestsDone] = .seconds(30)   // long flushes
        let system = ActorSystem(name: "app", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil, coordinatedShutdown: shutdown))
        #expect(system.coordinatedShutdown.configuration.timeout(of: .serviceRequestsDone) == .seconds(30))
        #expect(system.coordinatedShutdown.configuration.timeout(of: .serviceStop) == .seconds(5))
    }
}
