import Dispatch
import Mailbox
import MailboxNATS
import Synchronization

// NATS client benchmarks (MailboxNATS) against a running nats-server, with nats.go as the
// reference, for payloads of 16 and 256 bytes (one JSON line per payload size):
//
//   nats-pubsub   N  publish-only: one connection publishes N messages, then flushes (PING →
//                    PONG): msgs_per_s = N / (flush returned - first publish);
//                    pub→sub: a publishing and a subscribed connection; the run ends when the
//                    subscriber has all N: msgs_per_s = N / (last received - first publish)
//   nats-request  N  N sequential requests (after 100 unmeasured) from one connection to a
//                    responder on another that echoes the payload: p50/p99 round trip in µs,
//                    requests per second
//
// The reference is the Go program `nats-gobench` (`GoReference`): same server, same N and payload,
// the same definitions of the figures. It runs as a child process, alternating with ours (ours,
// nats.go, ours, nats.go, ...: `comparisonRounds` each, medians), so drifting load hits both.
//
//   ratio      pub→sub and publish-only (`pub_ratio`): ours / nats.go in messages per second
//              (higher is better; target ≥ 0.8); request: our p50 / nats.go's p50 (lower is
//              better; target ≤ 1.2). `ratio_of` names the quantity.
//   server_cpu_s_per_m_msgs (request: `…_per_m_requests`, a request and its reply)
//              seconds of nats-server CPU per million messages, over each whole run (connect to
//              close) on both sides (`ServerCPU`; null without MAILBOX_NATS_PID_FILE or
//              MAILBOX_NATS_MONITOR_URL).
//
// Both need MAILBOX_NATS_URL: `all` skips them without it; `bash Tests/Integration/nats/bench.sh`
// builds everything, starts a server and runs both.

extension BenchmarkRegistry {
    static let nats: [Benchmark] = [
        Benchmark(
            "nats-pubsub",
            summary: "16 and 256 B: N publications (publish-only), and N through a server to a subscribed connection (pub→sub), msgs/s and server CPU; baseline: nats.go, same server",
            parameters: [.init("N", default: 1_000_000)],
            unavailableReason: natsUnavailableReason
        ) { sizes throws(BenchmarkError) in
            try natsPubSub(count: sizes[0])
        },
        Benchmark(
            "nats-request",
            summary: "16 and 256 B: N sequential requests to a responder connection, p50/p99 µs, req/s and server CPU; baseline: nats.go, same server",
            parameters: [.init("N", default: 20_000)],
            unavailableReason: natsUnavailableReason
        ) { sizes throws(BenchmarkError) in
            try natsRequest(count: sizes[0])
        },
    ]
}

/// The payload sizes every NATS benchmark runs, in bytes.
let natsPayloadSizes = [16, 256]

@Sendable func natsUnavailableReason() -> String? {
    guard ServerCPU.environment("MAILBOX_NATS_URL") == nil else { return nil }
    return "needs a NATS server: set MAILBOX_NATS_URL (bash Tests/Integration/nats/bench.sh starts one and runs the NATS benchmarks)"
}

/// The longest a flush, a request or a whole pub→sub run may take before the run counts as failed.
let natsRunTimeout: Duration = .seconds(60)

// MARK: - One run, either side

/// What one run of one mode measured, ours or nats.go's.
struct NATSSample: Sendable {
    var seconds: Double
    var msgsPerSecond: Double
    var p50Microseconds: Double?
    var p99Microseconds: Double?
    /// nats-server CPU over the whole run (connect to close), nil when unknown.
    var serverCPUSeconds: Double?
    /// The self-check: every message arrived, every reply was right.
    var ok: Bool
}

/// The environment the NATS benchmarks run in: the server, its CPU, the reference.
struct NATSBenchEnvironment {
    let url: String
    let cpu: ServerCPU.Source?
    let reference: GoReference?
    /// Why there is no reference or why one of its runs failed; the line's `note`.
    var notes: [String] = []

    init() throws(BenchmarkError) {
        guard let url = ServerCPU.environment("MAILBOX_NATS_URL") else {
            throw .unavailable(natsUnavailableReason() ?? "MAILBOX_NATS_URL is not set")
        }
        self.url = url
        cpu = ServerCPU.sourceFromEnvironment()
        let (reference, note) = GoReference.fromEnvironment(url: url)
        self.reference = reference
        if let note { notes.append(note) }
        if cpu == nil { notes.append("no server CPU: set MAILBOX_NATS_PID_FILE or MAILBOX_NATS_MONITOR_URL") }
    }

    /// One run of ours: `body` connects, measures and closes; the server CPU is taken around it.
    func ours(_ body: @escaping @Sendable (String) async throws(NATSError) -> NATSSample) throws(BenchmarkError) -> NATSSample {
        let url = self.url
        let (serverSeconds, result) = ServerCPU.measure(cpu) {
            runBlocking { () async -> Result<NATSSample, NATSError> in
                do throws(NATSError) {
                    return .success(try await body(url))
                } catch {
                    return .failure(error)
                }
            }
        }
        switch result {
        case .success(var sample):
            sample.serverCPUSeconds = serverSeconds
            return sample
        case .failure(let error):
            throw .unavailable("MailboxNATS against \(url): \(error)")
        }
    }

    /// One run of the reference, or nil (with a note) when there is none or it failed.
    mutating func reference(_ mode: GoReference.Mode, payload: Int, count: Int) -> NATSSample? {
        guard let reference else { return nil }
        let (serverSeconds, result) = ServerCPU.measure(cpu) { reference.run(mode, payload: payload, count: count) }
        switch result {
        case .success(let line):
            return NATSSample(
                seconds: line.seconds, msgsPerSecond: line.msgsPerSec, p50Microseconds: line.p50us,
                p99Microseconds: line.p99us, serverCPUSeconds: serverSeconds, ok: true)
        case .failure(let error):
            if !notes.contains(error.description) { notes.append(error.description) }
            return nil
        }
    }

    /// Fields every NATS line has: the baseline's name, the CPU source, the notes.
    func commonFields(into result: inout BenchmarkResult, payload: Int) {
        result.extra.append(("payload", .int(payload)))
        result.extra.append(("baseline", .string(reference == nil ? "none" : "nats.go")))
        result.extra.append(("rounds", .int(comparisonRounds)))
        result.extra.append(("server_cpu_source", cpu.map { .string($0.name) } ?? .string("none")))
        if !notes.isEmpty { result.extra.append(("note", .string(notes.joined(separator: "; ")))) }
    }
}

/// The median of the values that are there, or nil when none is.
func medianOfPresent(_ values: [Double?]) -> Double? {
    let present = values.compactMap { $0 }
    return present.isEmpty ? nil : median(present)
}

/// A JSON number, or null for nil.
func jsonNumber(_ value: Double?, decimals: Int) -> JSONValue {
    .double(value ?? .nan, decimals: decimals)
}

/// Server CPU seconds per million of `count` messages (null when unknown).
func perMillion(_ seconds: Double?, count: Int) -> Double? {
    seconds.map { $0 * 1e6 / Double(count) }
}

// MARK: - Ours

/// Publishes `count` copies of `payload`; when the outbound buffer is full, flushes and retries.
func publishAll(_ connection: NATSConnection, count: Int, payload: [UInt8], subject: String) async throws(NATSError) {
    var sent = 0
    while sent < count {
        do throws(NATSError) {
            try connection.publish(payload, to: subject)
            sent += 1
        } catch where error.code == .outboundBufferExceeded {
            try await connection.flush(timeout: natsRunTimeout)
        }
    }
}

func oursPublishOnly(url: String, payload: Int, count: Int) async throws(NATSError) -> NATSSample {
    let connection = try await NATSConnection.connect(to: url)
    defer { connection.close() }
    let bytes = [UInt8](repeating: 0x61, count: payload)
    let start = MonotonicClock.nanoseconds()
    try await publishAll(connection, count: count, payload: bytes, subject: "bench.pub.\(payload)")
    try await connection.flush(timeout: natsRunTimeout)
    let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
    return NATSSample(seconds: seconds, msgsPerSecond: Double(count) / seconds, ok: true)
}

/// Counts a subscription's messages on the read thread and notes when the last one came.
final class NATSArrivals: Sendable {
    let received = Atomic<Int>(0)
    /// `MonotonicClock` nanoseconds of the `expected`-th arrival, 0 before.
    let completedAt = Atomic<UInt64>(0)
    let expected: Int

    init(expected: Int) { self.expected = expected }

    func arrived() {
        if received.wrappingAdd(1, ordering: .relaxed).newValue == expected {
            completedAt.store(MonotonicClock.nanoseconds(), ordering: .releasing)
        }
    }
}

func oursPubSub(url: String, payload: Int, count: Int) async throws(NATSError) -> NATSSample {
    let publisher = try await NATSConnection.connect(to: url)
    defer { publisher.close() }
    let subscriber = try await NATSConnection.connect(to: url)
    defer { subscriber.close() }
    let subject = "bench.pubsub.\(payload)"
    let arrivals = NATSArrivals(expected: count)
    try subscriber.subscribe(to: subject) { _ in arrivals.arrived() }
    try await subscriber.flush(timeout: natsRunTimeout)  // the server has the subscription
    let bytes = [UInt8](repeating: 0x61, count: payload)
    let start = MonotonicClock.nanoseconds()
    try await publishAll(publisher, count: count, payload: bytes, subject: subject)
    try await publisher.flush(timeout: natsRunTimeout)
    // The arrival time is taken on the read thread; this wait only polls for it.
    let deadline = ContinuousClock.now + natsRunTimeout
    while arrivals.completedAt.load(ordering: .acquiring) == 0 && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
    let end = arrivals.completedAt.load(ordering: .acquiring)
    guard end != 0 else {
        printDiagnostic("nats-pubsub: received \(arrivals.received.load(ordering: .relaxed)) of \(count) within \(natsRunTimeout)")
        return NATSSample(seconds: .nan, msgsPerSecond: .nan, ok: false)
    }
    let seconds = Double(end - start) / 1e9
    return NATSSample(seconds: seconds, msgsPerSecond: Double(count) / seconds, ok: true)
}

/// Counts the responder's failed replies.
final class NATSFailures: Sendable {
    let count = Atomic<Int>(0)
}

func oursRequest(url: String, payload: Int, count: Int) async throws(NATSError) -> NATSSample {
    let responder = try await NATSConnection.connect(to: url)
    defer { responder.close() }
    let requester = try await NATSConnection.connect(to: url)
    defer { requester.close() }
    let subject = "bench.request.\(payload)"
    let failures = NATSFailures()
    try responder.subscribe(to: subject) { message in
        do throws(NATSError) {
            try responder.respond(to: message, with: message.payload)
        } catch {
            if failures.count.wrappingAdd(1, ordering: .relaxed).newValue == 1 {
                printDiagnostic("nats-request: respond: \(error)")
            }
        }
    }
    try await responder.flush(timeout: natsRunTimeout)
    let bytes = [UInt8](repeating: 0x61, count: payload)
    for _ in 0..<100 {  // warm-up, as nats-gobench: the inbox subscription, the caches
        _ = try await requester.request(bytes, to: subject, timeout: natsRunTimeout)
    }
    var latencies = [UInt64](repeating: 0, count: count)
    var ok = true
    let start = MonotonicClock.nanoseconds()
    for index in 0..<count {
        let sent = MonotonicClock.nanoseconds()
        let reply = try await requester.request(bytes, to: subject, timeout: natsRunTimeout)
        latencies[index] = MonotonicClock.nanoseconds() - sent
        if reply.payload.count != payload { ok = false }
    }
    let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
    latencies.sort()
    // The same percentile as nats-gobench: the element at p × (n - 1).
    func percentile(_ p: Double) -> Double { Double(latencies[Int(p * Double(count - 1))]) / 1_000 }
    return NATSSample(
        seconds: seconds, msgsPerSecond: Double(count) / seconds,
        p50Microseconds: percentile(0.50), p99Microseconds: percentile(0.99),
        ok: ok && failures.count.load(ordering: .relaxed) == 0)
}

// MARK: - nats-pubsub

func natsPubSub(count: Int) throws(BenchmarkError) -> [BenchmarkResult] {
    var environment = try NATSBenchEnvironment()
    var results: [BenchmarkResult] = []
    for payload in natsPayloadSizes {
        var oursPub: [NATSSample] = [], theirsPub: [NATSSample?] = []
        var oursSub: [NATSSample] = [], theirsSub: [NATSSample?] = []
        for _ in 0..<comparisonRounds {
            oursPub.append(try environment.ours { url throws(NATSError) in try await oursPublishOnly(url: url, payload: payload, count: count) })
            theirsPub.append(environment.reference(.pub, payload: payload, count: count))
            oursSub.append(try environment.ours { url throws(NATSError) in try await oursPubSub(url: url, payload: payload, count: count) })
            theirsSub.append(environment.reference(.pubsub, payload: payload, count: count))
        }
        let ok = (oursPub + oursSub).allSatisfy(\.ok)
        let goodSub = oursSub.filter(\.ok)
        var result = BenchmarkResult(seconds: median(goodSub.map(\.seconds)), msgs: count, ok: ok)
        environment.commonFields(into: &result, payload: payload)

        let subRate = goodSub.isEmpty ? nil : median(goodSub.map(\.msgsPerSecond))
        let theirSubRate = medianOfPresent(theirsSub.map { $0?.msgsPerSecond })
        result.extra.append(("baseline_msgs_per_s", jsonNumber(theirSubRate, decimals: 0)))
        result.extra.append(("ratio", jsonNumber(subRate.flatMap { ours in theirSubRate.map { ours / $0 } }, decimals: 3)))
        result.extra.append(("ratio_of", .string("msgs_per_s")))

        let pubRate = median(oursPub.map(\.msgsPerSecond))
        let theirPubRate = medianOfPresent(theirsPub.map { $0?.msgsPerSecond })
        result.extra.append(("pub_msgs_per_s", .double(pubRate, decimals: 0)))
        result.extra.append(("pub_baseline_msgs_per_s", jsonNumber(theirPubRate, decimals: 0)))
        result.extra.append(("pub_ratio", jsonNumber(theirPubRate.map { pubRate / $0 }, decimals: 3)))

        let cpu = { (samples: [NATSSample?]) in perMillion(medianOfPresent(samples.map { $0?.serverCPUSeconds }), count: count) }
        result.extra.append(("server_cpu_s_per_m_msgs", jsonNumber(cpu(oursSub), decimals: 3)))
        result.extra.append(("baseline_server_cpu_s_per_m_msgs", jsonNumber(cpu(theirsSub), decimals: 3)))
        result.extra.append(("pub_server_cpu_s_per_m_msgs", jsonNumber(cpu(oursPub), decimals: 3)))
        result.extra.append(("pub_baseline_server_cpu_s_per_m_msgs", jsonNumber(cpu(theirsPub), decimals: 3)))
        results.append(result)
    }
    return results
}

// MARK: - nats-request

func natsRequest(count: Int) throws(BenchmarkError) -> [BenchmarkResult] {
    var environment = try NATSBenchEnvironment()
    var results: [BenchmarkResult] = []
    for payload in natsPayloadSizes {
        var ours: [NATSSample] = [], theirs: [NATSSample?] = []
        for _ in 0..<comparisonRounds {
            ours.append(try environment.ours { url throws(NATSError) in try await oursRequest(url: url, payload: payload, count: count) })
            theirs.append(environment.reference(.request, payload: payload, count: count))
        }
        var result = BenchmarkResult(seconds: median(ours.map(\.seconds)), msgs: count, ok: ours.allSatisfy(\.ok))
        environment.commonFields(into: &result, payload: payload)

        let p50 = medianOfPresent(ours.map(\.p50Microseconds))
        let theirP50 = medianOfPresent(theirs.map { $0?.p50Microseconds })
        result.extra.append(("p50_us", jsonNumber(p50, decimals: 1)))
        result.extra.append(("p99_us", jsonNumber(medianOfPresent(ours.map(\.p99Microseconds)), decimals: 1)))
        result.extra.append(("baseline_p50_us", jsonNumber(theirP50, decimals: 1)))
        result.extra.append(("baseline_p99_us", jsonNumber(medianOfPresent(theirs.map { $0?.p99Microseconds }), decimals: 1)))
        result.extra.append(("baseline_msgs_per_s", jsonNumber(medianOfPresent(theirs.map { $0?.msgsPerSecond }), decimals: 0)))
        result.extra.append(("ratio", jsonNumber(p50.flatMap { ours in theirP50.map { ours / $0 } }, decimals: 3)))
        result.extra.append(("ratio_of", .string("p50_us")))

        let cpu = { (samples: [NATSSample?]) in perMillion(medianOfPresent(samples.map { $0?.serverCPUSeconds }), count: count) }
        result.extra.append(("server_cpu_s_per_m_requests", jsonNumber(cpu(ours), decimals: 3)))
        result.extra.append(("baseline_server_cpu_s_per_m_requests", jsonNumber(cpu(theirs), decimals: 3)))
        results.append(result)
    }
    return results
}
