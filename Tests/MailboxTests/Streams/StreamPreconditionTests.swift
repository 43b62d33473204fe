import Foundation
import Testing
@testable import Mailbox

/// The stream API's documented preconditions (`docs/Robustness.md`, class d), the same as
/// ReactiveSwift 7.2.1's: an operator given a count or an interval it cannot honour traps where
/// it is applied (a producer's operator: when the producer starts). Proven with exit tests: each
/// body runs in a child process that must crash.
@Suite("Stream preconditions")
struct StreamPreconditionTests {
    struct Boom: Error {}

    // MARK: Counts

    @Test func collectCountOfZero_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.collect(count: 0) }
    }

    @Test func takeFirstNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.take(first: -1) }
    }

    @Test func takeLastNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.take(last: -1) }
    }

    @Test func skipFirstNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.skip(first: -1) }
    }

    /// A producer's operator checks when the producer starts: the run is where it traps.
    @Test func producerTakeLastNegative_crashesWhenStarted() async {
        await #expect(processExitsWith: .failure) { SignalProducer<Int, Never>(value: 1).take(last: -1).start() }
    }

    @Test func replayLazilyNegativeCapacity_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SignalProducer<Int, Never>(value: 1).replayLazily(upTo: -1) }
    }

    @Test func repeatNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SignalProducer<Int, Never>(value: 1).repeat(-1) }
    }

    @Test func retryNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SignalProducer<Int, Boom>(error: Boom()).retry(upTo: -1) }
    }

    @Test func retryWithIntervalNegative_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SignalProducer<Int, Boom>(error: Boom()).retry(upTo: -1, interval: 1, on: TestScheduler())
        }
    }

    @Test func concurrentFlattenLimitOfZero_crashes() async {
        await #expect(processExitsWith: .failure) { _ = FlattenStrategy.concurrent(limit: 0) }
    }

    // MARK: Intervals

    @Test func delayNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.delay(-1, on: TestScheduler()) }
    }

    @Test func throttleNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.throttle(-1, on: TestScheduler()) }
    }

    @Test func debounceNegative_crashes() async {
        await #expect(processExitsWith: .failure) { _ = Signal<Int, Never>.pipe().output.debounce(-1, on: TestScheduler()) }
    }

    @Test func timeoutNegative_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = Signal<Int, Boom>.pipe().output.timeout(after: -1, raising: Boom(), on: TestScheduler())
        }
    }

    @Test func collectEveryZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = Signal<Int, Never>.pipe().output.collect(every: .nanoseconds(0), on: TestScheduler())
        }
    }

    @Test func timerProducerWithZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) { _ = SignalProducer<Date, Never>.timer(interval: .seconds(0), on: TestScheduler()) }
    }

    @Test func timerProducerWithANegativeLeeway_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SignalProducer<Date, Never>.timer(interval: .seconds(1), on: TestScheduler(), leeway: .seconds(-1))
        }
    }

    @Test func intervalProducerWithZeroInterval_crashes() async {
        await #expect(processExitsWith: .failure) {
            _ = SignalProducer<Int, Never>.interval([1, 2], interval: .seconds(0), on: TestScheduler())
        }
    }

    /// The control: the same operators with the smallest valid arguments exit normally, so the
    /// tests above fail for their precondition, not for some crash of the exit-test machinery.
    @Test func validArguments_exitNormally() async {
        await #expect(processExitsWith: .success) {
            let scheduler = TestScheduler()
            let signal = Signal<Int, Never>.pipe().output
            _ = signal.collect(count: 1)
            _ = signal.take(first: 0)
            _ = signal.take(last: 0)
            _ = signal.skip(first: 0)
            _ = signal.delay(0, on: scheduler)
            _ = signal.throttle(0, on: scheduler)
            _ = signal.debounce(0, on: scheduler)
            _ = Signal<Int, Boom>.pipe().output.timeout(after: 0, raising: Boom(), on: scheduler)
            _ = signal.collect(every: .nanoseconds(1), on: scheduler)
            SignalProducer<Int, Never>(value: 1).take(last: 0).start()
            _ = SignalProducer<Int, Never>(value: 1).replayLazily(upTo: 0)
            _ = SignalProducer<Int, Never>(value: 1).repeat(0)
            _ = SignalProducer<Int, Boom>(error: Boom()).retry(upTo: 0)
            _ = SignalProducer<Int, Boom>(error: Boom()).retry(upTo: 0, interval: 0, on: scheduler)
            _ = FlattenStrategy.concurrent(limit: 1)
            _ = SignalProducer<Date, Never>.timer(interval: .nanoseconds(1), on: scheduler, leeway: .seconds(0))
            _ = SignalProducer<Int, Never>.interval([1], interval: .nanoseconds(1), on: scheduler)
        }
    }
}
