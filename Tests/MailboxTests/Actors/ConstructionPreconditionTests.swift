import Foundation
import Testing
@testable import Mailbox

/// The preconditions the containment audit keeps (`docs/Robustness.md`): invalid static
/// configuration, caught when the value is constructed, before any actor runs with it — as
/// swift-nio does for its configuration. Proven with exit tests: each body runs in a child
/// process that must crash.
@Suite("Construction-time preconditions of actors and supervision")
struct ConstructionPreconditionTests {
    @Test func propsWithANonPositiveRunLength_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Props(runLength: 0) }
    }

    @Test func propsWithANegativeStashCapacity_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Props(stashCapacity: -1) }
    }

    @Test func configurationWithANonPositiveRunLength_crashes() async {
        await #expect(processExitsWith: .failure) { _ = ActorSystem.Configuration(runLength: 0) }
    }

    @Test func systemWithAnInvalidName_crashes() async {
        await #expect(processExitsWith: .failure) { _ = ActorSystem(name: "no spaces/allowed") }
    }

    @Test func restartLimitThatIsNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SupervisorStrategy.restart(limit: -1, within: .seconds(1)) }
    }

    @Test func backoffWithoutAPositiveMinimum_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .zero, maxBackoff: .seconds(1), randomFactor: 0)
        }
    }

    @Test func backoffOptionOnAStrategyWithoutBackoff_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SupervisorStrategy.restart.withStashCapacity(10) }
    }

    @Test func supervisorWithDuplicateChildIds_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = Supervisor.behavior(strategy: .oneForOne, children: [
                ChildSpec(id: "a") { Behavior<Int>.ignore },
                ChildSpec(id: "a") { Behavior<Int>.ignore },
            ])
        }
    }

    /// The control: the same constructions with valid values exit normally, so the tests above
    /// fail for their precondition, not for some crash of the exit-test machinery.
    @Test func validConfiguration_exitsNormally() async {
        await #expect(processExitsWith: .success) {
            _ = Props(runLength: 1, stashCapacity: 0)
            _ = ActorSystem.Configuration(runLength: 1)
            _ = SupervisorStrategy.restart(limit: 0, within: .seconds(1))
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(1), randomFactor: 0).withStashCapacity(10)
            _ = Supervisor.behavior(strategy: .oneForOne, children: [ChildSpec(id: "a") { Behavior<Int>.ignore }])
        }
    }
}
