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

    @Test func restartWindowThatIsNotPositive_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SupervisorStrategy.restart(limit: 1, within: .zero) }
    }

    @Test func backoffWithAMaximumBelowItsMinimum_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(2), maxBackoff: .seconds(1), randomFactor: 0)
        }
    }

    @Test func backoffWithANegativeRandomFactor_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(2), randomFactor: -0.1)
        }
    }

    @Test func backoffWithARandomFactorThatIsNotFinite_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(2), randomFactor: .nan)
        }
    }

    @Test func resetBackoffAfterOnAStrategyWithoutBackoff_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SupervisorStrategy.restart.withResetBackoffAfter(.seconds(1)) }
    }

    @Test func resetBackoffAfterThatIsNotPositive_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(2), randomFactor: 0)
                .withResetBackoffAfter(.zero)
        }
    }

    @Test func backoffStashCapacityThatIsNegative_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(2), randomFactor: 0)
                .withStashCapacity(-1)
        }
    }

    @Test func maxRestartsOnAStrategyWithoutBackoff_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SupervisorStrategy.restart.withMaxRestarts(3) }
    }

    @Test func maxRestartsThatIsNegative_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(2), randomFactor: 0)
                .withMaxRestarts(-1)
        }
    }

    @Test func supervisorWithANegativeIntensity_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = Supervisor.behavior(strategy: .oneForOne, intensity: -1, children: [ChildSpec(id: "a") { Behavior<Int>.ignore }])
        }
    }

    @Test func supervisorWithAPeriodThatIsNotPositive_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = Supervisor.behavior(strategy: .oneForOne, period: .zero, children: [ChildSpec(id: "a") { Behavior<Int>.ignore }])
        }
    }

    /// A system's own pool with no worker (the precondition is the pool's).
    @Test func systemWithAPoolOfNoWorkers_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = ActorSystem(name: "no-workers", configuration: .init(poolWorkerCount: 0, logHandler: nil))
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
            _ = SupervisorStrategy.restartWithBackoff(minBackoff: .seconds(1), maxBackoff: .seconds(2), randomFactor: 0)
                .withResetBackoffAfter(.seconds(1)).withStashCapacity(0).withMaxRestarts(0)
            _ = Supervisor.behavior(strategy: .oneForOne, children: [ChildSpec(id: "a") { Behavior<Int>.ignore }])
            _ = Supervisor.behavior(strategy: .oneForOne, intensity: 0, period: .nanoseconds(1), children: [ChildSpec(id: "a") { Behavior<Int>.ignore }])
            let system = ActorSystem(name: "one-worker", configuration: .init(poolWorkerCount: 1, logHandler: nil))
            _ = await system.shutdown()
        }
    }
}
