import Dispatch
import Mailbox
import MailboxCluster
import MailboxNATS
import Synchronization

// Cluster benchmarks (MailboxCluster) against a running nats-server: two nodes (two connections)
// in this process, so both sides are measured on the same machine in the same run.
//
//   cluster-tell  N  N remote tells of a 64-byte message from a node to an actor on another,
//                    with the JSON codec and with a binary codec (one line each); the sender
//                    uses `send` (it waits while the window is full, so nothing is dropped);
//                    msgs_per_s = N / (last received - first sent). Baseline: our own raw NATS
//                    pub→sub of 64-byte payloads between two connections (`oursPubSub`), in
//                    alternating rounds. `ratio` = remote tells/s ÷ raw messages/s (issue #24's
//                    targets: ≥ 0.5 binary, ≥ 0.25 JSON).
//   cluster-ask   N  N sequential asks (64-byte question and answer, binary codec) after 100
//                    unmeasured: p50/p99 µs. Baseline: a raw NATS request of 64 bytes
//                    (`oursRequest`). `ratio` = ask p50 ÷ raw request p50.
//   cluster-watch N  N times: a node with a watched actor loses its connection (what NATS sees
//                    of a SIGKILL); time until the watch fires on the other node, p50/max ms.
//   cluster-listing N  N registrations on one of three nodes; time until the other two list
//                    the actor: p50/p99 ms (issue #24's target: p99 ≤ 500 ms).
//
// All need MAILBOX_NATS_URL (`bash Tests/Integration/nats/bench.sh` starts a server).

extension BenchmarkRegistry {
    static let cluster: [Benchmark] = [
        Benchmark(
            "cluster-tell",
            summary: "64 B remote tells between two nodes, JSON and binary codecs, msgs/s; baseline: raw NATS pub→sub of 64 B, same server",
            parameters: [.init("N", default: 200_000)],
            unavailableReason: natsUnavailableReason
        ) { sizes throws(BenchmarkError) in
            try clusterTell(count: sizes[0])
        },
        Benchmark(
            "cluster-ask",
            summary: "64 B sequential remote asks, p50/p99 µs; baseline: raw NATS request of 64 B, same server",
            parameters: [.init("N", default: 10_000)],
            unavailableReason: natsUnavailableReason
        ) { sizes throws(BenchmarkError) in
            try clusterAsk(count: sizes[0])
        },
        Benchmark(
            "cluster-watch",
            summary: "a watched node's connection drops: time until the remote watch fires, p50/max ms",
            parameters: [.init("N", default: 5)],
            unavailableReason: natsUnavailableReason
        ) { sizes throws(BenchmarkError) in
            try clusterWatch(rounds: sizes[0])
        },
        Benchmark(
            "cluster-listing",
            summary: "registrations on one of three nodes until listed on the other two, p50/p99 ms",
            parameters: [.init("N", default: 200)],
            unavailableReason: natsUnavailableReason
        ) { sizes throws(BenchmarkError) in
            try clusterListing(count: sizes[0])
        },
    ]
}

/// 64 bytes of text, serialized as JSON.
struct BenchJSONBlob: Codable, Sendable {
    var text: String
}

/// 64 bytes of text, serialized by `BenchBlobCodec`.
struct BenchBinaryBlob: Codable, Sendable {
    var text: String
}

/// The text's bytes, nothing else.
struct BenchBlobCodec: ClusterMessageCodec {
    func encode(_ message: BenchBinaryBlob, context: ClusterCodingContext) throws -> [UInt8] { Array(message.text.utf8) }
    func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> BenchBinaryBlob {
        BenchBinaryBlob(text: String(decoding: bytes, as: UTF8.self))
    }
}

/// A question with a reply ref, binary: the 64 bytes, then the reply address.
struct BenchQuestion: Codable, Sendable {
    var text: String
    var replyTo: ActorRef<BenchBinaryBlob>
}

struct BenchQuestionCodec: ClusterMessageCodec {
    func encode(_ message: BenchQuestion, context: ClusterCodingContext) throws -> [UInt8] {
        Array(message.text.utf8) + [0] + Array(context.encode(message.replyTo).utf8)
    }

    func decode(_ bytes: ArraySlice<UInt8>, version: Int, context: ClusterCodingContext) throws -> BenchQuestion {
        guard let zero = bytes.firstIndex(of: 0) else { throw BenchDecodingError() }
        return BenchQuestion(
            text: String(decoding: bytes[..<zero], as: UTF8.self),
            replyTo: try context.decodeRef(BenchBinaryBlob.self, from: String(decoding: bytes[(zero + 1)...], as: UTF8.self)))
    }
}

/// A question without its separator.
struct BenchDecodingError: Error {}

let benchText = String(repeating: "m", count: 64)

/// Two (or more) nodes of a fresh cluster on `url`, each with its own system and connection.
func benchCluster(url: String, nodes count: Int) async throws -> [ClusterSystem] {
    let name = "bench\(UInt32.random(in: 0...UInt32.max))"
    var clusters: [ClusterSystem] = []
    for index in 0..<count {
        var configuration = ClusterConfiguration(nodeName: "n\(index)", nats: url)
        configuration.clusterName = name
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.probeAfter = .milliseconds(250)
        configuration.goneAfter = .milliseconds(200)
        configuration.settle = .zero
        configuration.codecs.register(BenchBinaryBlob.self, manifest: "BenchBlob", codec: BenchBlobCodec())
        configuration.codecs.register(BenchQuestion.self, manifest: "BenchQuestion", codec: BenchQuestionCodec())
        clusters.append(try await ClusterSystem.join(ActorSystem(name: "bench"), configuration))
    }
    // Everyone sees everyone.
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline, !clusters.allSatisfy({ $0.members.value.filter { $0.status == .up }.count == count }) {
        try await Task.sleep(for: .milliseconds(10))
    }
    return clusters
}

func leave(_ clusters: [ClusterSystem]) async {
    for cluster in clusters {
        await cluster.leave()
        _ = await cluster.system.shutdown()
    }
}

/// Runs `body`, turning any error into a failed sample.
func clusterSample(_ name: String, _ body: @escaping @Sendable () async throws -> NATSSample) -> NATSSample {
    runBlocking {
        do {
            return try await body()
        } catch {
            printDiagnostic("\(name): \(error)")
            return NATSSample(seconds: .nan, msgsPerSecond: .nan, ok: false)
        }
    }
}

/// Waits until `arrivals` has all, polling (the arrival time is taken by the receiving actor).
func waitForArrivals(_ arrivals: NATSArrivals) async -> UInt64 {
    let deadline = ContinuousClock.now + natsRunTimeout
    while arrivals.completedAt.load(ordering: .acquiring) == 0 && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(1))
    }
    return arrivals.completedAt.load(ordering: .acquiring)
}

// MARK: - cluster-tell

func clusterTellRun<Blob: Codable & Sendable>(url: String, count: Int, make: @escaping @Sendable (String) -> Blob) async throws -> NATSSample {
    let clusters = try await benchCluster(url: url, nodes: 2)
    let arrivals = NATSArrivals(expected: count)
    let sink = try clusters[1].system.spawn(Behavior<Blob>.receiveMessage { _ in
        arrivals.arrived()
        return .same
    }, name: "sink")
    let remote = clusters[0].resolve(clusters[1].address(of: sink), as: Blob.self)
    let blob = make(benchText)
    let start = MonotonicClock.nanoseconds()
    for _ in 0..<count { try await remote.send(blob) }
    let end = await waitForArrivals(arrivals)
    await leave(clusters)
    guard end != 0 else {
        printDiagnostic("cluster-tell: received \(arrivals.received.load(ordering: .relaxed)) of \(count)")
        return NATSSample(seconds: .nan, msgsPerSecond: .nan, ok: false)
    }
    let seconds = Double(end - start) / 1e9
    return NATSSample(seconds: seconds, msgsPerSecond: Double(count) / seconds, ok: true)
}

func clusterTell(count: Int) throws(BenchmarkError) -> [BenchmarkResult] {
    guard let url = ServerCPU.environment("MAILBOX_NATS_URL") else { throw .unavailable(natsUnavailableReason() ?? "") }
    var results: [BenchmarkResult] = []
    // MAILBOX_BENCH_CODECS=binary (or json) runs one codec only, for profiling.
    let codecs = ServerCPU.environment("MAILBOX_BENCH_CODECS")?.split(separator: ",").map(String.init) ?? ["json", "binary"]
    for codec in codecs {
        var ours: [NATSSample] = [], raw: [NATSSample] = []
        for _ in 0..<comparisonRounds {
            ours.append(clusterSample("cluster-tell") {
                codec == "json"
                    ? try await clusterTellRun(url: url, count: count) { BenchJSONBlob(text: $0) }
                    : try await clusterTellRun(url: url, count: count) { BenchBinaryBlob(text: $0) }
            })
            raw.append(clusterSample("cluster-tell raw") { try await oursPubSub(url: url, payload: 64, count: count) })
        }
        let good = ours.filter(\.ok), goodRaw = raw.filter(\.ok)
        var result = BenchmarkResult(seconds: good.isEmpty ? .nan : median(good.map(\.seconds)), msgs: count, ok: good.count == ours.count && goodRaw.count == raw.count)
        let rate = good.isEmpty ? nil : median(good.map(\.msgsPerSecond))
        let rawRate = goodRaw.isEmpty ? nil : median(goodRaw.map(\.msgsPerSecond))
        result.extra.append(("codec", .string(codec)))
        result.extra.append(("payload", .int(64)))
        result.extra.append(("baseline", .string("raw NATS pub→sub (MailboxNATS)")))
        result.extra.append(("rounds", .int(comparisonRounds)))
        result.extra.append(("baseline_msgs_per_s", jsonNumber(rawRate, decimals: 0)))
        result.extra.append(("ratio", jsonNumber(rate.flatMap { ours in rawRate.map { ours / $0 } }, decimals: 3)))
        result.extra.append(("ratio_of", .string("msgs_per_s")))
        results.append(result)
    }
    return results
}

// MARK: - cluster-ask

func clusterAskRun(url: String, count: Int) async throws -> NATSSample {
    let clusters = try await benchCluster(url: url, nodes: 2)
    let answerer = try clusters[1].system.spawn(Behavior<BenchQuestion>.receiveMessage { question in
        question.replyTo.tell(BenchBinaryBlob(text: question.text))
        return .same
    }, name: "answerer")
    let remote = clusters[0].resolve(clusters[1].address(of: answerer), as: BenchQuestion.self)
    for _ in 0..<100 { _ = try await remote.ask(timeout: .seconds(10)) { BenchQuestion(text: benchText, replyTo: $0) } }
    var latencies = [UInt64](repeating: 0, count: count)
    var ok = true
    let start = MonotonicClock.nanoseconds()
    for index in 0..<count {
        let sent = MonotonicClock.nanoseconds()
        let answer = try await remote.ask(timeout: .seconds(10)) { BenchQuestion(text: benchText, replyTo: $0) }
        latencies[index] = MonotonicClock.nanoseconds() - sent
        if answer.text.utf8.count != 64 { ok = false }
    }
    let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
    await leave(clusters)
    latencies.sort()
    func percentile(_ p: Double) -> Double { Double(latencies[Int(p * Double(count - 1))]) / 1_000 }
    return NATSSample(seconds: seconds, msgsPerSecond: Double(count) / seconds, p50Microseconds: percentile(0.5), p99Microseconds: percentile(0.99), ok: ok)
}

func clusterAsk(count: Int) throws(BenchmarkError) -> [BenchmarkResult] {
    guard let url = ServerCPU.environment("MAILBOX_NATS_URL") else { throw .unavailable(natsUnavailableReason() ?? "") }
    var ours: [NATSSample] = [], raw: [NATSSample] = []
    for _ in 0..<comparisonRounds {
        ours.append(clusterSample("cluster-ask") { try await clusterAskRun(url: url, count: count) })
        raw.append(clusterSample("cluster-ask raw") { try await oursRequest(url: url, payload: 64, count: count) })
    }
    let good = ours.filter(\.ok)
    var result = BenchmarkResult(seconds: good.isEmpty ? .nan : median(good.map(\.seconds)), msgs: count, ok: good.count == ours.count && raw.allSatisfy(\.ok))
    let p50 = medianOfPresent(good.map(\.p50Microseconds)), rawP50 = medianOfPresent(raw.map(\.p50Microseconds))
    result.extra.append(("payload", .int(64)))
    result.extra.append(("baseline", .string("raw NATS request (MailboxNATS)")))
    result.extra.append(("rounds", .int(comparisonRounds)))
    result.extra.append(("p50_us", jsonNumber(p50, decimals: 1)))
    result.extra.append(("p99_us", jsonNumber(medianOfPresent(good.map(\.p99Microseconds)), decimals: 1)))
    result.extra.append(("baseline_p50_us", jsonNumber(rawP50, decimals: 1)))
    result.extra.append(("baseline_p99_us", jsonNumber(medianOfPresent(raw.map(\.p99Microseconds)), decimals: 1)))
    result.extra.append(("ratio", jsonNumber(p50.flatMap { ours in rawP50.map { ours / $0 } }, decimals: 3)))
    result.extra.append(("ratio_of", .string("p50_us")))
    return [result]
}

// MARK: - cluster-watch

func clusterWatch(rounds: Int) throws(BenchmarkError) -> [BenchmarkResult] {
    guard let url = ServerCPU.environment("MAILBOX_NATS_URL") else { throw .unavailable(natsUnavailableReason() ?? "") }
    var times: [Double] = []
    for _ in 0..<rounds {
        let sample = clusterSample("cluster-watch") {
            let clusters = try await benchCluster(url: url, nodes: 2)
            let watched = try clusters[1].system.spawn(Behavior<BenchBinaryBlob>.ignore, name: "watched")
            let remote = clusters[0].resolve(clusters[1].address(of: watched), as: BenchBinaryBlob.self)
            let fired = Atomic<UInt64>(0)
            remote.onTermination { _ in fired.store(MonotonicClock.nanoseconds(), ordering: .releasing) }
            try await Task.sleep(for: .milliseconds(200))  // the watch has reached the other node
            let start = MonotonicClock.nanoseconds()
            clusters[1].connection.close()  // what NATS sees of a killed process
            let deadline = ContinuousClock.now + .seconds(30)
            while fired.load(ordering: .acquiring) == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            let end = fired.load(ordering: .acquiring)
            await leave([clusters[0]])
            _ = await clusters[1].system.shutdown()
            guard end != 0 else { return NATSSample(seconds: .nan, msgsPerSecond: .nan, ok: false) }
            return NATSSample(seconds: Double(end - start) / 1e9, msgsPerSecond: 0, ok: true)
        }
        times.append(sample.ok ? sample.seconds : .nan)
    }
    let good = times.filter { !$0.isNaN }
    var result = BenchmarkResult(seconds: good.isEmpty ? .nan : median(good), msgs: nil, ok: good.count == times.count)
    result.extra.append(("p50_ms", .double((good.isEmpty ? .nan : median(good)) * 1000, decimals: 1)))
    result.extra.append(("max_ms", .double((good.max() ?? .nan) * 1000, decimals: 1)))
    result.extra.append(("target_ms", .int(1000)))
    return [result]
}

// MARK: - cluster-listing

func clusterListing(count: Int) throws(BenchmarkError) -> [BenchmarkResult] {
    guard let url = ServerCPU.environment("MAILBOX_NATS_URL") else { throw .unavailable(natsUnavailableReason() ?? "") }
    let sample = runBlocking { () -> [Double]? in
        do {
            let clusters = try await benchCluster(url: url, nodes: 3)
            let key = ServiceKey<BenchBinaryBlob>("listing")
            let listings = clusters.dropFirst().map { $0.receptionist.listing(for: key) }
            var times: [Double] = []
            for index in 0..<count {
                let actor = try clusters[0].system.spawn(Behavior<BenchBinaryBlob>.ignore, name: "a\(index)")
                let start = MonotonicClock.nanoseconds()
                clusters[0].receptionist.register(actor, with: key)
                let deadline = ContinuousClock.now + .seconds(10)
                while !listings.allSatisfy({ $0.value.count == index + 1 }) && ContinuousClock.now < deadline {
                    await Task.yield()
                }
                times.append(Double(MonotonicClock.nanoseconds() - start) / 1e6)
            }
            await leave(clusters)
            return times
        } catch {
            printDiagnostic("cluster-listing: \(error)")
            return nil
        }
    }
    guard var times = sample else { return [BenchmarkResult(seconds: .nan, msgs: count, ok: false)] }
    times.sort()
    var result = BenchmarkResult(seconds: times.reduce(0, +) / 1000, msgs: count, ok: true)
    result.extra.append(("p50_ms", .double(times[times.count / 2], decimals: 2)))
    result.extra.append(("p99_ms", .double(times[Int(0.99 * Double(times.count - 1))], decimals: 2)))
    result.extra.append(("target_p99_ms", .int(500)))
    return [result]
}
