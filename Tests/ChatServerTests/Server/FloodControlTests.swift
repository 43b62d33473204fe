import Foundation
import Testing
@testable import ChatServerCore

/// Flood control alone, on dates the test chooses.
@Suite("Flood control")
struct FloodControlTests {
    static let start = Date(timeIntervalSince1970: 1_000_000)

    @Test func aBurstRuns_thenCommandsAreHeld_withOneReleaseTimer_untilTheClockCatchesUp() {
        var flood = FloodControl(cost: .seconds(1), burst: .seconds(3), at: Self.start)
        // Paid up to 4 s ahead: 3 s of burst plus the command that takes it past.
        for _ in 0..<4 { #expect(flood.admit(at: Self.start) == .run) }
        #expect(flood.admit(at: Self.start) == .hold(releaseAfter: .seconds(1)))
        // The timer runs already: not armed again.
        #expect(flood.admit(at: Self.start.addingTimeInterval(0.5)) == .hold(releaseAfter: nil))
        flood.released()
        #expect(flood.admit(at: Self.start.addingTimeInterval(1)) == .run)
        #expect(flood.admit(at: Self.start.addingTimeInterval(1)) == .hold(releaseAfter: .seconds(1)))
    }

    @Test func theVirtualClockNeverFallsBehindTheRealOne() {
        var flood = FloodControl(cost: .seconds(1), burst: .seconds(3), at: Self.start)
        // An hour of silence earns no credit: still a burst of 4, no more.
        let later = Self.start.addingTimeInterval(3600)
        for _ in 0..<4 { #expect(flood.admit(at: later) == .run) }
        #expect(flood.admit(at: later) != .run)
    }

    @Test func aMillisecondOfSlackAbsorbsRoundingOfDates() {
        var flood = FloodControl(cost: .seconds(1), burst: .seconds(1), at: Self.start)
        #expect(flood.admit(at: Self.start) == .run)
        #expect(flood.admit(at: Self.start) == .run)
        // 0.9995 s later the client is 1.0005 s ahead: within the slack.
        #expect(flood.admit(at: Self.start.addingTimeInterval(0.9995)) == .run)
        #expect(flood.admit(at: Self.start.addingTimeInterval(0.9995)) == .hold(releaseAfter: .milliseconds(1001)))
    }
}
