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

/// Reads this process's counters from `/proc/self/status` (Linux; `nil` elsewhere, except the
/// peak resident set size, which falls back to `getrusage`).
enum ProcessStatus {
    /// Peak resident set size (`VmHWM`, or `getrusage`'s `ru_maxrss` where /proc is absent), in
    /// MiB.
    static var peakResidentMegabytes: Double? {
        field("VmHWM").map { Double($0) / 1024 } ?? maximumResidentFromRusage
    }

    /// `getrusage(RUSAGE_SELF).ru_maxrss` in MiB: the unit is kilobytes on Linux, bytes on
    /// Darwin. `nil` if the call fails.
    static var maximumResidentFromRusage: Double? {
        var usage = rusage()
        #if canImport(Glibc)
        let who = __rusage_who_t(RUSAGE_SELF.rawValue)  // an enum in Glibc's module map
        #else
        let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return nil }
        #if canImport(Darwin)
        return Double(usage.ru_maxrss) / (1024 * 1024)
        #else
        return Double(usage.ru_maxrss) / 1024
        #endif
    }

    /// Resets the peak resident set size to the current one (Linux: writes 5 to
    /// `/proc/self/clear_refs`), so that a later `peakResidentMegabytes` measures only what ran
    /// since. Returns whether it could.
    @discardableResult
    static func resetPeakResident() -> Bool {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return false }
        defer { fclose(file) }
        return fputs("5", file) >= 0
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
