#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The monotonic clock every benchmark times its body with (`clock_gettime(CLOCK_MONOTONIC)`).
enum MonotonicClock {
    /// Nanoseconds since an arbitrary, fixed point in the past.
    @inline(__always)
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Runs `body` and returns how long it took, in seconds, with its result.
    @inline(__always)
    static func measure<T>(_ body: () throws -> T) rethrows -> (seconds: Double, result: T) {
        let start = nanoseconds()
        let result = try body()
        let end = nanoseconds()
        return (Double(end &- start) / 1e9, result)
    }
}

/// Reads this process's counters from `/proc/self/status` (Linux; `nil` elsewhere).
enum ProcessStatus {
    /// Peak resident set size (`VmHWM`), in MiB.
    static var peakResidentMegabytes: Double? {
        field("VmHWM").map { Double($0) / 1024 }
    }

    /// Current resident set size (`VmRSS`), in MiB.
    static var residentMegabytes: Double? {
        field("VmRSS").map { Double($0) / 1024 }
    }

    /// Number of threads in the process right now (`Threads`).
    static var threads: Int? {
        field("Threads")
    }

    /// The integer value of `key` (kB for memory fields), or `nil` if it cannot be read.
    static func field(_ key: String) -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        let prefix = key + ":"
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            guard line.hasPrefix(prefix) else { continue }
            let digits = line.dropFirst(prefix.count).filter { $0.isASCII && $0.isNumber }
            return Int(digits)
        }
        return nil
    }
}

/// Writes `message` and a newline to standard error (diagnostics never go to stdout, which
/// carries exactly one JSON line per benchmark).
func printDiagnostic(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

/// Same-process comparison on a noisy machine: runs `ours` and `baseline` alternately,
/// `rounds` times each (ours first in every round), and returns the median seconds of each.
/// Alternating spreads drifting background load over both sides.
func interleavedMedians(
    rounds: Int,
    ours: () -> Double,
    baseline: () -> Double
) -> (ours: Double, baseline: Double) {
    var oursTimes: [Double] = []
    var baselineTimes: [Double] = []
    for _ in 0..<rounds {
        oursTimes.append(ours())
        baselineTimes.append(baseline())
    }
    return (median(oursTimes), median(baselineTimes))
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Rounds per side in same-process comparisons (`MAILBOX_BENCH_ROUNDS`, default 3).
let comparisonRounds: Int = {
    if let text = getenv("MAILBOX_BENCH_ROUNDS"), let value = Int(String(cString: text)), value > 0 {
        return value
    }
    return 3
}()
