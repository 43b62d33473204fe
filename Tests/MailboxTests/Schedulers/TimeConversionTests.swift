import Dispatch
import Foundation
import Testing
@testable import Mailbox

@Suite("Time conversion")
struct TimeConversionTests {
    @Test func secondsToNanoseconds_roundsToNearestAndClamps() {
        #expect(TimeConversion.nanoseconds(1.5) == 1_500_000_000)
        #expect(TimeConversion.nanoseconds(0.000_000_000_4) == 0)
        #expect(TimeConversion.nanoseconds(0.000_000_000_6) == 1)
        #expect(TimeConversion.nanoseconds(-2.25) == -2_250_000_000)
        #expect(TimeConversion.nanoseconds(1e30) == .max)
        #expect(TimeConversion.nanoseconds(-1e30) == .min)
    }

    @Test func dispatchTimeIntervalNanoseconds_scalesEachUnitAndSaturates() {
        #expect(DispatchTimeInterval.seconds(3).nanoseconds == 3_000_000_000)
        #expect(DispatchTimeInterval.milliseconds(3).nanoseconds == 3_000_000)
        #expect(DispatchTimeInterval.microseconds(3).nanoseconds == 3_000)
        #expect(DispatchTimeInterval.nanoseconds(3).nanoseconds == 3)
        #expect(DispatchTimeInterval.never.nanoseconds == .max)
        #expect(DispatchTimeInterval.seconds(.max).nanoseconds == .max)
        #expect(DispatchTimeInterval.seconds(.min).nanoseconds == .min)
    }

    @Test func dispatchTimeIntervalScaled_isATenthForTheDefaultLeeway() {
        #expect((DispatchTimeInterval.seconds(1) * 0.1).nanoseconds == 100_000_000)
        #expect((DispatchTimeInterval.milliseconds(15) * 0.1).nanoseconds == 1_500_000)
    }

    @Test func durationNanoseconds_isExactForPositiveAndNegativeDurations() {
        #expect(Duration.seconds(2).nanoseconds == 2_000_000_000)
        #expect(Duration.nanoseconds(1_000_000_001).nanoseconds == 1_000_000_001)
        #expect(Duration.milliseconds(-1_500).nanoseconds == -1_500_000_000)
        #expect((Duration.seconds(-1) - .nanoseconds(1)).nanoseconds == -1_000_000_001)
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect(Duration.seconds(Int64.min).nanoseconds == .min)
    }

    @Test func durationTimeInterval_isInSeconds() {
        #expect(Duration.milliseconds(1_500).timeInterval == 1.5)
        #expect(Duration.milliseconds(-250).timeInterval == -0.25)
    }
}
