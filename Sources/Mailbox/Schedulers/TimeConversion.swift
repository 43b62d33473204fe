import Dispatch
import Foundation

/// Conversions between the time types the schedulers accept, in whole nanoseconds.
enum TimeConversion {
    /// `seconds` in nanoseconds, rounded to the nearest and clamped to `Int64`'s range.
    static func nanoseconds(_ seconds: TimeInterval) -> Int64 {
        let value = (seconds * 1e9).rounded()
        if value >= Double(Int64.max) { return .max }
        if value <= Double(Int64.min) { return .min }
        return Int64(value)
    }
}

extension DispatchTimeInterval {
    /// The interval in nanoseconds; `.never` is `Int64.max`.
    var nanoseconds: Int64 {
        func scaled(_ value: Int, _ factor: Int64) -> Int64 {
            let (product, overflow) = Int64(value).multipliedReportingOverflow(by: factor)
            return overflow ? (value < 0 ? .min : .max) : product
        }
        switch self {
        case let .seconds(s): return scaled(s, 1_000_000_000)
        case let .milliseconds(ms): return scaled(ms, 1_000_000)
        case let .microseconds(us): return scaled(us, 1_000)
        case let .nanoseconds(ns): return Int64(ns)
        case .never: return .max
        @unknown default: return .max
        }
    }

    /// The interval in seconds.
    var timeInterval: TimeInterval {
        Double(nanoseconds) / 1e9
    }

    /// Scales the interval; used for default leeways.
    static func * (lhs: DispatchTimeInterval, rhs: Double) -> DispatchTimeInterval {
        .nanoseconds(Int(clamping: TimeConversion.nanoseconds(lhs.timeInterval * rhs)))
    }
}

extension Duration {
    /// The duration in nanoseconds, truncated and clamped to `Int64`'s range.
    var nanoseconds: Int64 {
        // `components` traps beyond `Int64` seconds: such durations are clamped first.
        if self >= .seconds(Int64.max) { return .max }
        if self <= .seconds(Int64.min) { return .min }
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return sum
    }

    /// The duration in seconds.
    var timeInterval: TimeInterval {
        if self >= .seconds(Int64.max) { return Double(Int64.max) }
        if self <= .seconds(Int64.min) { return Double(Int64.min) }
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
