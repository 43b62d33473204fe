import Dispatch
import Foundation
import Testing
@testable import Mailbox

@Suite("Spawning while the parent or the system stops")
struct SpawnWhileStoppingTests {
    @Test func spawningInPostStop_throwsParentNotRunning_andLeavesNoOrphan() throws {
        let (system, scheduler) = makeTestSystem()
        let outcome = Inbox<String>()
        let parent = try system.spawn(
            Behavior<Int>.receive { _, _ in .stopped }
                .receiveLifecycle { context, event in
                    if case .postStop = event {
                        do {
                            try context.spawn(Behavior<Int>.ignore, name: "late")
                            outcome.record("spawned")
                        } catch let error as ActorSystemError {
                            outcome.record("\(error.code)")
                        }
                    }
                    return .same
                },
            name: "parent")
        parent.tell(1)
        scheduler.runDue()
        #expect(outcome.values == ["parentNotRunning"])
    }

    /// A top-level spawn racing `beginShutdown` is either refused or stopped; never left
    /// running unseen (it used to be adopted after the shutdown's snapshot of the children).
    @Test func spawnRacingBeginShutdown_leavesNoActorRunning() async throws {
        var leaked = 0
        for round in 0..<40 {
            let system = ActorSystem(name: "race", configuration: .init(scheduler: ImmediateScheduler(), logHandler: nil))
            let spawned = LockedValueBox<[ActorRef<Int>]>([])
            let started = DispatchSemaphore(value: 0)
            let finished = AsyncGate()
            Thread.detachNewThread {
                started.signal()
                var index = 0
                while true {
                    do {
                        let ref = try system.spawn(Behavior<Int>.ignore, name: "a\(round)x\(index)")
                        spawned.withLockedValue { $0.append(ref) }
                        index += 1
                    } catch {
                        break
                    }
                }
                finished.open(true)
            }
            started.wait()
            system.beginShutdown()
            #expect(await finished.wait(timeout: 30))
            leaked += spawned.withLockedValue { refs in
                refs.filter { !unsafeDowncast($0.target, to: ActorCell<Int>.self).isTerminated() }.count
            }
        }
        #expect(leaked == 0, "top-level actors spawned during beginShutdown and never stopped: \(leaked)")
    }
}
