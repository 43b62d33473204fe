import Testing
@testable import Mailbox

/// The construction-time preconditions of routers and resizers (`docs/Robustness.md`, class a),
/// proven with exit tests: each body runs in a child process that must crash.
@Suite("Construction-time preconditions of routers")
struct RoutingPreconditionTests {
    @Test func poolOfNoRoutees_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Routers.pool(size: 0) { Behavior<Int>.ignore } }
    }

    @Test func balancingPoolWithoutRoomInItsQueue_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Routers.balancingPool(size: 2, queueCapacity: 0) { Behavior<Int>.ignore } }
    }

    @Test func consistentHashingWithoutVirtualNodes_crashes() async {
        await #expect(processExitsWith: .failure) { _ = RoutingLogic<Int>.consistentHashing(virtualNodesFactor: 0) { "\($0)" } }
    }

    @Test func resizerWithALowerBoundBelowOne_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(lowerBound: 0) }
    }

    @Test func resizerWithBoundsTheWrongWayRound_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(lowerBound: 5, upperBound: 2) }
    }

    @Test func resizerWithAPressureThresholdBelowOne_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(pressureThreshold: 0) }
    }

    @Test func resizerWithoutAPositiveFiniteRampUp_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(rampupRate: 0) }
        await #expect(processExitsWith: .failure) { _ = Resizer(rampupRate: .infinity) }
    }

    @Test func resizerWithABackoffThresholdOfOne_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(backoffThreshold: 1) }
    }

    @Test func resizerWithABackoffRateAboveOne_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(backoffRate: 2) }
    }

    @Test func resizerSamplingEveryZeroMessages_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(messagesPerResize: 0) }
    }

    @Test func resizerWithANegativeCooldown_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Resizer(cooldown: .seconds(-1)) }
    }

    @Test func aValidResizer_isAccepted() {
        let resizer = Resizer(lowerBound: 1, upperBound: 1, pressureThreshold: 1, rampupRate: 1_000, backoffThreshold: 0, backoffRate: 0, messagesPerResize: 1, cooldown: .zero)
        #expect(resizer.change(size: 1, busy: 1) == 0)
    }
}
