/// One benchmark `mailbox-bench` can run: a name, its positional size parameters, and a body.
///
/// To add a benchmark, add a `Benchmark` value to the array of its family's file in
/// `Benchmarks/` (for example `BenchmarkRegistry.actors` in `ActorBenchmarks.swift`). The
/// driver parses and validates the sizes, and emits the JSON line (adding `runtime`,
/// `peak_rss_mb` and `threads`), so a benchmark only measures and fills in a `BenchmarkResult`.
///
/// A benchmark that needs something outside the process (a NATS server) says so with
/// `unavailableReason`: `all` then skips it, and running it by name fails with that reason.
struct Benchmark: Sendable {
    /// One positional size argument.
    struct Parameter: Sendable {
        /// Shown in the usage line, e.g. `N` or `PRODUCERS`.
        let name: String
        /// Used when the argument is absent; chosen so a run takes about 1–3 s here.
        let defaultValue: Int
        /// The smallest value accepted.
        let minimum: Int

        init(_ name: String, default defaultValue: Int, minimum: Int = 1) {
            self.name = name
            self.defaultValue = defaultValue
            self.minimum = minimum
        }
    }

    /// The name on the command line (`mailbox-bench <name> …`) and in the `bench` field.
    let name: String
    /// One line: what is measured, and against what baseline.
    let summary: String
    /// The positional size arguments, in order.
    let parameters: [Parameter]
    /// Runs the benchmark once with one value per parameter (defaults filled in): one result
    /// per JSON line, usually one.
    let run: @Sendable (_ sizes: [Int]) throws(BenchmarkError) -> [BenchmarkResult]
    /// Why the benchmark cannot run in this environment (one line, naming what to set), or nil
    /// when it can. Asked before `run`.
    let unavailableReason: @Sendable () -> String?

    /// A benchmark that always runs and emits one line.
    init(
        _ name: String,
        summary: String,
        parameters: [Parameter],
        run: @escaping @Sendable (_ sizes: [Int]) throws(BenchmarkError) -> BenchmarkResult
    ) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.run = { sizes throws(BenchmarkError) in [try run(sizes)] }
        self.unavailableReason = { nil }
    }

    /// A benchmark that needs something `unavailableReason` checks for, and emits one line per
    /// result (for example one per payload size).
    init(
        _ name: String,
        summary: String,
        parameters: [Parameter],
        unavailableReason: @escaping @Sendable () -> String?,
        runEach: @escaping @Sendable (_ sizes: [Int]) throws(BenchmarkError) -> [BenchmarkResult]
    ) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.run = runEach
        self.unavailableReason = unavailableReason
    }

    /// `name P1 P2 …` with defaults, e.g. `mpsc [N=10000000] [PRODUCERS=2]`.
    var usage: String {
        ([name] + parameters.map { "[\($0.name)=\($0.defaultValue)]" }).joined(separator: " ")
    }

    /// Parses positional size arguments: integers (underscores allowed), at most one per
    /// parameter, each at least the parameter's minimum. Missing ones take their defaults.
    func sizes(from arguments: [String]) throws(BenchmarkError) -> [Int] {
        guard arguments.count <= parameters.count else {
            throw .badArguments("\(name) takes at most \(parameters.count) size(s): \(usage)")
        }
        var sizes = parameters.map(\.defaultValue)
        for (index, argument) in arguments.enumerated() {
            let parameter = parameters[index]
            guard let value = Int(argument.filter { $0 != "_" }) else {
                throw .badArguments("\(parameter.name) must be an integer, not '\(argument)' (usage: \(usage))")
            }
            guard value >= parameter.minimum else {
                throw .badArguments("\(parameter.name) must be at least \(parameter.minimum), not \(value) (usage: \(usage))")
            }
            sizes[index] = value
        }
        return sizes
    }
}

/// Why a benchmark did not run; the driver prints it to stderr and exits with code 2.
enum BenchmarkError: Error, CustomStringConvertible {
    /// A size argument is missing its form, out of range, or inconsistent with another.
    case badArguments(String)
    /// Something the benchmark needs outside the process is not configured or not reachable
    /// (no `MAILBOX_NATS_URL`, a server that refuses).
    case unavailable(String)

    var description: String {
        switch self {
        case .badArguments(let message): return message
        case .unavailable(let message): return message
        }
    }
}

/// What one benchmark run measured. The driver turns it into the JSON line.
struct BenchmarkResult {
    /// The time a same-process reference implementation took for the same work.
    struct Baseline {
        /// A short name of what the baseline is, e.g. `mutex-deque`.
        let name: String
        /// Its benchmark-body time, in seconds.
        let seconds: Double
    }

    /// Benchmark body only (setup and teardown excluded), monotonic clock.
    var seconds: Double
    /// Messages or events counted, if the benchmark counts them.
    var msgs: Int?
    /// The baseline measured in the same process, if any. Its `ns_per_msg` uses the same `msgs`.
    var baseline: Baseline?
    /// The benchmark's self-check (`ok: false` makes the harness mark the run failed).
    var ok: Bool?
    /// Peak resident set size of our run alone, in MiB, where the benchmark measured it before
    /// running its baseline in the same process: then `peak_rss_mb` is this, and
    /// `peak_rss_process_mb` the whole process's (baseline included).
    var peakOursMegabytes: Double?
    /// Further fields (`producers`, `note`, …), emitted after the standard ones.
    var extra: [(key: String, value: JSONValue)] = []

    init(seconds: Double, msgs: Int? = nil, baseline: Baseline? = nil, ok: Bool? = nil) {
        self.seconds = seconds
        self.msgs = msgs
        self.baseline = baseline
        self.ok = ok
    }

    /// Nanoseconds per counted message of our implementation, if messages are counted.
    var nsPerMessage: Double? {
        guard let msgs, msgs > 0 else { return nil }
        return seconds * 1e9 / Double(msgs)
    }

    /// The JSON line: `runtime`, `bench`, the timing fields, the baseline, `ok`, the extra
    /// fields, then `peak_rss_mb` and `threads` read now.
    func jsonLine(bench: String) -> JSONLine {
        var line = JSONLine()
        line.set("runtime", .string("mailbox"))
        line.set("bench", .string(bench))
        if let msgs { line.set("msgs", .int(msgs)) }
        line.set("seconds", .double(seconds, decimals: 6))
        if let msgs, msgs > 0, seconds > 0, let nsPerMessage {
            line.set("msgs_per_s", .double(Double(msgs) / seconds, decimals: 0))
            line.set("ns_per_msg", .double(nsPerMessage, decimals: 2))
        }
        if let baseline {
            line.set("baseline", .string(baseline.name))
            line.set("baseline_seconds", .double(baseline.seconds, decimals: 6))
            if let msgs, msgs > 0, let nsPerMessage, baseline.seconds > 0 {
                let baselineNs = baseline.seconds * 1e9 / Double(msgs)
                line.set("baseline_ns_per_msg", .double(baselineNs, decimals: 2))
                line.set("ratio", .double(nsPerMessage / baselineNs, decimals: 3))
            }
        }
        if let ok { line.set("ok", .bool(ok)) }
        for (key, value) in extra { line.set(key, value) }
        if let peakOursMegabytes {
            line.set("peak_rss_mb", .double(peakOursMegabytes, decimals: 1))
            if let peak = ProcessStatus.peakResidentMegabytes { line.set("peak_rss_process_mb", .double(peak, decimals: 1)) }
        } else if let peak = ProcessStatus.peakResidentMegabytes {
            line.set("peak_rss_mb", .double(peak, decimals: 1))
        }
        if let threads = ProcessStatus.threads { line.set("threads", .int(threads)) }
        return line
    }
}
